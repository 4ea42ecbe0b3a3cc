package io.boxline.internal;

import io.boxline.BatchFailure;
import io.boxline.BatchHandler;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.GroupPolicy;
import io.boxline.HandlerDecision;
import io.boxline.MalformedEventException;
import io.boxline.PartitionLag;
import io.boxline.PartitionListener;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.TransactionalHandler;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.CursorMove;
import io.boxline.spi.FencedTransaction;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
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
final class DefaultConsumer implements Consumer, WakeupListener {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /**
   * Every this many check-ins the full backlog is read again even if nothing changed (and the
   * policy too, with a store that does not report a policy stamp).
   */
  private static final int RESYNC_EVERY = 10;

  private static final long READ_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final int BATCHES_PER_TURN = 4;

  /** Least time between two retry passes of a partition that has new events waiting. */
  private static final long RETRY_PASS_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private static final long MAX_READ_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
  private final java.util.Random random = new java.util.Random();

  private enum State {
    ACTIVE,
    RELEASING,
    RELEASED,
    LOST
  }

  /** A leased partition. */
  private static final class Partition {
    final PartitionKey key;
    final TopicInfo topic;
    final long epoch;
    final AtomicLong knownLast = new AtomicLong();
    final AtomicBoolean draining = new AtomicBoolean();
    volatile long position;
    volatile State state = State.ACTIVE;
    volatile long lastActiveNanos = System.nanoTime();
    volatile boolean retryDue;

    /**
     * Keys whose new events are parked behind earlier ones; only the draining worker touches it.
     */
    Set<String> blockedKeys = new HashSet<>();

    volatile boolean parkedLoaded;
    volatile long nextRetryAtMillis = Long.MAX_VALUE;

    /**
     * Sequences of events read from rows that cannot be delivered as they are, with the reason;
     * every attempt at them fails. An entry goes when its event is dead-lettered.
     */
    final Map<Long, String> malformed = new ConcurrentHashMap<>();

    long lastRetryPassNanos = System.nanoTime() - RETRY_PASS_SPACING_NANOS;

    Partition(PartitionKey key, TopicInfo topic, long epoch, long position, long knownLast) {
      this.key = key;
      this.topic = topic;
      this.epoch = epoch;
      this.position = position;
      this.knownLast.set(knownLast);
    }

    TopicPartition ref() {
      return new TopicPartition(topic.name(), key.partition());
    }
  }

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
  private final CursorCommitter cursorCommits;
  private final Settings s;
  private final String id;
  private final String group;
  private final Set<Long> topicIds = new HashSet<>();
  private final Runnable onClose;

  private final Map<PartitionKey, Partition> held = new ConcurrentHashMap<>();

  /** Last sequence of partitions known to have a backlog that this member does not hold. */
  private final Map<PartitionKey, Long> backlog = new ConcurrentHashMap<>();

  private final ConcurrentLinkedQueue<PartitionKey> pickups = new ConcurrentLinkedQueue<>();
  private final Signal dispatchSignal = new Signal();
  private java.util.concurrent.Semaphore freeWorkers;
  private int rotation;
  private final Signal groupSignal = new Signal();
  private final CountDownLatch stopLatch = new CountDownLatch(1);
  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong fenced = new AtomicLong();
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
    this.cursorCommits =
        new CursorCommitter(
            moves -> store.commitCursors(subscription.id(), moves), commitCalls, commitMoves);
    this.s = settings;
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
    return handled.get();
  }

  @Override
  public long fencedCount() {
    return fenced.get();
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
    for (Partition p : held.values()) {
      if (p.state == State.ACTIVE) {
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
      Partition p = held.get(key);
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
    for (Partition p : held.values()) {
      Lease l = byKey.get(p.key);
      if (p.state == State.ACTIVE && (l == null || !l.owner().equals(id) || l.epoch() != p.epoch)) {
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
    for (Partition p : held.values()) {
      if (p.state == State.ACTIVE) {
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
      Partition p = held.get(k);
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
      Partition p = held.get(k);
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
    for (Partition p : held.values()) {
      if (p.state == State.ACTIVE
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
    List<Partition> taken = new ArrayList<>();
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
      Partition p = new Partition(k, topics.get(k.topicId()), e[i], positions[i], last);
      taken.add(p);
      assigned.add(p.ref());
    }
    if (!taken.isEmpty()) {
      // The listener hears of the partitions before the dispatcher can see them.
      notifyListener(() -> s.listener().onAssigned(assigned));
      for (Partition p : taken) {
        held.put(p.key, p);
      }
      dispatchSignal.raise();
    }
  }

  private void startRelease(Partition p) {
    if (p.state != State.ACTIVE) {
      return;
    }
    p.state = State.RELEASING;
    if (p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    } else {
      // The worker finishes its batch, commits, and hands the lease back (see drain()).
      coordination.markReleasing(group, p.key, id, p.epoch);
    }
  }

  /** Called by whoever holds the partition's draining flag. */
  private void finishRelease(Partition p) {
    p.state = State.RELEASED;
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

  private void lose(Partition p, String why) {
    if (p.state == State.LOST || p.state == State.RELEASED) {
      return;
    }
    p.state = State.LOST;
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
        List<Partition> candidates = new ArrayList<>(held.values());
        int n = candidates.size();
        int start = n == 0 ? 0 : Math.floorMod(rotation++, n);
        for (int i = 0; i < n && freeWorkers.availablePermits() > 0; i++) {
          tryStart(candidates.get((start + i) % n));
        }
        long untilRetry = TimeUnit.SECONDS.toMillis(1);
        for (Partition p : held.values()) {
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
  private boolean tryStart(Partition p) {
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
  private boolean claim(Partition p) {
    if (p.state != State.ACTIVE || !hasWork(p) || !freeWorkers.tryAcquire()) {
      return false;
    }
    if (!p.draining.compareAndSet(false, true)) {
      freeWorkers.release();
      return false;
    }
    if (p.state != State.ACTIVE) {
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
  private void drainClaimed(Partition p) {
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
  private void unclaim(Partition p) {
    stopDraining(p);
    freeWorkers.release();
    dispatchSignal.raise();
  }

  /**
   * Gives up the partition's draining flag; a release that waited for it (the partition is
   * RELEASING) is finished here, by whoever takes the flag back first.
   */
  private void stopDraining(Partition p) {
    p.draining.set(false);
    if (p.state == State.RELEASING && p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    }
  }

  private boolean hasWork(Partition p) {
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
  private void drain(Partition p, boolean committingThread) {
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
      while (!stopping && p.state == State.ACTIVE && turns++ < maxBatches) {
        try {
          if (!p.parkedLoaded) {
            loadParked(p);
          }
          // While new events wait, retry passes are spaced out so poisoned keys retrying fast
          // cannot take the partition's time from its healthy keys.
          if ((p.retryDue || s.clock().millis() >= p.nextRetryAtMillis)
              && (p.knownLast.get() <= p.position
                  || System.nanoTime() - p.lastRetryPassNanos >= RETRY_PASS_SPACING_NANOS)) {
            retryPass(p);
          }
        } catch (RuntimeException e) {
          workerError("could not work through the parked events of " + p.ref(), e);
          if (committingThread || waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
          continue;
        }
        if (p.state != State.ACTIVE || p.knownLast.get() <= p.position) {
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

  private Event toEvent(Partition p, StoredEvent r) {
    Event e = event(p, r);
    if (r.malformed() != null && p.malformed.put(r.sequence(), r.malformed()) == null) {
      LOG.log(
          Level.WARNING,
          "consumer {0}: {1} cannot be delivered as stored ({2}); each attempt fails, so it will be"
              + " dead-lettered under the retry policy while the other keys of {3} flow",
          id,
          e,
          r.malformed(),
          p.ref());
      if (s.observers().active()) {
        s.observers().malformed(group, e, r.malformed());
      }
    }
    return e;
  }

  private static Event event(Partition p, StoredEvent r) {
    return new Event(
        r.id(),
        p.topic.name(),
        p.key.partition(),
        r.sequence(),
        r.key(),
        r.type(),
        r.source(),
        r.contentType(),
        r.payload(),
        r.headers(),
        r.createdAt(),
        r.deliverAt());
  }

  /**
   * An event with a deliver-at time in the future: parked until then instead of holding up the
   * partition.
   */
  private boolean notYetDue(Event e) {
    return e.deliverAt() != null && e.deliverAt().isAfter(s.clock().instant());
  }

  private RetryPolicy policyFor(Event e) {
    RetryPolicy p = s.typePolicies().get(e.type());
    return p != null ? p : s.retryPolicy();
  }

  /** What became of one event: handled (no park), or parked in some state. */
  private record Outcome(ParkState park, int attempts, Instant nextAttemptAt, String error) {
    static final Outcome DONE = new Outcome(null, 0, null, null);
  }

  /** Progress through one batch: what is done, what is parked, and what is already committed. */
  private final class Progress {
    final Partition p;
    final List<Event> batch;
    final List<Park> parks = new ArrayList<>();
    int done;
    int committed;

    /** Events handled successfully (not parked), and how many of them are already counted. */
    int succeeded;

    int counted;

    /** The events came from the sequencer's hand-over, not from a read of the log. */
    final boolean handedOver;

    /** The log did not hold the handed-over events: nothing more of this batch may commit. */
    boolean stale;

    Progress(Partition p, List<Event> batch, boolean handedOver) {
      this.p = p;
      this.batch = batch;
      this.handedOver = handedOver;
    }

    void record(Event e, Outcome o) {
      settled(p, e, o.park());
      if (o.park() != null) {
        parks.add(
            new Park(
                e.sequence(),
                e.id(),
                e.key(),
                e.type(),
                o.park(),
                o.attempts(),
                o.nextAttemptAt(),
                o.error()));
        if (e.key() != null && (o.park() != ParkState.DEAD || s.deadLetterBlocksKey())) {
          p.blockedKeys.add(e.key());
        }
        if (o.park() == ParkState.RETRY) {
          p.nextRetryAtMillis = Math.min(p.nextRetryAtMillis, o.nextAttemptAt().toEpochMilli());
        }
      } else {
        succeeded++;
      }
      done++;
    }

    /** Commits handled and parked events so far; false when fenced. */
    boolean commit() {
      if (stale) {
        return false;
      }
      if (done == committed || abandoned) {
        return true;
      }
      CommitOutcome outcome;
      long position = batch.get(done - 1).sequence();
      // Handed-over events commit only if the log still holds them: name them.
      long[] sequences = null;
      UUID[] ids = null;
      if (handedOver) {
        int n = done - committed;
        sequences = new long[n];
        ids = new UUID[n];
        for (int i = 0; i < n; i++) {
          Event e = batch.get(committed + i);
          sequences[i] = e.sequence();
          ids[i] = e.id();
        }
      }
      if (parks.isEmpty()) {
        // The common case: committed together with the other partitions' moves of this moment.
        outcome =
            cursorCommits.commit(
                new CursorMove(p.key, p.position, position, p.epoch, sequences, ids));
      } else if (handedOver) {
        outcome =
            store.commitBatchIfLogHolds(
                subscription.id(),
                p.key,
                p.position,
                position,
                p.epoch,
                List.copyOf(parks),
                sequences,
                ids);
      } else {
        outcome =
            store.commitBatch(
                subscription.id(), p.key, p.position, position, p.epoch, List.copyOf(parks));
      }
      if (outcome == CommitOutcome.CURSOR_MOVED) {
        // A database crash lost cursor commits (they are asynchronous) and maybe the sequencer
        // batches behind them, which are then sequenced again. Go back to the stored cursor, so
        // that nothing sequenced anew behind this consumer's in-memory position is skipped.
        stale = true;
        cursorMovedUnderneath(p);
        return false;
      }
      if (outcome == CommitOutcome.LOG_CHANGED) {
        // The database lost the sequencer batch these came from (a crash before its asynchronous
        // commit reached the disk) and sequenced the outbox again. Nothing was committed: forget
        // the hand-over and read the log from the cursor; the events handled are delivered again.
        stale = true;
        recent.clear();
        LOG.log(
            Level.WARNING,
            "consumer {0}: {1} no longer holds the events handed over by the sequencer (database"
                + " restarted?); reading them again from the log",
            id,
            p.ref());
        return false;
      }
      if (outcome == CommitOutcome.FENCED) {
        fenced.incrementAndGet();
        lose(
            p, "cursor commit rejected: epoch " + p.epoch + " is stale (another consumer took it)");
        return false;
      }
      p.position = batch.get(done - 1).sequence();
      handled.addAndGet(succeeded - counted);
      counted = succeeded;
      committed = done;
      parks.clear();
      return true;
    }
  }

  /** The partition's cursor as stored in the database. */
  /**
   * The stored cursor is not where this consumer left it (a rewind while it ran, or a database
   * crash that lost asynchronous commits): go back to it, so nothing behind it is skipped.
   */
  private void cursorMovedUnderneath(Partition p) {
    long stored = storedPosition(p);
    LOG.log(
        Level.WARNING,
        "consumer {0}: the stored cursor of {1} is at {2}, not at {3} (rewound while it ran,"
            + " or the database restarted and lost asynchronous commits); delivering again from"
            + " there",
        id,
        p.ref(),
        stored,
        p.position);
    if (recent != null) {
      recent.clear();
    }
    p.position = stored;
  }

  private long storedPosition(Partition p) {
    for (PartitionLag lag : store.lag(subscription.id())) {
      if (lag.topic().equals(p.topic.name()) && lag.partition() == p.key.partition()) {
        return lag.position();
      }
    }
    throw new IllegalStateException("no cursor for " + p.ref() + " of " + group);
  }

  /**
   * Delivers a batch read at the cursor: events of blocked keys are parked behind their
   * predecessors, the others are handled (retried in place per the policy, then parked), and the
   * cursor moves past all of them with the parked ones in the same transaction. Returns true when
   * the whole batch was committed.
   */
  private boolean deliver(Partition p, List<Event> batch, boolean handedOver) {
    if (s.txHandler() != null) {
      return deliverTransactional(p, batch);
    }
    Progress progress = new Progress(p, batch, handedOver);
    if (s.batchHandler() != null && deliverAsBatch(progress)) {
      return progress.commit() && progress.done == batch.size();
    }
    for (int i = progress.done; i < batch.size(); i++) {
      if (stopping || p.state != State.ACTIVE) {
        break;
      }
      Event e = batch.get(i);
      if (e.key() != null && p.blockedKeys.contains(e.key())) {
        progress.record(e, new Outcome(ParkState.WAITING, 0, s.clock().instant(), null));
        continue;
      }
      if (notYetDue(e)) {
        progress.record(e, new Outcome(ParkState.RETRY, 0, e.deliverAt(), "scheduled"));
        continue;
      }
      Outcome o = attemptInPlace(progress, e);
      if (o == null) {
        break; // stopping, or fenced while committing before a wait
      }
      progress.record(e, o);
    }
    return progress.commit() && progress.done == batch.size();
  }

  /**
   * Gives the whole batch to the batch handler once. Returns true when that settled every event
   * (handled, or reported failed through {@link BatchFailure}); false after any other exception,
   * and then the events go one by one through the per-event path so the culprit is isolated.
   */
  private boolean deliverAsBatch(Progress progress) {
    if (s.inboxKey() != null) {
      return false; // the per-event path checks and records the inbox for each event
    }
    List<Event> eligible = new ArrayList<>();
    Map<UUID, Event> byId = new HashMap<>();
    for (Event e : progress.batch) {
      if (notYetDue(e) || progress.p.malformed.containsKey(e.sequence())) {
        return false; // the per-event path parks it until due, or fails it without the handler
      }
      if (e.key() == null || !progress.p.blockedKeys.contains(e.key())) {
        eligible.add(e);
        byId.put(e.id(), e);
      }
    }
    Map<UUID, RuntimeException> failed;
    try {
      eligible.forEach(e -> hook(() -> s.hooks().beforeEvent(e, 1)));
      long start = System.nanoTime();
      if (!eligible.isEmpty()) {
        s.batchHandler().handle(eligible);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      eligible.forEach(e -> hook(() -> s.hooks().afterEvent(e, took)));
      failed = Map.of();
    } catch (BatchFailure bf) {
      failed = bf.failed();
    } catch (RuntimeException e) {
      eligible.forEach(ev -> hook(() -> s.hooks().onError(ev, e, 1)));
      return false;
    }
    for (Event e : progress.batch) {
      if (!byId.containsKey(e.id())) {
        progress.record(e, new Outcome(ParkState.WAITING, 0, s.clock().instant(), null));
      } else if (failed.containsKey(e.id())) {
        RuntimeException cause = failed.get(e.id());
        if (!(cause instanceof HandlerDecision)) {
          hook(() -> s.hooks().onError(e, cause, 1));
        }
        progress.record(e, decide(e, cause, 1, policyFor(e)));
      } else {
        progress.record(e, Outcome.DONE);
      }
    }
    return true;
  }

  /**
   * Fails an attempt at an event read from a row that cannot be delivered as it is; the handler is
   * never called with it.
   */
  private static void requireWellFormed(Partition p, Event e) {
    String why = p.malformed.get(e.sequence());
    if (why != null) {
      throw new MalformedEventException(e + " cannot be delivered: " + why);
    }
  }

  /** Forgets what is known about a malformed event once it is settled (dead-lettered). */
  private static void settled(Partition p, Event e, ParkState park) {
    if (park == ParkState.DEAD) {
      p.malformed.remove(e.sequence());
    }
  }

  /** The handler's inbox key for the event, or null; a key the database cannot store fails. */
  private String inboxKeyOf(Event e) {
    return s.inboxKey() == null
        ? null
        : io.boxline.Names.requireStorable(
            "inbox key", s.inboxKey().apply(e), io.boxline.Names.MAX_KEY_LENGTH);
  }

  private void invoke(Partition p, Event e, int attempt) {
    requireWellFormed(p, e);
    String dedup = inboxKeyOf(e);
    if (dedup != null && store.inboxSeen(subscription.id(), dedup)) {
      return; // handled before under the same key: skip
    }
    hook(() -> s.hooks().beforeEvent(e, attempt));
    long start = System.nanoTime();
    if (s.batchHandler() != null) {
      s.batchHandler().handle(List.of(e));
    } else {
      s.handler().handle(e);
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    if (dedup != null) {
      store.inboxRecord(subscription.id(), dedup);
    }
    hook(() -> s.hooks().afterEvent(e, took));
  }

  /**
   * In a transactional handler's transaction: false when the event is a duplicate (skip the
   * handler).
   */
  private boolean claimInbox(java.sql.Connection tx, Event e) {
    String dedup = inboxKeyOf(e);
    return dedup == null || store.inboxClaim(tx, subscription.id(), dedup);
  }

  /**
   * Attempts in place until handled, decided, or the in-place budget is spent; null when stopping.
   */
  private Outcome attemptInPlace(Progress progress, Event e) {
    RetryPolicy policy = policyFor(e);
    long deadline = System.nanoTime() + policy.inPlaceTime().toNanos();
    for (int attempt = 1; ; attempt++) {
      try {
        invoke(progress.p, e, attempt);
        return Outcome.DONE;
      } catch (RuntimeException failure) {
        if (!(failure instanceof HandlerDecision)) {
          int a = attempt;
          hook(() -> s.hooks().onError(e, failure, a));
        }
        Outcome o = decide(e, failure, attempt, policy);
        if (o.park() != ParkState.RETRY
            || failure instanceof HandlerDecision
            || attempt >= policy.inPlaceAttempts()) {
          return o;
        }
        long delayNanos = Duration.between(s.clock().instant(), o.nextAttemptAt()).toNanos();
        if (System.nanoTime() + delayNanos > deadline) {
          return o;
        }
        // Keep what succeeded before waiting, so a crash during the wait does not redeliver it.
        if (!progress.commit() || waitForStop(delayNanos)) {
          return null;
        }
      }
    }
  }

  /** The outcome of a failed attempt: the handler's decision, or the retry policy's. */
  private Outcome decide(Event e, RuntimeException failure, int attempt, RetryPolicy policy) {
    if (failure instanceof HandlerDecision) {
      HandlerDecision d = (HandlerDecision) failure;
      switch (d.kind()) {
        case IGNORE:
          return Outcome.DONE;
        case DEAD_LETTER:
          return dead(e, attempt, "dead-lettered by the handler: " + d.getMessage());
        case RETRY_AT:
          if (s.observers().active()) {
            s.observers().retrying(group, e, attempt, d.retryAt());
          }
          return new Outcome(
              ParkState.RETRY, attempt, d.retryAt(), "retry requested: " + d.getMessage());
        default:
          throw new IllegalStateException(d.kind().name());
      }
    }
    String error = describe(failure);
    if (attempt >= policy.maxAttempts()) {
      return dead(e, attempt, error);
    }
    Instant next = s.clock().instant().plus(policy.delayAfter(attempt, random));
    if (s.observers().active()) {
      s.observers().retrying(group, e, attempt, next);
    }
    return new Outcome(ParkState.RETRY, attempt, next, error);
  }

  private Outcome dead(Event e, int attempts, String reason) {
    LOG.log(
        Level.WARNING,
        "consumer {0}: dead-lettered {1} after {2} attempts: {3}",
        id,
        e,
        attempts,
        reason);
    hook(() -> s.hooks().onDeadLetter(e, reason));
    return new Outcome(ParkState.DEAD, attempts, s.clock().instant(), reason);
  }

  private static String describe(Throwable t) {
    String m = t.getClass().getName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    return m.length() > 2000 ? m.substring(0, 2000) : m;
  }

  private void loadParked(Partition p) {
    ParkedSummary summary = store.parked(subscription.id(), p.key, s.deadLetterBlocksKey());
    p.blockedKeys = new HashSet<>(summary.blockedKeys());
    p.nextRetryAtMillis =
        summary.nextDue() == null ? Long.MAX_VALUE : summary.nextDue().toEpochMilli();
    p.parkedLoaded = true;
  }

  /**
   * Gives due parked events another attempt, oldest of each key first. Handling or dead-lettering
   * one makes the next of its key due at once, so this loops until nothing more is due.
   */
  private void retryPass(Partition p) {
    p.retryDue = false;
    boolean again = true;
    p.lastRetryPassNanos = System.nanoTime();
    while (again && !stopping && p.state == State.ACTIVE) {
      again = false;
      // Outcomes of one page are recorded together (one commit); the page holds at most one event
      // per key, so none of them depends on another's outcome.
      Map<Long, Resolution> outcomes = new LinkedHashMap<>();
      for (ParkedEvent pe :
          store.dueParked(subscription.id(), p.key, s.deadLetterBlocksKey(), 100)) {
        if (stopping || p.state != State.ACTIVE) {
          break;
        }
        Event e = toEvent(p, pe.event());
        int attempt = pe.attempts() + 1;
        Resolution r;
        if (s.txHandler() != null) {
          TxResult t = attemptTransactional(p, e, attempt, true);
          if (t == TxResult.MOVED) {
            cursorMovedUnderneath(p);
            return;
          }
          if (t == TxResult.FENCED) {
            fenced.incrementAndGet();
            lose(p, "retry rejected: epoch " + p.epoch + " is stale (another consumer took it)");
            return;
          }
          if (t.committed) {
            handled.incrementAndGet();
            again = true;
            continue;
          }
          r = toResolution(decide(e, t.failure, attempt, policyFor(e)));
        } else {
          try {
            invoke(p, e, attempt);
            r = Resolution.done();
          } catch (RuntimeException failure) {
            if (!(failure instanceof HandlerDecision)) {
              hook(() -> s.hooks().onError(e, failure, attempt));
            }
            r = toResolution(decide(e, failure, attempt, policyFor(e)));
          }
        }
        if (r.kind() == Resolution.Kind.DEAD) {
          settled(p, e, ParkState.DEAD);
        }
        outcomes.put(e.sequence(), r);
      }
      if (outcomes.isEmpty()) {
        continue;
      }
      if (!store.resolveParked(subscription.id(), p.key, p.epoch, outcomes)) {
        fenced.incrementAndGet();
        lose(
            p,
            "retry outcomes rejected: epoch " + p.epoch + " is stale (another consumer took it)");
        return;
      }
      for (Resolution r : outcomes.values()) {
        if (r.kind() != Resolution.Kind.RETRY) {
          if (r.kind() == Resolution.Kind.DONE) {
            handled.incrementAndGet();
          }
          again = true;
        }
      }
    }
    loadParked(p);
  }

  /** Result of one attempt in a fenced transaction. */
  private static final class TxResult {
    static final TxResult FENCED = new TxResult(false, null);
    static final TxResult MOVED = new TxResult(false, null);
    static final TxResult COMMITTED = new TxResult(true, null);
    final boolean committed;
    final RuntimeException failure;

    TxResult(boolean committed, RuntimeException failure) {
      this.committed = committed;
      this.failure = failure;
    }
  }

  private static Resolution toResolution(Outcome o) {
    return o.park() == null
        ? Resolution.done()
        : new Resolution(
            o.park() == ParkState.DEAD ? Resolution.Kind.DEAD : Resolution.Kind.RETRY,
            o.attempts(),
            o.nextAttemptAt(),
            o.error());
  }

  /**
   * One attempt of a transactional handler: the handler's writes and the bookkeeping (the cursor
   * advance for an event at the cursor, or the removal from the retry store for a parked one)
   * commit together. The transaction holds the cursor row, checked against the epoch, so a fenced
   * consumer commits nothing.
   */
  private TxResult attemptTransactional(Partition p, Event e, int attempt, boolean parked) {
    FencedTransaction begun = store.beginFenced(subscription.id(), p.key, p.epoch, p.position);
    if (begun.connection() == null) {
      return begun.refusal() == CommitOutcome.CURSOR_MOVED ? TxResult.MOVED : TxResult.FENCED;
    }
    java.sql.Connection tx = begun.connection();
    try {
      requireWellFormed(p, e);
      hook(() -> s.hooks().beforeEvent(e, attempt));
      long start = System.nanoTime();
      if (claimInbox(tx, e)) {
        s.txHandler().handle(e, tx);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      if (parked) {
        store.finishParkedFenced(tx, subscription.id(), p.key, e.sequence());
      } else {
        store.commitFenced(tx, subscription.id(), p.key, e.sequence(), List.of());
        p.position = e.sequence();
      }
      hook(() -> s.hooks().afterEvent(e, took));
      return TxResult.COMMITTED;
    } catch (java.sql.SQLException | RuntimeException failure) {
      rollbackQuietly(tx);
      RuntimeException f =
          failure instanceof RuntimeException
              ? (RuntimeException) failure
              : new io.boxline.StoreException(
                  "transactional handler failed: " + failure.getMessage(), failure);
      if (!(f instanceof HandlerDecision)) {
        hook(() -> s.hooks().onError(e, f, attempt));
      }
      return new TxResult(false, f);
    }
  }

  private static void rollbackQuietly(java.sql.Connection tx) {
    try {
      if (!tx.isClosed()) {
        tx.rollback();
        tx.close();
      }
    } catch (java.sql.SQLException ignored) {
      // the connection is broken; the pool discards it and the transaction is gone either way
    }
  }

  /**
   * Transactional delivery: the whole batch in one fenced transaction (one commit for many events);
   * if any event fails, that transaction rolls back and the batch is redone one event per
   * transaction, so the culprit is retried or parked on its own and the others' effects still
   * commit exactly once.
   */
  private boolean deliverTransactional(Partition p, List<Event> batch) {
    java.sql.Connection tx = beginFencedOrGiveUp(p);
    if (tx == null) {
      return false;
    }
    List<Park> parks = new ArrayList<>();
    int succeeded = 0;
    try {
      for (Event e : batch) {
        if (notYetDue(e)) {
          throw new IllegalStateException("scheduled event in batch"); // redo one by one below
        }
        if (e.key() != null && p.blockedKeys.contains(e.key())) {
          parks.add(
              new Park(
                  e.sequence(),
                  e.id(),
                  e.key(),
                  e.type(),
                  ParkState.WAITING,
                  0,
                  s.clock().instant(),
                  null));
          continue;
        }
        requireWellFormed(p, e); // rolls back and redoes the batch one event at a time
        hook(() -> s.hooks().beforeEvent(e, 1));
        long start = System.nanoTime();
        if (claimInbox(tx, e)) {
          s.txHandler().handle(e, tx);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        hook(() -> s.hooks().afterEvent(e, took));
        succeeded++;
      }
      long last = batch.get(batch.size() - 1).sequence();
      store.commitFenced(tx, subscription.id(), p.key, last, parks);
      p.position = last;
      handled.addAndGet(succeeded);
      return true;
    } catch (java.sql.SQLException | RuntimeException failure) {
      rollbackQuietly(tx);
    }
    for (Event e : batch) {
      if (stopping || p.state != State.ACTIVE) {
        return false;
      }
      Outcome outcome;
      if (e.key() != null && p.blockedKeys.contains(e.key())) {
        outcome = new Outcome(ParkState.WAITING, 0, s.clock().instant(), null);
      } else if (notYetDue(e)) {
        outcome = new Outcome(ParkState.RETRY, 0, e.deliverAt(), "scheduled");
      } else {
        outcome = attemptTransactionalInPlace(p, e);
        if (outcome == null) {
          return false;
        }
        if (outcome == Outcome.DONE) {
          handled.incrementAndGet();
          continue; // committed with its effects
        }
      }
      // Parked (or ignored): move the cursor past it, with the park, in a transaction of its own.
      java.sql.Connection parkTx = beginFencedOrGiveUp(p);
      if (parkTx == null) {
        return false;
      }
      List<Park> one = new ArrayList<>();
      settled(p, e, outcome.park());
      if (outcome.park() != null) {
        one.add(
            new Park(
                e.sequence(),
                e.id(),
                e.key(),
                e.type(),
                outcome.park(),
                outcome.attempts(),
                outcome.nextAttemptAt(),
                outcome.error()));
        if (e.key() != null && (outcome.park() != ParkState.DEAD || s.deadLetterBlocksKey())) {
          p.blockedKeys.add(e.key());
        }
        if (outcome.park() == ParkState.RETRY) {
          p.nextRetryAtMillis =
              Math.min(p.nextRetryAtMillis, outcome.nextAttemptAt().toEpochMilli());
        }
      }
      store.commitFenced(parkTx, subscription.id(), p.key, e.sequence(), one);
      p.position = e.sequence();
    }
    return true;
  }

  /**
   * A transaction holding the partition's cursor at this consumer's epoch and position, or null
   * after losing the partition (fenced) or going back to a cursor moved underneath.
   */
  private java.sql.Connection beginFencedOrGiveUp(Partition p) {
    FencedTransaction t = store.beginFenced(subscription.id(), p.key, p.epoch, p.position);
    if (t.connection() != null) {
      return t.connection();
    }
    if (t.refusal() == CommitOutcome.CURSOR_MOVED) {
      cursorMovedUnderneath(p);
    } else {
      fenced.incrementAndGet();
      lose(p, "cursor is fenced: epoch " + p.epoch + " is stale (another consumer took it)");
    }
    return null;
  }

  /**
   * In-place attempts of a transactional handler. Returns {@link Outcome#DONE} when committed, an
   * outcome to park (or an ignore, as a park-less non-DONE outcome), or null when stopping or
   * fenced.
   */
  private Outcome attemptTransactionalInPlace(Partition p, Event e) {
    RetryPolicy policy = policyFor(e);
    long deadline = System.nanoTime() + policy.inPlaceTime().toNanos();
    for (int attempt = 1; ; attempt++) {
      TxResult t = attemptTransactional(p, e, attempt, false);
      if (t == TxResult.MOVED) {
        cursorMovedUnderneath(p);
        return null;
      }
      if (t == TxResult.FENCED) {
        fenced.incrementAndGet();
        lose(p, "cursor is fenced: epoch " + p.epoch + " is stale (another consumer took it)");
        return null;
      }
      if (t.committed) {
        return Outcome.DONE;
      }
      Outcome o = decide(e, t.failure, attempt, policy);
      if (o.park() == null) {
        return IGNORED; // the handler ignored it: its writes were rolled back, the cursor moves on
      }
      if (o.park() != ParkState.RETRY
          || t.failure instanceof HandlerDecision
          || attempt >= policy.inPlaceAttempts()) {
        return o;
      }
      long delayNanos = Duration.between(s.clock().instant(), o.nextAttemptAt()).toNanos();
      if (System.nanoTime() + delayNanos > deadline) {
        return o;
      }
      if (waitForStop(delayNanos)) {
        return null;
      }
    }
  }

  /** A handler's "ignore" under a transactional handler: nothing committed, nothing parked. */
  private static final Outcome IGNORED = new Outcome(null, 0, null, "ignored");

  private void hook(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a hook of consumer " + id + " failed", e);
    }
  }

  private void workerError(String what, RuntimeException e) {
    LOG.log(Level.WARNING, "consumer " + id + " " + what + "; retrying", e);
    hook(() -> s.hooks().onWorkerError(e));
  }

  /** Waits up to {@code nanos}; true when the consumer is stopping. */
  private boolean waitForStop(long nanos) {
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
      for (Partition p : held.values()) {
        p.state = State.RELEASED;
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
    LOG.log(Level.INFO, "consumer {0} stopped; handled {1} events", id, handled.get());
    return clean;
  }

  @Override
  public void close() {
    stop(s.shutdownTimeout());
  }
}
