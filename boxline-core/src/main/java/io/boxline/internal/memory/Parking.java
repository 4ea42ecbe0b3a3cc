package io.boxline.internal.memory;

import io.boxline.DeadLetterQuery;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * What subscriptions set aside or remember in the in-memory store: parked events (retries, events
 * waiting behind an earlier one of their key, dead letters) and the inbox. The head of a key is its
 * oldest parked event that counts (a dead letter counts only when dead letters block keys); a
 * keyless event is a head of its own. Not thread-safe: the store calls it under its lock.
 */
final class Parking {
  /** One parked event of a subscription's partition. */
  static final class Parked {
    final PartitionKey partition;
    final long seq;
    final UUID eventId;
    final String key;
    final String type;
    ParkState state;
    int attempts;
    Instant nextAttemptAt;
    String lastError;
    Instant firstFailedAt;
    Instant lastFailedAt;
    Instant deadAt;

    Parked(PartitionKey partition, Park p, Instant now) {
      this.partition = partition;
      this.seq = p.seq();
      this.eventId = p.eventId();
      this.key = p.key();
      this.type = p.type();
      this.state = p.state();
      this.attempts = p.attempts();
      this.nextAttemptAt = p.nextAttemptAt();
      this.lastError = p.lastError();
      if (p.state() != ParkState.WAITING) {
        firstFailedAt = now;
        lastFailedAt = now;
      }
      if (p.state() == ParkState.DEAD) {
        deadAt = now;
      }
    }
  }

  /** The row lock of an inbox key. */
  record InboxKey(long subscriptionId, String key) {}

  private final RowLocks locks;
  private final Map<Long, Map<PartitionKey, TreeMap<Long, Parked>>> parked = new HashMap<>();
  private final Map<InboxKey, Instant> inbox = new HashMap<>();

  Parking(RowLocks locks) {
    this.locks = locks;
  }

  private TreeMap<Long, Parked> rows(long subscriptionId, PartitionKey k) {
    return parked
        .computeIfAbsent(subscriptionId, s -> new TreeMap<>(EventLog.ORDER))
        .computeIfAbsent(k, x -> new TreeMap<>());
  }

  /** Parks {@code parks}; an event parked already stays as it is. */
  void insert(long subscriptionId, PartitionKey k, List<Park> parks, Instant now) {
    TreeMap<Long, Parked> rows = rows(subscriptionId, k);
    for (Park p : parks) {
      rows.putIfAbsent(p.seq(), new Parked(k, p, now));
    }
  }

  /** The heads of the partition's keys, in sequence order. */
  private List<Parked> heads(long subscriptionId, PartitionKey k, boolean deadBlocks) {
    List<Parked> heads = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    for (Parked p : rows(subscriptionId, k).values()) {
      if ((p.state != ParkState.DEAD || deadBlocks) && (p.key == null || keys.add(p.key))) {
        heads.add(p);
      }
    }
    return heads;
  }

  ParkedSummary summary(long subscriptionId, PartitionKey k, boolean deadBlocks) {
    Set<String> blocked = new HashSet<>();
    Instant next = null;
    for (Parked h : heads(subscriptionId, k, deadBlocks)) {
      if (h.key != null) {
        blocked.add(h.key);
      }
      if (h.state != ParkState.DEAD && (next == null || h.nextAttemptAt.isBefore(next))) {
        next = h.nextAttemptAt;
      }
    }
    return new ParkedSummary(blocked, next);
  }

  /** The heads due at {@code now} (not dead), oldest first, at most {@code limit}. */
  List<Parked> due(
      long subscriptionId, PartitionKey k, boolean deadBlocks, Instant now, int limit) {
    List<Parked> out = new ArrayList<>();
    for (Parked h : heads(subscriptionId, k, deadBlocks)) {
      if (out.size() >= limit) {
        break;
      }
      if (h.state != ParkState.DEAD && !h.nextAttemptAt.isAfter(now)) {
        out.add(h);
      }
    }
    return out;
  }

  /** Whether any parked event of the partition that is not dead is due at {@code now}. */
  boolean retryDue(long subscriptionId, PartitionKey k, Instant now) {
    for (Parked p : rows(subscriptionId, k).values()) {
      if (p.state != ParkState.DEAD && !p.nextAttemptAt.isAfter(now)) {
        return true;
      }
    }
    return false;
  }

  /** Whether every sequence of {@code outcomes} is parked (else none may be recorded). */
  boolean allParked(long subscriptionId, PartitionKey k, Set<Long> seqs) {
    return rows(subscriptionId, k).keySet().containsAll(seqs);
  }

  /** Records the outcome of another attempt (after {@link #allParked}). */
  void resolve(long subscriptionId, PartitionKey k, long seq, Resolution r, Instant now) {
    TreeMap<Long, Parked> rows = rows(subscriptionId, k);
    if (r.kind() == Resolution.Kind.DONE) {
      rows.remove(seq);
      return;
    }
    Parked p = rows.get(seq);
    if (p == null) {
      return;
    }
    p.state = r.kind() == Resolution.Kind.DEAD ? ParkState.DEAD : ParkState.RETRY;
    p.attempts = r.attempts();
    if (r.nextAttemptAt() != null) {
      p.nextAttemptAt = r.nextAttemptAt();
    }
    p.lastError = r.error();
    if (p.firstFailedAt == null) {
      p.firstFailedAt = now;
    }
    p.lastFailedAt = now;
    p.deadAt = p.state == ParkState.DEAD ? now : null;
  }

  void remove(long subscriptionId, PartitionKey k, long seq) {
    rows(subscriptionId, k).remove(seq);
  }

  /** Drops the subscription's parked events after each partition's new position. */
  void dropAfter(long subscriptionId, Map<PartitionKey, Long> positions) {
    positions.forEach((k, position) -> rows(subscriptionId, k).tailMap(position, false).clear());
  }

  /** Whether some subscription keeps the event parked (retention keeps it in the log). */
  boolean parkedAnywhere(PartitionKey k, long seq) {
    for (Map<PartitionKey, TreeMap<Long, Parked>> bySub : parked.values()) {
      TreeMap<Long, Parked> rows = bySub.get(k);
      if (rows != null && rows.containsKey(seq)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The subscription's dead letters that match the query, in (topic, partition, sequence) order;
   * {@code topicId} is the query's topic (-1 when it does not exist, null when it names none).
   */
  /**
   * The dead letters {@code q} selects, in log order, past {@code after} (the position's partition
   * key and sequence; null for the first page).
   */
  List<Parked> dead(
      long subscriptionId, DeadLetterQuery q, Long topicId, PartitionKey after, long afterSeq) {
    List<Parked> out = new ArrayList<>();
    for (TreeMap<Long, Parked> rows : parked.getOrDefault(subscriptionId, Map.of()).values()) {
      for (Parked p : rows.values()) {
        if (p.state == ParkState.DEAD && matches(p, q, topicId) && past(p, after, afterSeq)) {
          out.add(p);
        }
      }
    }
    out.sort(LOG_ORDER);
    return out;
  }

  private static final java.util.Comparator<Parked> LOG_ORDER =
      java.util.Comparator.comparingLong((Parked p) -> p.partition.topicId())
          .thenComparingInt(p -> p.partition.partition())
          .thenComparingLong(p -> p.seq);

  private static boolean past(Parked p, PartitionKey after, long afterSeq) {
    if (after == null) {
      return true;
    }
    int c = Long.compare(p.partition.topicId(), after.topicId());
    if (c == 0) {
      c = Integer.compare(p.partition.partition(), after.partition());
    }
    return c > 0 || (c == 0 && p.seq > afterSeq);
  }

  private static boolean matches(Parked p, DeadLetterQuery q, Long topicId) {
    return (topicId == null || p.partition.topicId() == topicId)
        && (q.type() == null || q.type().equals(p.type))
        && (q.key() == null || q.key().equals(p.key))
        && (q.eventId() == null || q.eventId().equals(p.eventId))
        && (q.errorContains() == null
            || (p.lastError != null && p.lastError.contains(q.errorContains())))
        && (q.deadBefore() == null || p.deadAt.isBefore(q.deadBefore()))
        && (q.deadAfter() == null || p.deadAt.isAfter(q.deadAfter()));
  }

  /** Sends dead letters back for a retry now, with a fresh attempt count. */
  void redrive(List<Parked> dead, Instant now) {
    for (Parked p : dead) {
      p.state = ParkState.RETRY;
      p.attempts = 0;
      p.nextAttemptAt = now;
      p.deadAt = null;
    }
  }

  void discard(long subscriptionId, List<Parked> dead) {
    for (Parked p : dead) {
      remove(subscriptionId, p.partition, p.seq);
    }
  }

  long purgeDead(Instant cutoff) {
    long n = 0;
    for (Map<PartitionKey, TreeMap<Long, Parked>> bySub : parked.values()) {
      for (TreeMap<Long, Parked> rows : bySub.values()) {
        int before = rows.size();
        rows.values().removeIf(p -> p.state == ParkState.DEAD && p.deadAt.isBefore(cutoff));
        n += before - rows.size();
      }
    }
    return n;
  }

  // ------------------------------------------------------------------ inbox
  /**
   * In {@code tx}: records the key when {@code tx} commits; false when it was recorded before (or
   * earlier in {@code tx}). A key another open transaction claimed waits for it.
   */
  boolean claim(MemoryTransaction tx, long subscriptionId, String key, Instant now) {
    InboxKey k = new InboxKey(subscriptionId, key);
    locks.awaitFree(tx, k);
    if (locks.owner(k) == tx || inbox.containsKey(k)) {
      return false;
    }
    locks.acquire(tx, k);
    tx.writes.add(() -> inbox.putIfAbsent(k, now));
    return true;
  }

  boolean seen(long subscriptionId, String key) {
    return inbox.containsKey(new InboxKey(subscriptionId, key));
  }

  /** Records the key on its own, unless recorded; waits for a transaction that claimed it. */
  void record(long subscriptionId, String key, Instant now) {
    InboxKey k = new InboxKey(subscriptionId, key);
    locks.awaitFree(null, k);
    inbox.putIfAbsent(k, now);
  }

  long purgeInbox(Instant cutoff) {
    int before = inbox.size();
    inbox.values().removeIf(t -> t.isBefore(cutoff));
    return before - inbox.size();
  }

  /** Forgets the subscription's parked events and inbox. */
  void deleteSubscription(long subscriptionId) {
    parked.remove(subscriptionId);
    inbox.keySet().removeIf(k -> k.subscriptionId() == subscriptionId);
  }

  /** Forgets every subscription's parked events on the topic. */
  void deleteTopic(long topicId) {
    parked.values().forEach(m -> m.keySet().removeIf(k -> k.topicId() == topicId));
  }

  /** Retrying, waiting and dead events of the subscription: {@code [retry, waiting, dead]}. */
  long[] counts(long subscriptionId) {
    long[] n = new long[3];
    parked
        .getOrDefault(subscriptionId, Map.of())
        .values()
        .forEach(
            rows ->
                rows.values()
                    .forEach(
                        p ->
                            n[
                                p.state == ParkState.RETRY
                                    ? 0
                                    : p.state == ParkState.WAITING ? 1 : 2]++));
    return n;
  }

  long inboxSize(long subscriptionId) {
    return inbox.keySet().stream().filter(k -> k.subscriptionId() == subscriptionId).count();
  }

  /** The subscription's parked events that are not dead, soonest due first. */
  /**
   * The parked events that are not dead, in log order, past {@code after} (null: from the start).
   */
  List<Parked> notDead(long subscriptionId, PartitionKey after, long afterSeq) {
    List<Parked> out = new ArrayList<>();
    parked
        .getOrDefault(subscriptionId, Map.of())
        .values()
        .forEach(
            rows ->
                rows.values().stream()
                    .filter(p -> p.state != ParkState.DEAD && past(p, after, afterSeq))
                    .forEach(out::add));
    out.sort(LOG_ORDER);
    return out;
  }
}
