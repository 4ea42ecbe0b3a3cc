package io.boxline.internal;

import io.boxline.BatchHandler;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.GroupPolicy;
import io.boxline.PartitionListener;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.TransactionalHandler;
import io.boxline.spi.Backlog;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One member of a subscription's consumer group.
 *
 * <ul>
 *   <li>{@code boxline-group-<id>} checks in with the coordination store (heartbeat + view of
 *       members and leases in one round trip), reclaims leases of dead members, and moves toward
 *       its fair share: releases excess leases gracefully, acquires unleased active partitions.
 *       Every acquired lease's epoch is copied onto the partition's cursor before delivery starts
 *       (fencing).
 *   <li>{@code boxline-consumer-<id>} dispatches leased partitions that have a backlog to workers.
 *   <li>{@code boxline-worker-<id>-N} drain one partition at a time: read after the cursor, handle,
 *       commit the cursor with the lease epoch.
 * </ul>
 */
final class DefaultConsumer implements Consumer, WakeupListener, ConsumerContext.Host {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /**
   * Every this many check-ins the full backlog is read again even if nothing changed (and the
   * policy too, with a store that does not report a policy stamp).
   */
  private static final int RESYNC_EVERY = 10;

  private static final long READ_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final int BATCHES_PER_TURN = 4;

  private static final long MAX_READ_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** Settings of one consumer, validated by the builder. */
  record Settings(
      String id,
      double weight,
      EventHandler handler,
      BatchHandler batchHandler,
      TransactionalHandler txHandler,
      PartitionListener listener,
      int batchSize,
      int concurrency,
      Duration shutdownTimeout,
      RetryPolicy retryPolicy,
      Map<String, RetryPolicy> typePolicies,
      boolean deadLetterBlocksKey,
      ConsumerHooks hooks,
      java.util.function.Function<Event, String> inboxKey,
      boolean onCommittingThread,
      Observers observers,
      java.time.Clock clock) {}

  private final Store store;
  private final CoordinationStore coordination;
  private final TopicCache topics;
  private final WakeupBus bus;
  private final RecentEvents recent;
  private final SubscriptionInfo subscription;
  private final ConsumerContext ctx;
  private final PlainDelivery plain;
  private final TransactionalDelivery transactional;
  private final RetryPass retries;
  private final Settings s;
  private final String id;
  private final String group;
  private final Set<Long> topicIds = new HashSet<>();
  private final Runnable onClose;

  private final Map<PartitionKey, LeasedPartition> held = new ConcurrentHashMap<>();

  /** Last sequence of partitions known to have a backlog that this member does not hold. */
  private final Map<PartitionKey, Long> backlog = new ConcurrentHashMap<>();

  private final ConcurrentLinkedQueue<PartitionKey> pickups = new ConcurrentLinkedQueue<>();
  private final Signal dispatchSignal = new Signal();
  private java.util.concurrent.Semaphore freeWorkers;
  private int rotation;
  private final Signal groupSignal = new Signal();
  private final CountDownLatch stopLatch = new CountDownLatch(1);
  private final AtomicLong lost = new AtomicLong();
  private final AtomicLong checkIns = new AtomicLong();
  private final AtomicLong onCommittingThread = new AtomicLong();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean stopping;
  private volatile boolean abandoned;
  private volatile boolean resync = true;
  private volatile GroupPolicy policy = GroupPolicy.DEFAULT;
  private volatile List<Member> members = List.of();
  private volatile Map<PartitionKey, Lease> leases = Map.of();
  private Set<String> lastShape = Set.of();
  private long intervalOfWrittenDeadlineNanos = Long.MAX_VALUE;
  private long policyStamp = GroupView.NO_POLICY_STAMP;
  private boolean storeStampsPolicies;
  private Thread groupThread;
  private Thread dispatcher;
  private ExecutorService workers;

  DefaultConsumer(
      Store store,
      CoordinationStore coordination,
      TopicCache topics,
      WakeupBus bus,
      RecentEvents recent,
      SubscriptionInfo subscription,
      Settings settings,
      AtomicLong commitCalls,
      AtomicLong commitMoves,
      Runnable onClose) {
    this.store = store;
    // A transactional handler commits its cursor inside its own transaction, where the check that
    // handed-over events are still in the log is not made; it always reads from the log.
    this.recent = settings.txHandler() == null ? recent : null;
    this.coordination = coordination;
    this.topics = topics;
    this.bus = bus;
    this.subscription = subscription;
    this.s = settings;
    this.ctx =
        new ConsumerContext(
            store,
            settings,
            subscription,
            this.recent,
            new CursorCommitter(
                moves -> store.commitCursors(subscription.id(), moves), commitCalls, commitMoves),
            this);
    this.plain = new PlainDelivery(ctx);
    this.transactional = new TransactionalDelivery(ctx);
    this.retries = new RetryPass(ctx, plain, transactional);
    this.id = settings.id();
    this.group = subscription.name();
    this.onClose = onClose;
    for (TopicName t : subscription.topics()) {
      topicIds.add(topics.get(t).id());
    }
  }

  @Override
  public Consumer start() {
    if (!started.compareAndSet(false, true)) {
      return this;
    }
    AtomicInteger n = new AtomicInteger();
    freeWorkers = new java.util.concurrent.Semaphore(s.concurrency());
    workers =
        Executors.newFixedThreadPool(
            s.concurrency(),
            r -> {
              Thread t = new Thread(r, "boxline-worker-" + id + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    if (recent != null) {
      recent.register(topicIds);
    }
    bus.add(this);
    groupThread = new Thread(this::coordinate, "boxline-group-" + id);
    groupThread.setDaemon(true);
    dispatcher = new Thread(this::dispatch, "boxline-consumer-" + id);
    dispatcher.setDaemon(true);
    groupThread.start();
    dispatcher.start();
    LOG.log(
        Level.INFO,
        "consumer {0} joined subscription {1} (weight {2}, coordination: {3})",
        id,
        group,
        s.weight(),
        coordination.describe());
    return this;
  }

  @Override
  public String subscription() {
    return group;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public long handledCount() {
    return ctx.handled.get();
  }

  @Override
  public long fencedCount() {
    return ctx.fenced.get();
  }

  @Override
  public long lostCount() {
    return lost.get();
  }

  @Override
  public long checkInCount() {
    return checkIns.get();
  }

  @Override
  public long committingThreadBatches() {
    return onCommittingThread.get();
  }

  @Override
  public Set<TopicPartition> assignedPartitions() {
    Set<TopicPartition> out = new LinkedHashSet<>();
    for (LeasedPartition p : held.values()) {
      if (p.state == LeasedPartition.State.ACTIVE) {
        out.add(p.ref());
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ wake-ups
  @Override
  public void outboxChanged() {}

  @Override
  public void logAppended(List<PartitionHead> heads) {
    if (heads == null) {
      resynchronize();
      return;
    }
    boolean dispatch = false;
    boolean pickup = false;
    List<Member> view = members;
    Map<PartitionKey, Lease> leased = leases;
    for (PartitionHead h : heads) {
      if (!topicIds.contains(h.topicId())) {
        continue;
      }
      PartitionKey key = PartitionKey.of(h.topicId(), h.partition());
      LeasedPartition p = held.get(key);
      if (p != null) {
        p.knownLast.accumulateAndGet(h.lastSequence(), Math::max);
        if (stopping) {
          continue;
        }
        // The thread that committed these events runs the handler once its connection is closed.
        // Claimed now, so that no worker takes the partition in between.
        if (s.onCommittingThread() && CommittingThread.collecting() && claim(p)) {
          CommittingThread.defer(
              new CommittingThread.Delivery() {
                @Override
                public void run() {
                  drainClaimed(p);
                }

                @Override
                public void cancel() {
                  unclaim(p);
                }
              });
          continue;
        }
        // Start a free worker from here rather than through the dispatcher: one thread hand-off
        // less between the sequencer's commit and the handler.
        if (!tryStart(p)) {
          dispatch = true;
        }
        continue;
      }
      backlog.merge(key, h.lastSequence(), Math::max);
      Lease l = leased.get(key);
      boolean free = l == null || view.stream().noneMatch(m -> m.id().equals(l.owner()));
      // A cold partition woke up: the member chosen by rendezvous hashing takes it at once; the
      // others
      // leave it, and the regular check-ins catch it should that member be gone.
      if (free && !view.isEmpty() && id.equals(Rebalance.pickupOwner(view, key))) {
        pickups.add(key);
        pickup = true;
      }
    }
    if (dispatch) {
      dispatchSignal.raise();
    }
    if (pickup) {
      groupSignal.raise();
    }
  }

  @Override
  public void resynchronize() {
    resync = true;
    groupSignal.raise();
  }

  // ------------------------------------------------------------------ coordination
  private void coordinate() {
    long backoff = TimeUnit.MILLISECONDS.toNanos(100);
    long nextCheckIn = System.nanoTime();
    while (!stopping) {
      try {
        if (System.nanoTime() - nextCheckIn >= 0) {
          checkIn();
          // The deadline just written was derived from the group size seen before this check-in;
          // if the group grew, the new (longer) interval only applies after the next check-in has
          // written a matching deadline, else others would see this member dead in between.
          long interval =
              Math.min(
                  policy.checkInInterval(Math.max(1, members.size())).toNanos(),
                  intervalOfWrittenDeadlineNanos);
          // ±10% jitter so members that joined together do not stay in step.
          nextCheckIn =
              System.nanoTime()
                  + (long) (interval * (0.9 + 0.2 * ThreadLocalRandom.current().nextDouble()));
        }
        takePickups();
        backoff = TimeUnit.MILLISECONDS.toNanos(100);
        if (groupSignal.await(Math.max(0, nextCheckIn - System.nanoTime())) && resync) {
          nextCheckIn = System.nanoTime();
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "consumer " + id + " could not check in; retrying", e);
        if (waitForStop(backoff)) {
          return;
        }
        backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  private void checkIn() {
    long n = checkIns.incrementAndGet();
    boolean full = resync || n % RESYNC_EVERY == 1;
    resync = false;
    if (!storeStampsPolicies && full) {
      policy = coordination.policy(group); // no stamp to tell a change: re-read now and then
    }
    Duration ttl = policy.deadline(Math.max(1, members.size()));
    intervalOfWrittenDeadlineNanos = policy.checkInInterval(Math.max(1, members.size())).toNanos();
    GroupView view = coordination.checkIn(group, id, s.weight(), ttl);
    if (view.policyStamp() != GroupView.NO_POLICY_STAMP) {
      storeStampsPolicies = true;
      if (view.policyStamp() != policyStamp) {
        // Read after the check-in that returned the stamp, never before: a change in between then
        // shows as another new stamp next time instead of being taken for the one already read.
        // The first check-in wrote a deadline from the default policy; the next interval is capped
        // to match it, so a policy with longer intervals cannot make this member look dead.
        policy = coordination.policy(group);
        policyStamp = view.policyStamp();
      }
    }
    GroupPolicy pol = policy;
    List<Member> seen = new ArrayList<>(view.members());
    Set<String> live = new HashSet<>();
    for (Member m : seen) {
      live.add(m.id());
    }
    if (live.add(id)) {
      seen.add(
          new Member(id, s.weight())); // a store may return the view read before this heartbeat
    }
    members = List.copyOf(seen);
    Map<PartitionKey, Lease> byKey = Rebalance.byPartition(view.leases());

    // Leases this member thinks it holds but the store gave to someone else (it was considered
    // dead).
    for (LeasedPartition p : held.values()) {
      Lease l = byKey.get(p.key);
      if (p.state == LeasedPartition.State.ACTIVE
          && (l == null || !l.owner().equals(id) || l.epoch() != p.epoch)) {
        lose(p, "its lease was taken over (this consumer missed its heartbeat deadline)");
      }
    }
    // Leases under this member id that this process does not hold: left by an earlier process that
    // used
    // the same id (restarted within its deadline). Give them back; the plan takes them again with a
    // new
    // epoch and a fresh fence, so nothing of the old process can commit.
    for (Lease l : view.leases()) {
      PartitionKey k = PartitionKey.of(l.topicId(), l.partition());
      if (l.owner().equals(id) && !held.containsKey(k)) {
        coordination.release(group, k, id, l.epoch());
        byKey.remove(k);
      }
    }
    // Leases of dead members and RELEASING leases stuck past the grace period.
    boolean stale = false;
    for (Lease l : view.leases()) {
      if (!live.contains(l.owner())
          || (l.releasing() && l.since().plus(pol.releaseGrace()).isBefore(view.now()))) {
        stale = true;
        break;
      }
    }
    if (stale) {
      int freed = coordination.reclaim(group, live, pol.releaseGrace());
      LOG.log(Level.INFO, "consumer {0} reclaimed {1} stale leases of {2}", id, freed, group);
      byKey.values().removeIf(l -> !live.contains(l.owner()));
      full = true;
    }
    leases = byKey;
    Set<String> shape = new HashSet<>(live);
    for (Lease l : byKey.values()) {
      shape.add(l.topicId() + ":" + l.partition() + ":" + l.owner());
    }
    if (!shape.equals(lastShape)) {
      full = true;
      lastShape = shape;
    }
    if (full) {
      refreshBacklog();
    }
    releaseIdle(pol);
    Map<PartitionKey, Long> mine = new HashMap<>();
    for (LeasedPartition p : held.values()) {
      if (p.state == LeasedPartition.State.ACTIVE) {
        mine.put(p.key, Math.max(0, p.knownLast.get() - p.position));
      }
    }
    Map<PartitionKey, Long> active = new HashMap<>();
    backlog.forEach((k, v) -> active.put(k, v));
    Rebalance.Plan plan =
        Rebalance.plan(
            id,
            s.weight(),
            new GroupView(members, List.copyOf(byKey.values()), view.now()),
            active,
            mine,
            pol.slack(),
            ThreadLocalRandom.current());
    for (PartitionKey k : plan.release()) {
      LeasedPartition p = held.get(k);
      if (p != null) {
        startRelease(p);
      }
    }
    acquire(plan.acquire());
  }

  private void refreshBacklog() {
    Map<PartitionKey, Long> fresh = new HashMap<>();
    for (Backlog b : store.backlogged(subscription.id())) {
      PartitionKey k = PartitionKey.of(b.topicId(), b.partition());
      LeasedPartition p = held.get(k);
      if (p != null) {
        p.knownLast.accumulateAndGet(b.lastSequence(), Math::max);
        if (b.retryDue()) {
          p.retryDue = true;
        }
      } else {
        // A partition with due retries counts as active even when its cursor is at the end.
        fresh.put(k, b.retryDue() ? Math.max(b.lastSequence(), 1) : b.lastSequence());
      }
    }
    backlog.keySet().retainAll(fresh.keySet());
    backlog.putAll(fresh);
    dispatchSignal.raise();
  }

  /**
   * Leased partitions with nothing to do for a while are handed back, so only active partitions are
   * leased.
   */
  private void releaseIdle(GroupPolicy pol) {
    long idleNanos = pol.idleRelease().toNanos();
    for (LeasedPartition p : held.values()) {
      if (p.state == LeasedPartition.State.ACTIVE
          && !p.draining.get()
          && p.knownLast.get() <= p.position
          && System.nanoTime() - p.lastActiveNanos > idleNanos) {
        startRelease(p);
      }
    }
  }

  private void takePickups() {
    List<PartitionKey> want = new ArrayList<>();
    for (PartitionKey k; (k = pickups.poll()) != null; ) {
      if (!held.containsKey(k) && !want.contains(k)) {
        want.add(k);
      }
    }
    acquire(want);
  }

  private void acquire(List<PartitionKey> wanted) {
    if (wanted.isEmpty() || stopping) {
      return;
    }
    long[] epochs = coordination.acquire(group, wanted, id);
    List<PartitionKey> won = new ArrayList<>();
    List<Long> wonEpochs = new ArrayList<>();
    for (int i = 0; i < epochs.length; i++) {
      if (epochs[i] >= 0) {
        won.add(wanted.get(i));
        wonEpochs.add(epochs[i]);
      }
    }
    if (won.isEmpty()) {
      return;
    }
    long[] e = wonEpochs.stream().mapToLong(Long::longValue).toArray();
    long[] positions = store.fenceCursors(subscription.id(), won, e, id);
    List<LeasedPartition> taken = new ArrayList<>();
    Set<TopicPartition> assigned = new LinkedHashSet<>();
    for (int i = 0; i < won.size(); i++) {
      PartitionKey k = won.get(i);
      if (positions[i] < 0) {
        LOG.log(
            Level.ERROR,
            "consumer {0}: lease epoch {1} for {2} is not newer than the cursor''s; the coordination"
                + " store handed out an old epoch. Releasing it.",
            id,
            e[i],
            k);
        coordination.release(group, k, id, e[i]);
        continue;
      }
      Long hint = backlog.remove(k);
      // Read once after taking a partition even without a known backlog: it may have events
      // already.
      long last = Math.max(positions[i] + 1, hint == null ? 0 : hint);
      LeasedPartition p = new LeasedPartition(k, topics.get(k.topicId()), e[i], positions[i], last);
      taken.add(p);
      assigned.add(p.ref());
    }
    if (!taken.isEmpty()) {
      // The listener hears of the partitions before the dispatcher can see them.
      notifyListener(() -> s.listener().onAssigned(assigned));
      for (LeasedPartition p : taken) {
        held.put(p.key, p);
      }
      dispatchSignal.raise();
    }
  }

  private void startRelease(LeasedPartition p) {
    if (p.state != LeasedPartition.State.ACTIVE) {
      return;
    }
    p.state = LeasedPartition.State.RELEASING;
    if (p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    } else {
      // The worker finishes its batch, commits, and hands the lease back (see drain()).
      coordination.markReleasing(group, p.key, id, p.epoch);
    }
  }

  /** Called by whoever holds the partition's draining flag. */
  private void finishRelease(LeasedPartition p) {
    p.state = LeasedPartition.State.RELEASED;
    held.remove(p.key, p);
    try {
      coordination.release(group, p.key, id, p.epoch);
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING, "consumer " + id + " could not release " + p.key + "; it will expire", e);
    }
    TopicPartition ref = p.ref();
    notifyListener(() -> s.listener().onRevoked(Set.of(ref)));
  }

  @Override
  public boolean stopping() {
    return stopping;
  }

  @Override
  public boolean abandoned() {
    return abandoned;
  }

  @Override
  public void lose(LeasedPartition p, String why) {
    if (p.state == LeasedPartition.State.LOST || p.state == LeasedPartition.State.RELEASED) {
      return;
    }
    p.state = LeasedPartition.State.LOST;
    held.remove(p.key, p);
    lost.incrementAndGet();
    LOG.log(Level.WARNING, "consumer {0} lost {1} of {2}: {3}", id, p.ref(), group, why);
    TopicPartition ref = p.ref();
    notifyListener(() -> s.listener().onLost(Set.of(ref)));
  }

  private void notifyListener(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "partition listener of consumer " + id + " failed", e);
    }
  }

  // ------------------------------------------------------------------ delivery
  private void dispatch() {
    while (!stopping) {
      try {
        // Hand a partition to a worker only when one is free, so "draining" always means "running"
        // (a
        // release never waits behind a queue), walking from a rotating start so no partition
        // starves.
        List<LeasedPartition> candidates = new ArrayList<>(held.values());
        int n = candidates.size();
        int start = n == 0 ? 0 : Math.floorMod(rotation++, n);
        for (int i = 0; i < n && freeWorkers.availablePermits() > 0; i++) {
          tryStart(candidates.get((start + i) % n));
        }
        long untilRetry = TimeUnit.SECONDS.toMillis(1);
        for (LeasedPartition p : held.values()) {
          untilRetry = Math.min(untilRetry, p.nextRetryAtMillis - s.clock().millis());
        }
        dispatchSignal.await(TimeUnit.MILLISECONDS.toNanos(Math.max(1, untilRetry)));
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "consumer " + id + " dispatcher failed; continuing", e);
        if (waitForStop(TimeUnit.MILLISECONDS.toNanos(100))) {
          return;
        }
      }
    }
  }

  /**
   * Hands {@code p} to a free worker if it has work and nobody drains it; false when it did not.
   * Safe from any thread: the semaphore and the draining flag decide who wins.
   */
  private boolean tryStart(LeasedPartition p) {
    if (!claim(p)) {
      return false;
    }
    try {
      workers.execute(
          () -> {
            try {
              CommittingThread.runAsWorker(() -> drain(p, false));
            } finally {
              freeWorkers.release();
              dispatchSignal.raise();
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      p.draining.set(false); // shutting down
      freeWorkers.release();
      return false;
    }
    return true;
  }

  /**
   * Takes one of the free slots and the partition's draining flag if {@code p} has work and nobody
   * drains it; false when it did not. Safe from any thread.
   */
  private boolean claim(LeasedPartition p) {
    if (p.state != LeasedPartition.State.ACTIVE || !hasWork(p) || !freeWorkers.tryAcquire()) {
      return false;
    }
    if (!p.draining.compareAndSet(false, true)) {
      freeWorkers.release();
      return false;
    }
    if (p.state != LeasedPartition.State.ACTIVE) {
      freeWorkers.release();
      stopDraining(p); // a release may have started between the check and the claim
      return false;
    }
    return true;
  }

  /**
   * {@code handleOnCommittingThread}: one batch of the claimed {@code p} on the thread that
   * committed it; whatever is left goes to the workers.
   */
  private void drainClaimed(LeasedPartition p) {
    try {
      drain(p, true);
    } catch (RuntimeException e) {
      workerError("could not deliver " + p.ref() + " on the committing thread", e);
    } finally {
      freeWorkers.release();
      dispatchSignal.raise(); // more may be waiting
    }
  }

  /**
   * Gives back a claim that was not used (the committing thread's transaction failed after all).
   */
  private void unclaim(LeasedPartition p) {
    stopDraining(p);
    freeWorkers.release();
    dispatchSignal.raise();
  }

  /**
   * Gives up the partition's draining flag; a release that waited for it (the partition is
   * RELEASING) is finished here, by whoever takes the flag back first.
   */
  private void stopDraining(LeasedPartition p) {
    p.draining.set(false);
    if (p.state == LeasedPartition.State.RELEASING && p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    }
  }

  private boolean hasWork(LeasedPartition p) {
    return p.knownLast.get() > p.position
        || p.retryDue
        || !p.parkedLoaded
        || s.clock().millis() >= p.nextRetryAtMillis;
  }

  /**
   * Delivers what {@code p} has after its cursor. On a worker: a few batches. On the thread that
   * committed the events ({@code committingThread}): one batch of new events, and nothing that
   * waits (parked events, retry passes and back-offs after errors are left to the workers).
   */
  private void drain(LeasedPartition p, boolean committingThread) {
    long backoff = READ_BACKOFF_NANOS;
    int turns = 0;
    int maxBatches = committingThread ? 1 : BATCHES_PER_TURN;
    try {
      if (committingThread
          && (!p.parkedLoaded || p.retryDue || s.clock().millis() >= p.nextRetryAtMillis)) {
        return;
      }
      // A few batches per turn, then back to the end of the queue, so a busy partition cannot keep
      // a worker from the other partitions this consumer holds.
      while (!stopping && p.state == LeasedPartition.State.ACTIVE && turns++ < maxBatches) {
        try {
          if (!p.parkedLoaded) {
            retries.loadParked(p);
          }
          // While new events wait, retry passes are spaced out so poisoned keys retrying fast
          // cannot take the partition's time from its healthy keys.
          if ((p.retryDue || s.clock().millis() >= p.nextRetryAtMillis)
              && (p.knownLast.get() <= p.position
                  || System.nanoTime() - p.lastRetryPassNanos >= RetryPass.SPACING_NANOS)) {
            retries.run(p);
          }
        } catch (RuntimeException e) {
          workerError("could not work through the parked events of " + p.ref(), e);
          if (committingThread || waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
          continue;
        }
        if (p.state != LeasedPartition.State.ACTIVE || p.knownLast.get() <= p.position) {
          return;
        }
        long expected = p.knownLast.get();
        int batchSize = policy.batchSizeFor(s.batchSize());
        List<StoredEvent> rows = null;
        boolean handedOver = false;
        try {
          if (recent != null) {
            rows = recent.after(p.key, p.position, batchSize);
            handedOver = rows != null;
          }
          if (rows == null) {
            rows = store.read(p.key.topicId(), p.key.partition(), p.position, batchSize);
          }
        } catch (RuntimeException e) {
          workerError("could not read " + p.ref(), e);
          if (committingThread || waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
          continue;
        }
        if (rows.isEmpty()) {
          p.knownLast.compareAndSet(
              expected, p.position); // caught up (unless a head arrived meanwhile)
          return;
        }
        p.lastActiveNanos = System.nanoTime();
        List<Event> batch = new ArrayList<>(rows.size());
        for (StoredEvent r : rows) {
          batch.add(toEvent(p, r));
        }
        long last = batch.get(batch.size() - 1).sequence();
        p.knownLast.accumulateAndGet(last, Math::max);
        if (committingThread) {
          onCommittingThread.incrementAndGet();
        }
        if (!deliver(p, batch, handedOver)) {
          return;
        }
        backoff = READ_BACKOFF_NANOS;
        if (rows.size() < batchSize && p.knownLast.get() <= p.position) {
          return;
        }
      }
    } finally {
      p.lastActiveNanos = System.nanoTime();
      stopDraining(p);
      dispatchSignal.raise(); // a head may have arrived while this partition was busy
    }
  }

  private Event toEvent(LeasedPartition p, StoredEvent r) {
    return ctx.toEvent(p, r);
  }

  private boolean deliver(LeasedPartition p, List<Event> batch, boolean handedOver) {
    return s.txHandler() != null
        ? transactional.deliver(p, batch)
        : plain.deliver(p, batch, handedOver);
  }

  private void workerError(String what, RuntimeException e) {
    ctx.workerError(what, e);
  }

  /** Waits up to {@code nanos}; true when the consumer is stopping. */
  @Override
  public boolean waitForStop(long nanos) {
    try {
      return stopLatch.await(nanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  @Override
  public boolean stop(Duration timeout) {
    if (!stopped.compareAndSet(false, true)) {
      return true;
    }
    stopping = true;
    stopLatch.countDown();
    bus.remove(this);
    if (recent != null) {
      recent.unregister(topicIds);
    }
    boolean clean = true;
    if (dispatcher != null) {
      groupSignal.raise();
      dispatchSignal.raise();
      try {
        groupThread.join(timeout.toMillis());
        dispatcher.join(timeout.toMillis());
        workers.shutdown();
        long deadline = System.nanoTime() + timeout.toNanos();
        clean = workers.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        // Batches on committing threads hold slots too: every slot back means none is in flight.
        clean =
            clean
                && freeWorkers.tryAcquire(
                    s.concurrency(),
                    Math.max(0, deadline - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
        if (!clean) {
          abandoned = true;
          workers.shutdownNow();
          workers.awaitTermination(1, TimeUnit.SECONDS);
          LOG.log(
              Level.WARNING,
              "consumer {0}: in-flight batches did not finish within {1}; abandoned them (they will be"
                  + " delivered again)",
              id,
              timeout);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        abandoned = true;
        workers.shutdownNow();
        clean = false;
      }
      Set<TopicPartition> revoked = new LinkedHashSet<>();
      for (LeasedPartition p : held.values()) {
        p.state = LeasedPartition.State.RELEASED;
        revoked.add(p.ref());
      }
      held.clear();
      try {
        coordination.leave(group, id); // frees every lease at once so others take over quickly
      } catch (RuntimeException e) {
        LOG.log(
            Level.WARNING,
            "consumer " + id + " could not leave the group; its leases will expire",
            e);
      }
      if (!revoked.isEmpty()) {
        notifyListener(() -> s.listener().onRevoked(revoked));
      }
    }
    onClose.run();
    LOG.log(Level.INFO, "consumer {0} stopped; handled {1} events", id, ctx.handled.get());
    return clean;
  }

  @Override
  public void close() {
    stop(s.shutdownTimeout());
  }
}
