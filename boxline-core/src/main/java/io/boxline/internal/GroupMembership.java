package io.boxline.internal;

import io.boxline.GroupPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicPartition;
import io.boxline.spi.Backlog;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.CursorStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One consumer's membership of its subscription's group, on the {@code boxline-group-<id>} thread:
 * checks in with the coordination store (heartbeat and view of members and leases in one round
 * trip), reclaims the leases of dead members, and moves toward its fair share — releases excess
 * leases gracefully and acquires unleased active partitions, copying each new lease's epoch onto
 * the partition's cursor before delivery starts (fencing). It fills the map of held partitions that
 * the consumer's dispatcher and workers deliver from.
 */
final class GroupMembership {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /**
   * Every this many check-ins the full backlog is read again even if nothing changed (and the
   * policy too, with a store that does not report a policy stamp).
   */
  private static final int RESYNC_EVERY = 10;

  private final ConsumerContext c;
  private final ConsumerSettings s;
  private final CursorStore store;
  private final SubscriptionInfo subscription;
  private final CoordinationStore coordination;
  private final TopicCache topics;
  private final String id;
  private final String group;
  private final Map<PartitionKey, LeasedPartition> held;
  private final Signal dispatchSignal;

  /** Last sequence of partitions known to have a backlog that this member does not hold. */
  private final Map<PartitionKey, Long> backlog = new ConcurrentHashMap<>();

  private final ConcurrentLinkedQueue<PartitionKey> pickups = new ConcurrentLinkedQueue<>();
  private final Signal groupSignal = new Signal();
  final AtomicLong lost = new AtomicLong();
  final AtomicLong checkIns = new AtomicLong();
  private volatile boolean resync = true;
  private volatile GroupPolicy policy = GroupPolicy.DEFAULT;
  private volatile List<Member> members = List.of();
  private volatile Map<PartitionKey, Lease> leases = Map.of();
  private Set<String> lastShape = Set.of();
  private long intervalOfWrittenDeadlineNanos = Long.MAX_VALUE;
  private long policyStamp = GroupView.NO_POLICY_STAMP;
  private boolean storeStampsPolicies;
  private Thread thread;

  GroupMembership(
      ConsumerContext c,
      CoordinationStore coordination,
      TopicCache topics,
      Map<PartitionKey, LeasedPartition> held,
      Signal dispatchSignal) {
    this.c = c;
    this.s = c.s;
    this.store = c.store;
    this.subscription = c.subscription;
    this.coordination = coordination;
    this.topics = topics;
    this.id = c.id;
    this.group = c.group;
    this.held = held;
    this.dispatchSignal = dispatchSignal;
  }

  /** Counted down at the first check-in (admitted or refused) or its first failure. */
  private final java.util.concurrent.CountDownLatch firstCheckIn =
      new java.util.concurrent.CountDownLatch(1);

  private volatile io.boxline.GroupFullException refused;
  private boolean admitted;

  /**
   * Waits up to {@code timeout} for the first check-in; the refusal when the group was full, else
   * null (also when the check-in could not be made yet: the next one decides then).
   */
  io.boxline.GroupFullException awaitAdmission(Duration timeout) throws InterruptedException {
    firstCheckIn.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    return refused;
  }

  void start() {
    thread = new Thread(this::coordinate, "boxline-group-" + id);
    thread.setDaemon(true);
    thread.start();
  }

  /** Wakes the group thread (to stop, or to take picked-up partitions). */
  void wake() {
    groupSignal.raise();
  }

  void join(Duration timeout) throws InterruptedException {
    if (thread != null) {
      thread.join(timeout.toMillis());
    }
  }

  /** The group policy in force (read at check-ins). */
  GroupPolicy policy() {
    return policy;
  }

  String describeCoordination() {
    return coordination.describe();
  }

  /**
   * A partition this member does not hold has new events up to {@code lastSequence}: remembered as
   * backlog, and queued for pickup when it is free and rendezvous hashing picks this member (the
   * others leave it; the regular check-ins catch it should that member be gone). True when queued.
   */
  boolean noteHead(PartitionKey key, long lastSequence) {
    backlog.merge(key, lastSequence, Math::max);
    List<Member> view = members;
    Lease l = leases.get(key);
    boolean free = l == null || view.stream().noneMatch(m -> m.id().equals(l.owner()));
    if (free && !view.isEmpty() && id.equals(Rebalance.pickupOwner(view, key))) {
      pickups.add(key);
      return true;
    }
    return false;
  }

  /**
   * On stop, after the workers ended: every held partition counts as released, the member leaves
   * the group (freeing every lease at once, so others take over quickly), the listener hears of the
   * revocations.
   */
  void leave() {
    Set<TopicPartition> revoked = new LinkedHashSet<>();
    for (LeasedPartition p : held.values()) {
      p.state = LeasedPartition.State.RELEASED;
      revoked.add(p.ref());
    }
    held.clear();
    try {
      coordination.leave(group, id);
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

  /** Asks for a full check-in at once (after a lost notification, say). */
  void resynchronize() {
    resync = true;
    groupSignal.raise();
  }

  private void coordinate() {
    long backoff = TimeUnit.MILLISECONDS.toNanos(100);
    long nextCheckIn = System.nanoTime();
    while (!c.stopping()) {
      try {
        if (System.nanoTime() - nextCheckIn >= 0) {
          checkIn();
          if (refused != null) {
            return; // the group is full: this member left it again
          }
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
        firstCheckIn.countDown(); // start() does not wait for a database that does not answer
        c.workerError("could not check in", e); // logged, and told to ConsumerHooks.onWorkerError
        if (c.waitForStop(backoff)) {
          return;
        }
        backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  private void checkIn() {
    try {
      checkInOnce();
    } catch (RuntimeException e) {
      // What the failed check-in was to read (a new shape, a resync asked for) it may not have
      // read: the next one, a moment later, reads the group and the backlog in full.
      resync = true;
      throw e;
    }
  }

  private void checkInOnce() {
    long n = checkIns.incrementAndGet();
    boolean full = resync || n % RESYNC_EVERY == 1;
    resync = false;
    if (!storeStampsPolicies && full) {
      policy = coordination.policy(group); // no stamp to tell a change: re-read now and then
    }
    Duration ttl = policy.deadline(Math.max(1, members.size()));
    intervalOfWrittenDeadlineNanos = policy.checkInInterval(Math.max(1, members.size())).toNanos();
    GroupView view = coordination.checkIn(group, id, s.weight(), ttl, c.status());
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
    if (!admitted) {
      int max = pol.maxMembers();
      List<String> others = new ArrayList<>();
      for (Member m : seen) {
        if (!m.id().equals(id)) {
          others.add(m.id());
        }
      }
      others.sort(null);
      if (max > 0 && others.size() >= max) {
        refused = new io.boxline.GroupFullException(group, max, others);
        LOG.log(Level.ERROR, "consumer {0} cannot join: {1}", id, refused.getMessage());
        coordination.leave(group, id);
        firstCheckIn.countDown();
        return;
      }
      admitted = true;
      firstCheckIn.countDown();
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
    if (wanted.isEmpty() || c.stopping()) {
      return;
    }
    List<LeasedPartition> taken = new ArrayList<>();
    Set<TopicPartition> assigned = new LinkedHashSet<>();
    for (LeaseTaking.Taken t :
        LeaseTaking.take(coordination, store, group, subscription.id(), id, wanted)) {
      Long hint = backlog.remove(t.key());
      // Read once after taking a partition even without a known backlog: it may have events
      // already.
      long last = Math.max(t.position() + 1, hint == null ? 0 : hint);
      LeasedPartition p =
          new LeasedPartition(
              t.key(), topics.get(t.key().topicId()), t.epoch(), t.position(), last);
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

  void startRelease(LeasedPartition p) {
    if (p.state != LeasedPartition.State.ACTIVE) {
      return;
    }
    p.state = LeasedPartition.State.RELEASING;
    if (p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    } else {
      // The worker finishes its batch, commits, and hands the lease back (see stopDraining).
      coordination.markReleasing(group, p.key, id, p.epoch);
    }
  }

  /**
   * Gives up the partition's draining flag; a release that waited for it (the partition is
   * RELEASING) is finished here, by whoever takes the flag back first.
   */
  void stopDraining(LeasedPartition p) {
    p.draining.set(false);
    if (p.state == LeasedPartition.State.RELEASING && p.draining.compareAndSet(false, true)) {
      finishRelease(p);
    }
  }

  /** Called by whoever holds the partition's draining flag. */
  void finishRelease(LeasedPartition p) {
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

  /**
   * Hands {@code p} back to the group although a worker still runs it (its handler hangs): the
   * lease is released at its epoch, so whoever takes it next fences the stuck worker's commit.
   */
  void giveUp(LeasedPartition p, String why) {
    if (p.state == LeasedPartition.State.LOST || p.state == LeasedPartition.State.RELEASED) {
      return;
    }
    p.state = LeasedPartition.State.LOST;
    held.remove(p.key, p);
    lost.incrementAndGet();
    try {
      coordination.release(group, p.key, id, p.epoch);
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING, "consumer " + id + " could not give up " + p.key + "; it will expire", e);
    }
    LOG.log(Level.WARNING, "consumer {0} gave up {1} of {2}: {3}", id, p.ref(), group, why);
    TopicPartition ref = p.ref();
    notifyListener(() -> s.listener().onLost(Set.of(ref)));
  }

  /** Forgets {@code p}: another member took it. */
  void lose(LeasedPartition p, String why) {
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
}
