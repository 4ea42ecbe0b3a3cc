package io.boxline.internal;

import io.boxline.Event;
import io.boxline.FencedException;
import io.boxline.GroupFullException;
import io.boxline.GroupPolicy;
import io.boxline.MemberPolicy;
import io.boxline.NotFoundException;
import io.boxline.PartitionLag;
import io.boxline.RemoteConsumers;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PartitionRead;
import io.boxline.spi.Resolution;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * {@link RemoteConsumers} over the store: each call checks in, plans with {@link Rebalance} as a
 * Java member does, and reads or writes cursors and parked events under the lease epoch. Between
 * two check-ins a member's leases are kept in memory (its session), so a fetch before its next
 * check-in is due only reads; everything else is read from the store on each call, and any instance
 * serves any member.
 *
 * <p>Ack ids are {@code topicId.partition.epoch.from.sequence} for a new event (fetched when the
 * cursor stood at {@code from}) and {@code topicId.partition.epoch.rATTEMPTS.sequence} for a parked
 * retry.
 */
final class RemoteMembers implements RemoteConsumers {
  // 200: the server puts its token's name (up to 60) and a colon before a client's id (up to 100).
  private static final Pattern MEMBER = Pattern.compile("[A-Za-z0-9._:-]{1,200}");
  private static final Pattern ACK =
      Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)\\.(r?)(\\d+)\\.(\\d+)");

  /** As a Java consumer's error text: a reason is kept with the parked event. */
  static final int MAX_REASON_LENGTH = FailurePolicy.MAX_ERROR_LENGTH;

  private final Store store;
  private final CoordinationStore coordination;
  private final TopicCache topics;
  private final Clock clock;
  private final Observers observers;
  private final Function<String, MemberPolicy> policies;
  private final EventWaiters waiters;

  private record StampedPolicy(GroupPolicy policy, long stamp) {}

  /** Each group's policy as last read here, with the stamp of the check-in that saw it. */
  private final Map<String, StampedPolicy> groupPolicies = new ConcurrentHashMap<>();

  /** Each group's size as this process's last fetch saw it, for the deadline it writes. */
  private final Map<String, Integer> groupSizes = new ConcurrentHashMap<>();

  /** The failure policy of each subscription's remote members, made on first use. */
  private final Map<String, FailurePolicy> failures = new ConcurrentHashMap<>();

  /**
   * @param policies the member policy of a subscription, by its name
   */
  RemoteMembers(
      Store store,
      CoordinationStore coordination,
      TopicCache topics,
      Clock clock,
      Observers observers,
      Function<String, MemberPolicy> policies,
      EventWaiters waiters) {
    this.store = store;
    this.waiters = waiters;
    this.coordination = coordination;
    this.topics = topics;
    this.clock = clock;
    this.observers = observers;
    this.policies = policies;
  }

  private FailurePolicy failures(SubscriptionInfo sub) {
    return failures.computeIfAbsent(
        sub.name(), n -> FailurePolicy.remote(policies.apply(n), n, observers, clock));
  }

  private SubscriptionInfo subscription(String name) {
    return store
        .findSubscription(io.boxline.Names.requireSubscriptionName(name))
        .orElseThrow(() -> new NotFoundException("subscription '" + name + "' does not exist"));
  }

  private static String member(String member) {
    if (member == null || !MEMBER.matcher(member).matches()) {
      throw new ValidationException(
          "member id '"
              + member
              + "' must be 1 to 200 characters from A-Z a-z 0-9 . _ : -, e.g. \"worker-1\"");
    }
    return member;
  }

  @Override
  public java.util.concurrent.CompletableFuture<Void> awaitEvents(
      String subscriptionName, Duration timeout) {
    return waiters.await(topicIds(subscription(subscriptionName)), timeout);
  }

  @Override
  public java.util.concurrent.CompletableFuture<Void> awaitAppend(
      io.boxline.TopicName topic, Duration timeout) {
    return waiters.await(Set.of(topics.get(topic).id()), timeout);
  }

  @Override
  public java.util.concurrent.CompletableFuture<Void> awaitAppend(
      java.util.Collection<io.boxline.TopicName> names, Duration timeout) {
    Set<Long> ids = new HashSet<>();
    names.forEach(t -> ids.add(topics.get(t).id()));
    return waiters.await(ids, timeout);
  }

  @Override
  public boolean hearsEveryAppend() {
    return waiters.hearsEveryAppend();
  }

  @Override
  public Batch fetch(String subscriptionName, String memberId, double weight, int maxEvents) {
    member(memberId);
    return fetch(subscription(subscriptionName), memberId, weight, maxEvents);
  }

  @Override
  public Batch fetch(SubscriptionInfo sub, String memberId, double weight, int maxEvents) {
    String me = member(memberId);
    if (!(weight > 0 && weight <= 1000)) {
      throw new ValidationException("weight must be more than 0 and at most 1000, got " + weight);
    }
    if (maxEvents < 1 || maxEvents > 10_000) {
      throw new ValidationException("maxEvents must be between 1 and 10000, got " + maxEvents);
    }
    String group = sub.name();
    String sessionKey = group + "\n" + me;
    long started = System.nanoTime();
    Session known = sessions.get(sessionKey);
    // A subscription deleted and created again under its name is another group.
    boolean current =
        known != null
            && known.subscriptionId() == sub.id()
            && known.weight() == weight
            && known.dueIn(started) > 0;
    // Taken before anything is read: when no log of the subscription's topics has grown since a
    // fetch that found nothing for the member, that fetch's answer still holds and nothing is read.
    long appends = waiters.version(topicIds(sub)) + settles(group).get();
    Long quietAt = current && waiters.hearsEveryAppend() ? quiet.get(sessionKey) : null;
    if (quietAt != null && quietAt == appends) {
      return new Batch(List.of(), partitions(known), known.within(started));
    }
    System.err.println(
        "DBGQ "
            + sessionKey.replace("\n", "|")
            + " current="
            + current
            + " quietAt="
            + quietAt
            + " now="
            + appends);
    quiet.remove(sessionKey);
    // Every cursor and head in one read: the partitions with new events, and where to read them.
    Map<PartitionKey, Long> positions = new HashMap<>();
    Map<PartitionKey, Backlog> backlogs = new LinkedHashMap<>();
    for (PartitionLag l : store.lag(sub.id())) {
      PartitionKey k = PartitionKey.of(topics.get(l.topic()).id(), l.partition());
      sawHead(k, l.lastSequence());
      positions.put(k, l.position());
      if (l.lastSequence() > l.position()) {
        backlogs.put(k, new Backlog(k.topicId(), k.partition(), l.lastSequence(), false));
      }
    }
    if (current && known.leases().isEmpty() && known.taken().containsAll(backlogs.keySet())) {
      // Holds nothing, and no partition with events was free at its check-in: nothing to give.
      quiet.put(sessionKey, appends);
      return new Batch(List.of(), List.of(), known.within(started));
    }
    FailurePolicy failurePolicy = failures(sub);
    // One look for the whole subscription: with nothing parked (dead letters do not hold keys) no
    // partition has blocked keys or due retries, the partitions with events are the ones the
    // cursors
    // show, and the per-partition reads of parked events are skipped.
    boolean nothingParked =
        !failurePolicy.deadLetterBlocksKey()
            && store.retrying(sub.id(), sub.name(), null, 1).isEmpty();
    if (!nothingParked) {
      backlogs.clear(); // with due retries too
      for (Backlog b : store.backlogged(sub.id())) {
        backlogs.put(PartitionKey.of(b.topicId(), b.partition()), b);
      }
    }
    Progress progress = new Progress(backlogs, positions);
    Session held;
    if (current && known.taken().containsAll(backlogs.keySet())) {
      // Checked in here less than a check-in interval ago, and no partition with events was free
      // then: as a Java member between two check-ins, the member keeps its leases and the fetch
      // only reads (no write, no plan).
      held = known;
    } else {
      held = checkInAndPlan(sub, me, weight, started, progress);
      sessions.put(sessionKey, held);
      sweepSessions(started);
    }
    Instant now = clock.instant();
    List<Delivery> deliveries = new ArrayList<>();
    List<TopicPartition> owned = new ArrayList<>();
    // Start at a different partition each fetch, so a deep backlog in the first partitions does not
    // starve the later ones of a member whose batches fill up early.
    List<Map.Entry<PartitionKey, Lease>> order = new ArrayList<>(held.leases().entrySet());
    if (!order.isEmpty()) {
      java.util.Collections.rotate(order, ThreadLocalRandom.current().nextInt(order.size()));
    }
    Map<PartitionKey, List<StoredEvent>> firstReads =
        nothingParked ? readAhead(order, progress, maxEvents) : Map.of();
    for (Map.Entry<PartitionKey, Lease> e : order) {
      TopicInfo topic = topics.get(e.getKey().topicId());
      owned.add(new TopicPartition(topic.name(), e.getKey().partition()));
      int room = maxEvents - deliveries.size();
      if (room > 0 && (progress.backlogs().containsKey(e.getKey()))) {
        deliver(
            sub,
            e.getKey(),
            e.getValue().epoch(),
            topic,
            progress.positions().getOrDefault(e.getKey(), 0L),
            room,
            now,
            nothingParked,
            failurePolicy,
            firstReads.get(e.getKey()),
            deliveries);
      }
    }
    if (nothingParked
        && deliveries.isEmpty()
        && java.util.Collections.disjoint(held.leases().keySet(), backlogs.keySet())) {
      // Caught up everywhere it holds, nothing parked: until a log grows, a settle or the next
      // check-in, a fetch would find the same.
      quiet.put(sessionKey, appends);
    }
    // After a check-in, the whole interval; between two, what is left of it.
    Duration within =
        held == known ? held.within(System.nanoTime()) : Duration.ofNanos(held.intervalNanos());
    return new Batch(List.copyOf(deliveries), List.copyOf(owned), within);
  }

  /**
   * The first read of each partition with new events, all in one read of the store: in the order
   * the fetch takes them, each as far as its backlog and the room the ones before leave. Empty when
   * there is at most one to read (the fetch reads it as it goes).
   */
  private Map<PartitionKey, List<StoredEvent>> readAhead(
      List<Map.Entry<PartitionKey, Lease>> order, Progress progress, int maxEvents) {
    List<PartitionRead> reads = new ArrayList<>();
    List<PartitionKey> keys = new ArrayList<>();
    long left = maxEvents;
    for (Map.Entry<PartitionKey, Lease> e : order) {
      Backlog b = progress.backlogs().get(e.getKey());
      if (left <= 0 || b == null) {
        continue;
      }
      long position = progress.positions().getOrDefault(e.getKey(), 0L);
      int n = (int) Math.min(left, Math.max(1, b.lastSequence() - position));
      reads.add(new PartitionRead(e.getKey().topicId(), e.getKey().partition(), position, n));
      keys.add(e.getKey());
      left -= n;
    }
    if (reads.size() < 2) {
      return Map.of();
    }
    List<List<StoredEvent>> got = store.readEach(reads);
    Map<PartitionKey, List<StoredEvent>> out = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      out.put(keys.get(i), got.get(i));
    }
    return out;
  }

  /**
   * What a member's last check-in here gave it: its leases, and the partitions some live member
   * held then ({@code taken}), until its next check-in is due. A fetch before then reads under
   * these leases without checking in, unless a partition that was free has events; a leave, a
   * refused settlement or the end of the interval ends the session.
   */
  private record Session(
      long subscriptionId,
      double weight,
      long checkedInAt,
      long intervalNanos,
      Map<PartitionKey, Lease> leases,
      Set<PartitionKey> taken,
      long groupHash) {
    /** Nanoseconds until the next check-in is due, from {@code System.nanoTime()} values. */
    long dueIn(long now) {
      return checkedInAt + intervalNanos - now;
    }

    /** What is left of the interval, at least a millisecond. */
    Duration within(long now) {
      return Duration.ofNanos(Math.max(1_000_000, dueIn(now)));
    }
  }

  /** Each member's session, by group and member; ended sessions are swept once a minute. */
  private final Map<String, Session> sessions = new ConcurrentHashMap<>();

  /**
   * Members whose last fetch found nothing to deliver and nothing parked, by group and member: the
   * {@link EventWaiters#version} of their topics plus the group's settlements, taken before that
   * fetch read anything.
   */
  private final Map<String, Long> quiet = new ConcurrentHashMap<>();

  /** Settlements begun and ended here, by group: one moves every fetch of the group to read. */
  private final Map<String, AtomicLong> settles = new ConcurrentHashMap<>();

  private AtomicLong settles(String group) {
    return settles.computeIfAbsent(group, g -> new AtomicLong());
  }

  /** The ids of the subscription's topics (from the topic cache: no read). */
  private Set<Long> topicIds(SubscriptionInfo sub) {
    Set<Long> ids = new HashSet<>();
    sub.topics().forEach(t -> ids.add(topics.get(t).id()));
    return ids;
  }

  /** The partitions a session holds, as a batch names them. */
  private List<TopicPartition> partitions(Session session) {
    List<TopicPartition> out = new ArrayList<>();
    session
        .leases()
        .keySet()
        .forEach(k -> out.add(new TopicPartition(topics.get(k.topicId()).name(), k.partition())));
    return List.copyOf(out);
  }

  private final java.util.concurrent.atomic.AtomicLong lastSweep =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

  private void sweepSessions(long now) {
    long last = lastSweep.get();
    if (now - last >= 60_000_000_000L && lastSweep.compareAndSet(last, now)) {
      sessions.values().removeIf(s -> s.dueIn(now) <= 0);
      quiet.keySet().removeIf(k -> !sessions.containsKey(k));
    }
  }

  /** Which members the group has, as one number: the same set gives the same number. */
  private static long groupHash(List<Member> members) {
    long sum = 0;
    for (Member m : members) {
      sum += m.id().hashCode() * 0x9E3779B97F4A7C15L;
    }
    return sum * 31 + members.size();
  }

  @Override
  public Map<String, Duration> renew(SubscriptionInfo sub, java.util.Collection<String> members) {
    String group = sub.name();
    long now = System.nanoTime();
    // When one member is into the second half of its interval, every member with a session here is
    // renewed with it: one write, and from then on the members fall due together.
    List<String> due = new ArrayList<>();
    boolean anyDue = false;
    for (String m : new HashSet<>(members)) {
      Session s = sessions.get(group + "\n" + m);
      // Only members whose last fetch found nothing to do: one with parked events keeps fetching at
      // its check-ins, which is when it sees a retry fall due.
      if (s != null
          && s.subscriptionId() == sub.id()
          && s.dueIn(now) > 0
          && quiet.containsKey(group + "\n" + m)) {
        due.add(m);
        anyDue |= s.dueIn(now) < s.intervalNanos() / 2;
      }
    }
    StampedPolicy known = groupPolicies.get(group);
    if (!anyDue || known == null) {
      return Map.of();
    }
    // A renewal stands for a check-in only while a check-in would change nothing: the same members
    // (no newcomer waits for its share, nobody left), no lease of a dead member or stuck releasing
    // (a check-in would reclaim it), and the policy the members checked in under.
    GroupView view = coordination.view(group);
    Set<String> live = new HashSet<>();
    view.members().forEach(m -> live.add(m.id()));
    for (Lease l : view.leases()) {
      if (!live.contains(l.owner())
          || (l.releasing()
              && l.since().plus(known.policy().releaseGrace()).isBefore(view.now()))) {
        return Map.of();
      }
    }
    if (!known.policy().equals(coordination.policy(group))) {
      return Map.of();
    }
    long groupNow = groupHash(view.members());
    due.removeIf(m -> sessions.get(group + "\n" + m).groupHash() != groupNow);
    if (due.isEmpty()) {
      return Map.of();
    }
    Duration ttl = known.policy().deadline(groupSizes.getOrDefault(group, live.size()));
    int renewed = coordination.renew(group, due, ttl);
    if (renewed != due.size()) {
      // A store that cannot renew many at once, or a member that expired meanwhile: each of them
      // checks in with its next fetch.
      due.forEach(m -> endSession(group, m));
      return Map.of();
    }
    Map<String, Duration> out = new HashMap<>();
    for (String m : due) {
      Session s =
          sessions.computeIfPresent(
              group + "\n" + m,
              (k, old) ->
                  new Session(
                      old.subscriptionId(),
                      old.weight(),
                      now,
                      old.intervalNanos(),
                      old.leases(),
                      old.taken(),
                      old.groupHash()));
      if (s != null) {
        out.put(m, Duration.ofNanos(s.intervalNanos()));
      }
    }
    return out;
  }

  /** Ends the member's session here: its next fetch checks in. */
  private void endSession(String group, String member) {
    sessions.remove(group + "\n" + member);
    quiet.remove(group + "\n" + member);
  }

  /** Where a subscription's partitions stand: the backlogged ones and every cursor's position. */
  private record Progress(Map<PartitionKey, Backlog> backlogs, Map<PartitionKey, Long> positions) {}

  /**
   * Checks the member in, frees leases of dead members, and takes and releases partitions by the
   * plan, as a Java member does at its check-in; returns the member's new session.
   */
  private Session checkInAndPlan(
      SubscriptionInfo sub, String me, double weight, long started, Progress progress) {
    String group = sub.name();
    // The policy as last read, re-read when the check-in's stamp says it may have changed (or the
    // store gives no stamp), as a Java member does.
    StampedPolicy known = groupPolicies.get(group);
    GroupPolicy policy = known != null ? known.policy() : coordination.policy(group);
    // As for a Java member, the check-in interval grows with the group (checkInRate), so a large
    // group of waiting members costs about checkInRate fetches per second. The deadline written
    // now follows the group's size as last seen here; the interval given back is never longer
    // than the one that deadline was made for.
    int seen = groupSizes.getOrDefault(group, 1);
    Duration ttl = policy.deadline(seen);
    GroupView view = coordination.checkIn(group, me, weight, ttl);
    if (known != null
        && (view.policyStamp() == GroupView.NO_POLICY_STAMP
            || view.policyStamp() != known.stamp())) {
      policy = coordination.policy(group);
    }
    if (known == null || known.stamp() != view.policyStamp() || known.policy() != policy) {
      groupPolicies.put(group, new StampedPolicy(policy, view.policyStamp()));
    }
    List<Member> members = new ArrayList<>(view.members());
    if (members.stream().noneMatch(m -> m.id().equals(me))) {
      members.add(new Member(me, weight));
    }
    groupSizes.put(group, members.size());
    Duration interval = policy.checkInInterval(Math.min(seen, Math.max(1, members.size())));
    refuseWhenFull(group, me, policy, members, view);
    Set<String> live = new HashSet<>();
    members.forEach(m -> live.add(m.id()));
    // Leases of dead members and RELEASING leases stuck past the grace period, freed only when the
    // view shows one (as a Java member does): a steady group costs no write here.
    for (Lease l : view.leases()) {
      if (!live.contains(l.owner())
          || (l.releasing() && l.since().plus(policy.releaseGrace()).isBefore(view.now()))) {
        coordination.reclaim(group, live, policy.releaseGrace());
        break;
      }
    }

    Map<PartitionKey, Long> positions = progress.positions();
    Map<PartitionKey, Long> backlogged = new HashMap<>();
    progress
        .backlogs()
        .forEach(
            (k, b) ->
                backlogged.put(k, Math.max(1, b.lastSequence() - positions.getOrDefault(k, 0L))));
    List<Lease> liveLeases = new ArrayList<>();
    Map<PartitionKey, Lease> mine =
        new TreeMap<>(
            java.util.Comparator.comparingLong(PartitionKey::topicId)
                .thenComparingInt(PartitionKey::partition));
    for (Lease l : view.leases()) {
      if (live.contains(l.owner())) {
        liveLeases.add(l);
      }
      if (l.owner().equals(me) && !l.releasing()) {
        mine.put(PartitionKey.of(l.topicId(), l.partition()), l);
      }
    }
    Map<PartitionKey, Long> mineBacklog = new HashMap<>();
    mine.keySet().forEach(k -> mineBacklog.put(k, backlogged.getOrDefault(k, 0L)));
    Rebalance.Plan plan =
        Rebalance.plan(
            me,
            weight,
            new GroupView(members, liveLeases, view.now()),
            backlogged,
            mineBacklog,
            policy.slack(),
            ThreadLocalRandom.current());
    for (PartitionKey k : plan.release()) {
      Lease l = mine.remove(k);
      if (l != null) {
        // A remote member has no batch in flight that the server could wait for: its next settle
        // of this partition is fenced once the next owner fences the cursor.
        coordination.release(group, k, me, l.epoch());
      }
    }
    acquire(sub, group, me, plan.acquire(), mine, positions);
    Set<PartitionKey> taken = new HashSet<>(mine.keySet());
    for (Lease l : liveLeases) {
      if (!l.owner().equals(me)) {
        taken.add(PartitionKey.of(l.topicId(), l.partition()));
      }
    }
    return new Session(
        sub.id(),
        weight,
        started,
        interval.toNanos(),
        java.util.Collections.unmodifiableMap(mine),
        Set.copyOf(taken),
        groupHash(members));
  }

  private void refuseWhenFull(
      String group, String me, GroupPolicy policy, List<Member> members, GroupView view) {
    int max = policy.maxMembers();
    if (max <= 0) {
      return;
    }
    // A member that already holds partitions is in; one that holds none and would make the group
    // larger than the policy allows is refused (and removed again).
    List<String> others = new ArrayList<>();
    for (Member m : members) {
      if (!m.id().equals(me)) {
        others.add(m.id());
      }
    }
    boolean holdsLeases = view.leases().stream().anyMatch(l -> l.owner().equals(me));
    if (others.size() >= max && !holdsLeases) {
      others.sort(null);
      coordination.leave(group, me);
      throw new GroupFullException(group, max, others);
    }
  }

  private void acquire(
      SubscriptionInfo sub,
      String group,
      String me,
      List<PartitionKey> wanted,
      Map<PartitionKey, Lease> mine,
      Map<PartitionKey, Long> positions) {
    if (wanted.isEmpty()) {
      return;
    }
    Instant now = clock.instant();
    for (LeaseTaking.Taken t : LeaseTaking.take(coordination, store, group, sub.id(), me, wanted)) {
      positions.put(t.key(), t.position());
      mine.put(
          t.key(), new Lease(t.key().topicId(), t.key().partition(), me, t.epoch(), false, now));
    }
  }

  /**
   * Adds the partition's due retries, then its new events after {@code position} (the first read of
   * them may have been made ahead, {@code firstRead}). A leading run of events the member cannot
   * have (waiting behind their key, not yet due, malformed) is parked here and the cursor moved
   * past it, so it never holds the partition up.
   */
  private void deliver(
      SubscriptionInfo sub,
      PartitionKey key,
      long epoch,
      TopicInfo topic,
      long position,
      int room,
      Instant now,
      boolean nothingParked,
      FailurePolicy policy,
      List<StoredEvent> firstRead,
      List<Delivery> out) {
    int firstOfPartition = out.size();
    boolean deadBlocks = policy.deadLetterBlocksKey();
    ParkedSummary summary =
        nothingParked ? new ParkedSummary(Set.of(), null) : store.parked(sub.id(), key, deadBlocks);
    if (summary.nextDue() != null && !now.isBefore(summary.nextDue())) {
      for (ParkedEvent p : store.dueParked(sub.id(), key, deadBlocks, now, room)) {
        Event ev = p.event().toEvent(topic.name(), key.partition());
        out.add(
            new Delivery(
                ackId(key, epoch, "r" + (p.attempts() + 1), ev.sequence()), ev, p.attempts() + 1));
      }
    }
    Set<String> blocked = new HashSet<>(summary.blockedKeys());
    long from = position;
    while (out.size() - firstOfPartition < room) {
      int want = room - (out.size() - firstOfPartition);
      List<StoredEvent> read =
          firstRead == null
              ? store.read(key.topicId(), key.partition(), from, want)
              : firstRead.subList(0, Math.min(want, firstRead.size())); // read ahead
      firstRead = null;
      if (read.isEmpty()) {
        return;
      }
      List<Park> leading = new ArrayList<>();
      long leadingEnd = from;
      boolean onlyLeading = true;
      for (StoredEvent r : read) {
        Park skip = skipped(r, topic, key, blocked, now, policy);
        if (onlyLeading && skip != null) {
          leading.add(skip);
          leadingEnd = r.sequence();
          continue;
        }
        onlyLeading = false;
        if (skip != null) {
          continue; // parked when the member settles a later event of this partition
        }
        Event ev = r.toEvent(topic.name(), key.partition());
        out.add(new Delivery(ackId(key, epoch, Long.toString(leadingEnd), r.sequence()), ev, 1));
      }
      if (leading.isEmpty()) {
        return;
      }
      CommitOutcome o = settle(sub, key, epoch, from, leadingEnd, leading);
      if (o != CommitOutcome.COMMITTED) {
        // Another member holds it now, or the cursor moved: this partition gives nothing today.
        out.subList(firstOfPartition, out.size()).clear();
        return;
      }
      if (!onlyLeading) {
        return;
      }
      from = leadingEnd; // the whole read was parked: read on
    }
  }

  /**
   * The park of an event the member is not given, noting its key as blocked where it must hold the
   * later ones; null when the member gets it. A row that cannot be delivered as stored is
   * dead-lettered at once, through the policy (its hook and observers see it).
   */
  private static Park skipped(
      StoredEvent r,
      TopicInfo topic,
      PartitionKey key,
      Set<String> blocked,
      Instant now,
      FailurePolicy policy) {
    if (r.key() != null && blocked.contains(r.key())) {
      return park(r, ParkState.WAITING, 0, now);
    }
    if (r.malformed() != null) {
      io.boxline.internal.Outcome dead =
          policy.dead(
              r.toEvent(topic.name(), key.partition()),
              1,
              "cannot be delivered as stored: " + r.malformed());
      if (r.key() != null && policy.holdsKey(ParkState.DEAD)) {
        blocked.add(r.key());
      }
      return FailurePolicy.park(r.toEvent(topic.name(), key.partition()), dead);
    }
    if (r.deliverAt() != null && r.deliverAt().isAfter(now)) {
      if (r.key() != null) {
        blocked.add(r.key());
      }
      return park(r, ParkState.RETRY, 0, r.deliverAt());
    }
    return null;
  }

  private static Park park(StoredEvent r, ParkState state, int attempts, Instant at) {
    return new Park(r.sequence(), r.id(), r.key(), r.type(), state, attempts, at, null);
  }

  private static String ackId(PartitionKey key, long epoch, String from, long seq) {
    return key.topicId() + "." + key.partition() + "." + epoch + "." + from + "." + seq;
  }

  private record Ack(
      PartitionKey key, long epoch, boolean retry, long fromOrAttempt, long seq, Settlement s) {}

  @Override
  public int settle(String subscriptionName, String memberId, List<Settlement> settlements) {
    member(memberId);
    return settle(subscription(subscriptionName), memberId, settlements);
  }

  @Override
  public int settle(SubscriptionInfo sub, String memberId, List<Settlement> settlements) {
    member(memberId);
    // A settlement may park an event (a retry due later): the fetches of the group that are
    // under way or come after read again (counted before and after, as a fetch may look between).
    AtomicLong settling = settles(sub.name());
    settling.incrementAndGet();
    try {
      return settleCounted(sub, memberId, settlements);
    } finally {
      settling.incrementAndGet();
    }
  }

  private int settleCounted(SubscriptionInfo sub, String memberId, List<Settlement> settlements) {
    Map<PartitionKey, List<Ack>> byPartition = new LinkedHashMap<>();
    for (Settlement s : settlements) {
      Ack a = parse(s);
      List<Ack> list = byPartition.computeIfAbsent(a.key(), k -> new ArrayList<>());
      if (!list.isEmpty() && list.get(0).epoch() != a.epoch()) {
        throw new ValidationException(
            "ack ids of partition "
                + a.key().partition()
                + " carry two epochs; settle what one fetch gave out");
      }
      list.add(a);
    }
    Instant now = clock.instant();
    Tally tally = new Tally();
    // With nothing parked in the subscription (dead letters do not hold keys), a partition whose
    // events are all done, in one unbroken run from its cursor, parks nothing: its cursor moves
    // without reading the events, together with the other such partitions, in one write.
    FailurePolicy policy = failures(sub);
    boolean nothingParked =
        !policy.deadLetterBlocksKey() && store.retrying(sub.id(), sub.name(), null, 1).isEmpty();
    Map<PartitionKey, Long> heads = null;
    List<Run> runs = new ArrayList<>();
    // Each partition is settled on its own: one that was taken over does not hold back the others.
    for (Map.Entry<PartitionKey, List<Ack>> e : byPartition.entrySet()) {
      Run run = nothingParked ? Run.of(e.getKey(), e.getValue()) : null;
      if (run != null) {
        if (run.last() > seenHeads.getOrDefault(run.key(), 0L) && heads == null) {
          heads = heads(sub); // not given out by a fetch here
        }
        if (run.last() <= seenHeads.getOrDefault(run.key(), 0L)
            || (heads != null && run.last() <= heads.getOrDefault(run.key(), 0L))) {
          runs.add(run);
          continue;
        }
      }
      settleRuns(sub, memberId, runs, tally); // in request order: the ones before go first
      try {
        tally.settled += settlePartition(sub, e.getKey(), e.getValue(), now);
      } catch (FencedException f) {
        tally.refuse(sub, memberId, e.getKey(), f.getMessage());
      }
    }
    settleRuns(sub, memberId, runs, tally);
    if (!tally.refused.isEmpty()) {
      throw new io.boxline.PartitionsFencedException(
          tally.firstRefusal
              + (tally.refused.size() > 1
                  ? " (" + tally.refused.size() + " partitions refused)"
                  : "")
              + "; "
              + tally.settled
              + " events of the other partitions were settled",
          tally.refused,
          tally.settled);
    }
    return tally.settled;
  }

  /** What a settle request came to so far. */
  private final class Tally {
    int settled;
    final List<io.boxline.TopicPartition> refused = new ArrayList<>();
    String firstRefusal;

    void refuse(SubscriptionInfo sub, String memberId, PartitionKey key, String why) {
      endSession(sub.name(), memberId);
      refused.add(new io.boxline.TopicPartition(topics.get(key.topicId()).name(), key.partition()));
      firstRefusal = firstRefusal == null ? why : firstRefusal;
    }
  }

  /** A partition's new events all settled as done, in one unbroken run after {@code from}. */
  private record Run(PartitionKey key, long epoch, long from, long last, int count) {
    /** The run of these acks, or null when they are anything else (the full path checks them). */
    static Run of(PartitionKey key, List<Ack> acks) {
      long from = acks.get(0).fromOrAttempt();
      Set<Long> seen = new HashSet<>();
      long last = from;
      for (Ack a : acks) {
        if (a.retry()
            || a.s().outcome() != RemoteConsumers.Outcome.DONE
            || a.fromOrAttempt() != from
            || a.seq() <= from
            || !seen.add(a.seq())) {
          return null;
        }
        last = Math.max(last, a.seq());
      }
      return last - from == acks.size()
          ? new Run(key, acks.get(0).epoch(), from, last, acks.size())
          : null;
    }
  }

  /** Moves the cursors of the runs in one write, and forgets them. */
  private void settleRuns(SubscriptionInfo sub, String memberId, List<Run> runs, Tally tally) {
    if (runs.isEmpty()) {
      return;
    }
    List<io.boxline.spi.Settlement> moves = new ArrayList<>(runs.size());
    runs.forEach(
        r -> moves.add(io.boxline.spi.Settlement.move(r.key(), r.epoch(), r.from(), r.last())));
    List<CommitOutcome> outcomes = store.settle(sub.id(), moves);
    for (int i = 0; i < runs.size(); i++) {
      Run r = runs.get(i);
      if (outcomes.get(i) == CommitOutcome.COMMITTED) {
        tally.settled += r.count();
      } else {
        TopicInfo topic = topics.get(r.key().topicId());
        tally.refuse(
            sub,
            memberId,
            r.key(),
            fenced(topic.name() + " partition " + r.key().partition(), r.epoch()).getMessage());
      }
    }
    runs.clear();
  }

  /** Each partition's newest sequence, from one read of the subscription's cursors. */
  private Map<PartitionKey, Long> heads(SubscriptionInfo sub) {
    Map<PartitionKey, Long> heads = new HashMap<>();
    for (PartitionLag l : store.lag(sub.id())) {
      PartitionKey k = PartitionKey.of(topics.get(l.topic()).id(), l.partition());
      heads.put(k, l.lastSequence());
      sawHead(k, l.lastSequence());
    }
    return heads;
  }

  /**
   * The newest sequence each partition was seen to hold here. A log only grows at its head (and a
   * topic's id is never reused), so a settlement of events up to a sequence seen here needs no read
   * to know the log holds them.
   */
  private final Map<PartitionKey, Long> seenHeads = new ConcurrentHashMap<>();

  private void sawHead(PartitionKey key, long head) {
    seenHeads.merge(key, head, Math::max);
  }

  private Ack parse(Settlement s) {
    if (s == null || s.ackId() == null || s.outcome() == null) {
      throw new ValidationException("each settlement needs an ackId and an outcome");
    }
    io.boxline.Names.requireStorable("reason", s.reason(), MAX_REASON_LENGTH);
    var m = ACK.matcher(s.ackId());
    if (!m.matches()) {
      throw new ValidationException("'" + s.ackId() + "' is not an ack id given out by fetch");
    }
    try {
      PartitionKey key = PartitionKey.of(Long.parseLong(m.group(1)), Integer.parseInt(m.group(2)));
      return new Ack(
          key,
          Long.parseLong(m.group(3)),
          !m.group(4).isEmpty(),
          Long.parseLong(m.group(5)),
          Long.parseLong(m.group(6)),
          s);
    } catch (NumberFormatException ex) {
      throw new ValidationException("'" + s.ackId() + "' is not an ack id given out by fetch");
    }
  }

  private int settlePartition(SubscriptionInfo sub, PartitionKey key, List<Ack> acks, Instant now) {
    long epoch = acks.get(0).epoch();
    TopicInfo topic = topics.get(key.topicId());
    String where = topic.name() + " partition " + key.partition();
    FailurePolicy policy = failures(sub);
    List<Ack> retried = new ArrayList<>();
    TreeMap<Long, Ack> fresh = new TreeMap<>();
    long from = -1;
    for (Ack a : acks) {
      if (a.retry()) {
        retried.add(a);
      } else {
        if (from >= 0 && from != a.fromOrAttempt()) {
          throw new ValidationException(
              "ack ids of "
                  + where
                  + " come from two fetches; settle each fetch's events before fetching again");
        }
        from = a.fromOrAttempt();
        fresh.put(a.seq(), a);
      }
    }
    // The keys blocked when the events were fetched: read before the retries are resolved, since
    // resolving one may unblock a key whose new events that fetch left out.
    Set<String> blocked =
        fresh.isEmpty()
            ? Set.of()
            : new HashSet<>(
                store.parked(sub.id(), key, policy.deadLetterBlocksKey()).blockedKeys());
    if (!retried.isEmpty()) {
      Map<Long, Resolution> resolutions = new HashMap<>();
      for (Ack a : retried) {
        resolutions.put(a.seq(), resolveRetry(a, topic, key, where, policy));
      }
      if (!store.resolveParked(sub.id(), key, epoch, resolutions)) {
        throw fenced(where, epoch);
      }
    }
    if (fresh.isEmpty()) {
      return retried.size();
    }
    long last = fresh.lastKey();
    if (fresh.firstKey() <= from) {
      throw new ValidationException(
          "ack id for sequence " + fresh.firstKey() + " of " + where + " is not after its cursor");
    }
    if (last - from > 10_000) {
      throw new ValidationException(
          "a settlement of "
              + where
              + " spans more than 10000 events; fetch gives out at most that");
    }
    List<StoredEvent> range = store.read(key.topicId(), key.partition(), from, (int) (last - from));
    if (range.isEmpty() || range.get(range.size() - 1).sequence() < last) {
      throw new ValidationException(
          "ack id for sequence " + last + " of " + where + " names an event the log does not hold");
    }
    List<Park> parks = new ArrayList<>();
    for (StoredEvent r : range) {
      if (r.sequence() > last) {
        break;
      }
      Ack a = fresh.get(r.sequence());
      Park skip = skipped(r, topic, key, blocked, now, policy);
      if (skip != null) {
        parks.add(skip); // the fetch left it out (or its key got blocked since): it waits
        continue;
      }
      if (a == null && r.deliverAt() != null) {
        // Not yet due when fetched: it is tried when it is.
        if (r.key() != null) {
          blocked.add(r.key());
        }
        Instant due = r.deliverAt().isAfter(now) ? r.deliverAt() : now;
        parks.add(park(r, ParkState.RETRY, 0, due));
        continue;
      }
      if (a == null) {
        throw new ValidationException(
            "sequence "
                + r.sequence()
                + " of "
                + where
                + " was fetched but is not settled; settle each partition's events in order, up to the last one settled");
      }
      Settlement s = a.s();
      if (s.outcome() == RemoteConsumers.Outcome.DONE) {
        continue;
      }
      Event ev = r.toEvent(topic.name(), key.partition());
      io.boxline.internal.Outcome o = policy.settled(ev, s.outcome(), s.retryIn(), s.reason(), 1);
      if (o.park() == null) {
        continue;
      }
      if (r.key() != null && policy.holdsKey(o.park())) {
        blocked.add(r.key());
      }
      parks.add(FailurePolicy.park(ev, o));
    }
    CommitOutcome o = settle(sub, key, epoch, from, last, parks);
    if (o != CommitOutcome.COMMITTED) {
      throw fenced(where, epoch);
    }
    return retried.size() + fresh.size();
  }

  /** What the settlement of a parked event's next attempt means, under the policy. */
  private Resolution resolveRetry(
      Ack a, TopicInfo topic, PartitionKey key, String where, FailurePolicy policy) {
    Settlement s = a.s();
    if (s.outcome() == RemoteConsumers.Outcome.DONE) {
      return Resolution.done();
    }
    List<StoredEvent> read = store.read(key.topicId(), key.partition(), a.seq() - 1, 1);
    if (read.isEmpty() || read.get(0).sequence() != a.seq()) {
      throw new ValidationException(
          "ack id for sequence "
              + a.seq()
              + " of "
              + where
              + " names an event the log does not hold");
    }
    Event ev = read.get(0).toEvent(topic.name(), key.partition());
    return FailurePolicy.toResolution(
        policy.settled(ev, s.outcome(), s.retryIn(), s.reason(), (int) a.fromOrAttempt()));
  }

  private CommitOutcome settle(
      SubscriptionInfo sub, PartitionKey key, long epoch, long from, long to, List<Park> parks) {
    return store
        .settle(
            sub.id(), List.of(io.boxline.spi.Settlement.move(key, epoch, from, to).parking(parks)))
        .get(0);
  }

  private static FencedException fenced(String where, long epoch) {
    return new FencedException(
        where
            + " is no longer held under epoch "
            + epoch
            + " (another member took it, or it was rewound): fetch again");
  }

  @Override
  public void leave(String subscriptionName, String memberId) {
    String group = subscription(subscriptionName).name();
    endSession(group, member(memberId));
    coordination.leave(group, memberId);
    endSession(group, memberId); // and one a fetch in flight may have begun meanwhile
  }
}
