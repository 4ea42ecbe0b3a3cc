package io.boxline.internal;

import io.boxline.Event;
import io.boxline.FencedException;
import io.boxline.PartitionLag;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.ValidationException;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.time.Clock;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * How {@link RemoteMembers} settles: reads the ack ids a fetch gave out, moves the cursors of
 * partitions whose events are all done in one write, and settles each other partition on its own
 * under the epoch of its lease, parking what the member's outcomes and the policy say.
 *
 * <p>Ack ids are as {@link RemoteMembers} makes them: {@code topicId.partition.epoch.from.sequence}
 * for a new event (fetched when the cursor stood at {@code from}) and {@code
 * topicId.partition.epoch.rATTEMPTS.sequence} for a parked retry.
 */
final class RemoteSettlement {
  private static final Pattern ACK =
      Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)\\.(r?)(\\d+)\\.(\\d+)");

  /** As a Java consumer's error text: a reason is kept with the parked event. */
  static final int MAX_REASON_LENGTH = FailurePolicy.MAX_ERROR_LENGTH;

  private final Store store;
  private final TopicCache topics;
  private final Clock clock;
  private final RemoteSessions sessions;
  private final Function<SubscriptionInfo, FailurePolicy> failures;

  /**
   * @param failures the failure policy of a subscription's remote members
   */
  RemoteSettlement(
      Store store,
      TopicCache topics,
      Clock clock,
      RemoteSessions sessions,
      Function<SubscriptionInfo, FailurePolicy> failures) {
    this.store = store;
    this.topics = topics;
    this.clock = clock;
    this.sessions = sessions;
    this.failures = failures;
  }

  /** {@link RemoteConsumers#settle}, for a member id already checked. */
  int settle(SubscriptionInfo sub, String memberId, List<Settlement> settlements) {
    // A settlement may park an event (a retry due later): the fetches of the group that are
    // under way or come after read again (counted before and after, as a fetch may look between).
    AtomicLong settling = sessions.settles(sub.name());
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
    FailurePolicy policy = failures.apply(sub);
    boolean nothingParked =
        !policy.deadLetterBlocksKey() && store.retrying(sub.id(), sub.name(), null, 1).isEmpty();
    boolean headsRead = false;
    List<Run> runs = new ArrayList<>();
    // Each partition is settled on its own: one that was taken over does not hold back the others.
    for (Map.Entry<PartitionKey, List<Ack>> e : byPartition.entrySet()) {
      Run run = nothingParked ? Run.of(e.getKey(), e.getValue()) : null;
      if (run != null) {
        if (run.last() > seenHeads.getOrDefault(run.key(), 0L) && !headsRead) {
          readHeads(sub); // not given out by a fetch here
          headsRead = true;
        }
        if (run.last() <= seenHeads.getOrDefault(run.key(), 0L)) {
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
      sessions.endSession(sub.name(), memberId);
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

  /**
   * Notes each partition's newest sequence as seen, from one read of the subscription's cursors.
   */
  private void readHeads(SubscriptionInfo sub) {
    for (PartitionLag l : store.lag(sub.id())) {
      sawHead(PartitionKey.of(topics.get(l.topic()).id(), l.partition()), l.lastSequence());
    }
  }

  /**
   * The newest sequence each partition was seen to hold here. A log only grows at its head (and a
   * topic's id is never reused), so a settlement of events up to a sequence seen here needs no read
   * to know the log holds them.
   */
  private final Map<PartitionKey, Long> seenHeads = new ConcurrentHashMap<>();

  void sawHead(PartitionKey key, long head) {
    seenHeads.merge(key, head, Math::max);
  }

  private record Ack(
      PartitionKey key, long epoch, boolean retry, long fromOrAttempt, long seq, Settlement s) {}

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
    FailurePolicy policy = failures.apply(sub);
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

  /**
   * The park of an event the member is not given, noting its key as blocked where it must hold the
   * later ones; null when the member gets it. A row that cannot be delivered as stored is
   * dead-lettered at once, through the policy (its hook and observers see it).
   */
  static Park skipped(
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

  /** Moves the partition's cursor from {@code from} to {@code to} under the epoch, with parks. */
  CommitOutcome settle(
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
}
