package io.boxline.internal;

import io.boxline.Event;
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
import io.boxline.internal.RemoteSessions.Session;
import io.boxline.internal.RemoteSessions.StampedPolicy;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.Park;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PartitionRead;
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
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * {@link RemoteConsumers} over the store: each call checks in, plans with {@link Rebalance} as a
 * Java member does, and reads or writes cursors and parked events under the lease epoch. Between
 * two check-ins a member's leases are kept in memory (its session), so a fetch before its next
 * check-in is due only reads; everything else is read from the store on each call, and any instance
 * serves any member. The sessions are kept in {@link RemoteSessions}; {@link RemoteSettlement}
 * settles.
 *
 * <p>Ack ids are {@code topicId.partition.epoch.from.sequence} for a new event (fetched when the
 * cursor stood at {@code from}) and {@code topicId.partition.epoch.rATTEMPTS.sequence} for a parked
 * retry.
 */
final class RemoteMembers implements RemoteConsumers {
  // 200: the server puts its token's name (up to 60) and a colon before a client's id (up to 100).
  private static final Pattern MEMBER = Pattern.compile("[A-Za-z0-9._:-]{1,200}");

  private final Store store;
  private final CoordinationStore coordination;
  private final TopicCache topics;
  private final Clock clock;
  private final Observers observers;
  private final Function<String, MemberPolicy> policies;
  private final EventWaiters waiters;
  private final RemoteSessions sessions;
  private final RemoteSettlement settlement;

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
    this.sessions = new RemoteSessions(coordination);
    this.settlement = new RemoteSettlement(store, topics, clock, sessions, this::failures);
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
    String sessionKey = RemoteSessions.key(group, me);
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
    long appends = waiters.version(topicIds(sub)) + sessions.settles(group).get();
    Long quietAt = current && waiters.hearsEveryAppend() ? sessions.quietAt(sessionKey) : null;
    if (quietAt != null && quietAt == appends) {
      return new Batch(List.of(), partitions(known), known.within(started));
    }
    sessions.notQuiet(sessionKey);
    // Every cursor and head in one read: the partitions with new events, and where to read them.
    Map<PartitionKey, Long> positions = new HashMap<>();
    Map<PartitionKey, Backlog> backlogs = new LinkedHashMap<>();
    for (PartitionLag l : store.lag(sub.id())) {
      PartitionKey k = PartitionKey.of(topics.get(l.topic()).id(), l.partition());
      settlement.sawHead(k, l.lastSequence());
      positions.put(k, l.position());
      if (l.lastSequence() > l.position()) {
        backlogs.put(k, new Backlog(k.topicId(), k.partition(), l.lastSequence(), false));
      }
    }
    if (current && known.leases().isEmpty() && known.taken().containsAll(backlogs.keySet())) {
      // Holds nothing, and no partition with events was free at its check-in: nothing to give.
      sessions.quiet(sessionKey, appends);
      return new Batch(List.of(), List.of(), known.within(started));
    }
    FailurePolicy failurePolicy = failures(sub);
    // One look for the whole subscription: with nothing parked (dead letters do not hold keys) no
    // partition has blocked keys or due retries, the partitions with events are the ones the
    // cursors show, and the per-partition reads of parked events are skipped.
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
      sessions.sweep(started);
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
        && java.util.Collections.disjoint(held.leases().keySet(), backlogs.keySet())
        && held.taken().containsAll(backlogs.keySet())) {
      // Caught up everywhere it holds, nothing parked, no partition with events left free: until a
      // log grows, a settle or the next check-in, a fetch would find the same.
      sessions.quiet(sessionKey, appends);
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

  @Override
  public Map<String, Duration> renew(SubscriptionInfo sub, java.util.Collection<String> members) {
    return sessions.renew(sub, members);
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
    StampedPolicy known = sessions.policy(group);
    GroupPolicy policy = known != null ? known.policy() : coordination.policy(group);
    // As for a Java member, the check-in interval grows with the group (checkInRate), so a large
    // group of waiting members costs about checkInRate fetches per second. The deadline written
    // now follows the group's size as last seen here; the interval given back is never longer
    // than the one that deadline was made for.
    int seen = sessions.groupSize(group, 1);
    Duration ttl = policy.deadline(seen);
    GroupView view = coordination.checkIn(group, me, weight, ttl);
    if (known != null
        && (view.policyStamp() == GroupView.NO_POLICY_STAMP
            || view.policyStamp() != known.stamp())) {
      policy = coordination.policy(group);
    }
    if (known == null || known.stamp() != view.policyStamp() || known.policy() != policy) {
      sessions.policy(group, new StampedPolicy(policy, view.policyStamp()));
    }
    List<Member> members = new ArrayList<>(view.members());
    if (members.stream().noneMatch(m -> m.id().equals(me))) {
      members.add(new Member(me, weight));
    }
    sessions.sawGroupSize(group, members.size());
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
        RemoteSessions.groupHash(members));
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
        Park skip = RemoteSettlement.skipped(r, topic, key, blocked, now, policy);
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
      CommitOutcome o = settlement.settle(sub, key, epoch, from, leadingEnd, leading);
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

  private static String ackId(PartitionKey key, long epoch, String from, long seq) {
    return key.topicId() + "." + key.partition() + "." + epoch + "." + from + "." + seq;
  }

  @Override
  public int settle(String subscriptionName, String memberId, List<Settlement> settlements) {
    member(memberId);
    return settle(subscription(subscriptionName), memberId, settlements);
  }

  @Override
  public int settle(SubscriptionInfo sub, String memberId, List<Settlement> settlements) {
    member(memberId);
    return settlement.settle(sub, memberId, settlements);
  }

  @Override
  public void leave(String subscriptionName, String memberId) {
    String group = subscription(subscriptionName).name();
    sessions.endSession(group, member(memberId));
    coordination.leave(group, memberId);
    sessions.endSession(group, memberId); // and one a fetch in flight may have begun meanwhile
  }
}
