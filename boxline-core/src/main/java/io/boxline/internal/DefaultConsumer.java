package io.boxline.internal;

import io.boxline.BatchHandler;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.GroupPolicy;
import io.boxline.PartitionListener;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
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
final class DefaultConsumer implements Consumer, WakeupListener {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /**
   * Every this many check-ins the policy and the full backlog are read again even if nothing
   * changed.
   */
  private static final int RESYNC_EVERY = 10;

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
      PartitionListener listener,
      int batchSize,
      int concurrency,
      Duration shutdownTimeout,
      Duration initialBackoff,
      Duration maxBackoff) {}

  private final Store store;
  private final CoordinationStore coordination;
  private final TopicCache topics;
  private final WakeupBus bus;
  private final SubscriptionInfo subscription;
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
  private final Signal groupSignal = new Signal();
  private final CountDownLatch stopLatch = new CountDownLatch(1);
  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong fenced = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  private final AtomicLong checkIns = new AtomicLong();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean stopping;
  private volatile boolean abandoned;
  private volatile boolean resync = true;
  private volatile GroupPolicy policy = GroupPolicy.DEFAULT;
  private volatile List<Member> members = List.of();
  private volatile Map<PartitionKey, Lease> leases = Map.of();
  private Set<String> lastShape = Set.of();
  private Thread groupThread;
  private Thread dispatcher;
  private ExecutorService workers;

  DefaultConsumer(
      Store store,
      CoordinationStore coordination,
      TopicCache topics,
      WakeupBus bus,
      SubscriptionInfo subscription,
      Settings settings,
      Runnable onClose) {
    this.store = store;
    this.coordination = coordination;
    this.topics = topics;
    this.bus = bus;
    this.subscription = subscription;
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
    workers =
        Executors.newFixedThreadPool(
            s.concurrency(),
            r -> {
              Thread t = new Thread(r, "boxline-worker-" + id + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
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
        dispatch = true;
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
          long interval = policy.checkInInterval(Math.max(1, members.size())).toNanos();
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
    if (full) {
      policy = coordination.policy(group);
    }
    GroupPolicy pol = policy;
    Duration ttl = pol.deadline(Math.max(1, members.size()));
    GroupView view = coordination.checkIn(group, id, s.weight(), ttl);
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
    for (PartitionHead h : store.backlogged(subscription.id())) {
      fresh.put(PartitionKey.of(h.topicId(), h.partition()), h.lastSequence());
    }
    for (Map.Entry<PartitionKey, Long> e : fresh.entrySet()) {
      Partition p = held.get(e.getKey());
      if (p != null) {
        p.knownLast.accumulateAndGet(e.getValue(), Math::max);
      }
    }
    fresh.keySet().removeAll(held.keySet());
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
        for (Partition p : held.values()) {
          if (p.state == State.ACTIVE
              && p.knownLast.get() > p.position
              && p.draining.compareAndSet(false, true)) {
            if (p.state != State.ACTIVE) {
              p.draining.set(false);
              continue;
            }
            workers.execute(() -> drain(p));
          }
        }
        dispatchSignal.await(TimeUnit.SECONDS.toNanos(1));
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

  private void drain(Partition p) {
    long backoff = s.initialBackoff().toNanos();
    try {
      while (!stopping && p.state == State.ACTIVE) {
        long expected = p.knownLast.get();
        List<StoredEvent> rows;
        try {
          rows = store.read(p.key.topicId(), p.key.partition(), p.position, s.batchSize());
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "consumer " + id + " could not read " + p.ref() + "; retrying", e);
          if (waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, s.maxBackoff().toNanos());
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
          batch.add(
              new Event(
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
                  r.createdAt()));
        }
        long last = batch.get(batch.size() - 1).sequence();
        p.knownLast.accumulateAndGet(last, Math::max);
        if (!deliver(p, batch)) {
          return;
        }
        if (rows.size() < s.batchSize() && p.knownLast.get() <= p.position) {
          return;
        }
      }
    } finally {
      p.lastActiveNanos = System.nanoTime();
      p.draining.set(false);
      if (p.state == State.RELEASING && p.draining.compareAndSet(false, true)) {
        finishRelease(p);
      }
      dispatchSignal.raise(); // a head may have arrived while this partition was busy
    }
  }

  /**
   * Runs the handler on the batch, retrying in place, and commits the cursor up to the last handled
   * event. Returns true when the whole batch was handled and committed.
   */
  private boolean deliver(Partition p, List<Event> batch) {
    long backoff = s.initialBackoff().toNanos();
    int done = 0;
    int committed = 0;
    while (done < batch.size() && !stopping && p.state != State.LOST) {
      try {
        if (s.batchHandler() != null) {
          s.batchHandler().handle(batch);
          done = batch.size();
        } else {
          s.handler().handle(batch.get(done));
          done++;
        }
        backoff = s.initialBackoff().toNanos();
      } catch (RuntimeException e) {
        LOG.log(
            Level.WARNING,
            "consumer "
                + id
                + ": handler failed on "
                + batch.get(done)
                + "; retrying in "
                + backoff / 1_000_000
                + " ms",
            e);
        if (done > committed && !abandoned) {
          // Keep what succeeded: a restart during the backoff must not redeliver it.
          if (!commit(p, batch.get(done - 1).sequence(), done - committed)) {
            return false;
          }
          committed = done;
        }
        if (waitForStop(backoff)) {
          break;
        }
        backoff = Math.min(backoff * 2, s.maxBackoff().toNanos());
      }
    }
    if (done > committed && !abandoned) {
      if (!commit(p, batch.get(done - 1).sequence(), done - committed)) {
        return false;
      }
    }
    return done == batch.size();
  }

  private boolean commit(Partition p, long position, int count) {
    if (store.commitCursor(
        subscription.id(), p.key.topicId(), p.key.partition(), position, p.epoch)) {
      p.position = position;
      handled.addAndGet(count);
      return true;
    }
    fenced.incrementAndGet();
    lose(p, "cursor commit rejected: epoch " + p.epoch + " is stale (another consumer took it)");
    return false;
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
    boolean clean = true;
    if (dispatcher != null) {
      groupSignal.raise();
      dispatchSignal.raise();
      try {
        groupThread.join(timeout.toMillis());
        dispatcher.join(timeout.toMillis());
        workers.shutdown();
        clean = workers.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
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
