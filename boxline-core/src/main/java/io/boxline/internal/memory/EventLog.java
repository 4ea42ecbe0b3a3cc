package io.boxline.internal.memory;

import io.boxline.OutboxBacklog;
import io.boxline.RetentionPolicy;
import io.boxline.StartPosition;
import io.boxline.StoreException;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.SequencePlan;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoredEvent;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BiPredicate;
import java.util.function.Predicate;

/**
 * The publishing side of the in-memory store: the outbox, the log with its gap-free sequence per
 * partition, idempotency keys, the rows set aside as unplaceable, and the sequencer lease. Writes
 * of a transaction are buffered in it ({@link MemoryTransaction}) and applied at its commit; a
 * partition that an {@link io.boxline.Sequencing#IN_TRANSACTION} producer numbered stays locked
 * until then. Not thread-safe: the store calls it under its lock.
 */
final class EventLog {
  /** Partitions in the order the SQL dialects lock them: by topic id, then partition. */
  static final Comparator<PartitionKey> ORDER =
      Comparator.comparingLong(PartitionKey::topicId).thenComparingInt(PartitionKey::partition);

  /** One event in the log. Payloads are copied in and out, so nobody changes what is stored. */
  record Row(
      UUID id,
      long seq,
      String key,
      String type,
      String source,
      String contentType,
      byte[] payload,
      Map<String, String> headers,
      Instant createdAt,
      Instant deliverAt) {

    static Row of(OutboxRecord r, long seq, Instant createdAt) {
      return new Row(
          r.eventId(),
          seq,
          r.key(),
          r.type(),
          r.source(),
          r.contentType(),
          copy(r.payload()),
          r.headers() == null ? Map.of() : Map.copyOf(r.headers()),
          createdAt,
          r.deliverAt());
    }

    StoredEvent stored() {
      return new StoredEvent(
          id, seq, key, type, source, contentType, copy(payload), headers, createdAt, deliverAt);
    }
  }

  /** A partition's head (the last sequence handed out) and its events by sequence. */
  static final class Partition {
    long last;
    final TreeMap<Long, Row> rows = new TreeMap<>();
  }

  /** A committed outbox row; ids count up in commit order. */
  record OutboxRow(long id, OutboxRecord record, Instant createdAt) {}

  /** An outbox row the sequencer could not place, kept with the reason (nothing reads them). */
  record Rejected(OutboxRow row, String reason, Instant rejectedAt) {}

  /** The row lock of an idempotency key of a topic. */
  record IdempotencyKey(long topicId, String key) {}

  /** A copy of a payload (null stays null). */
  static byte[] copy(byte[] payload) {
    return payload == null ? null : payload.clone();
  }

  private record KeyOwner(UUID eventId, Instant createdAt) {}

  private final RowLocks locks;
  private final Map<PartitionKey, Partition> partitions = new HashMap<>();
  private final TreeMap<Long, OutboxRow> outbox = new TreeMap<>();
  private final Map<IdempotencyKey, KeyOwner> keys = new HashMap<>();
  private final List<Rejected> rejected = new ArrayList<>();
  private long nextOutboxId = 1;
  private String leaseOwner;
  private Instant leaseExpires = Instant.EPOCH;

  EventLog(RowLocks locks) {
    this.locks = locks;
  }

  // ------------------------------------------------------------------ partitions and reads
  void addPartitions(long topicId, int count) {
    for (int p = 0; p < count; p++) {
      partitions.putIfAbsent(PartitionKey.of(topicId, p), new Partition());
    }
  }

  boolean exists(PartitionKey k) {
    return partitions.containsKey(k);
  }

  /** The committed head of an existing partition. */
  long last(PartitionKey k) {
    return partitions.get(k).last;
  }

  List<PartitionHead> heads(List<PartitionKey> wanted) {
    List<PartitionHead> out = new ArrayList<>(wanted.size());
    for (PartitionKey k : wanted) {
      Partition p = partitions.get(k);
      if (p != null) {
        out.add(new PartitionHead(k.topicId(), k.partition(), p.last));
      }
    }
    return out;
  }

  /** Like {@link #read}, keeping only events with this key and id where they are not null. */
  List<StoredEvent> readWhere(
      PartitionKey k, long afterSequence, String key, UUID eventId, int limit) {
    Partition p = partitions.get(k);
    List<StoredEvent> out = new ArrayList<>();
    if (p == null) {
      return out;
    }
    for (Row r : p.rows.tailMap(afterSequence, false).values()) {
      if (out.size() >= limit) {
        break;
      }
      if ((key == null || key.equals(r.key())) && (eventId == null || eventId.equals(r.id()))) {
        out.add(r.stored());
      }
    }
    return out;
  }

  /** Forgets everything of the topic: partitions, log, outbox and set-aside rows, keys. */
  void deleteTopic(long topicId) {
    partitions.keySet().removeIf(k -> k.topicId() == topicId);
    outbox.values().removeIf(o -> o.record().topicId() == topicId);
    rejected.removeIf(r -> r.row().record().topicId() == topicId);
    keys.keySet().removeIf(k -> k.topicId() == topicId);
  }

  List<StoredEvent> read(PartitionKey k, long afterSequence, int limit) {
    Partition p = partitions.get(k);
    List<StoredEvent> out = new ArrayList<>();
    if (p == null) {
      return out;
    }
    for (Row r : p.rows.tailMap(afterSequence, false).values()) {
      if (out.size() >= limit) {
        break;
      }
      out.add(r.stored());
    }
    return out;
  }

  /** The event at {@code seq}, or null when the log does not hold it (purged). */
  Row row(PartitionKey k, long seq) {
    Partition p = partitions.get(k);
    return p == null ? null : p.rows.get(seq);
  }

  /** Whether the log holds exactly these event ids at these sequences. */
  boolean holds(PartitionKey k, List<io.boxline.spi.Settlement.HeldEvent> held) {
    for (io.boxline.spi.Settlement.HeldEvent h : held) {
      Row r = row(k, h.sequence());
      if (r == null || !r.id().equals(h.id())) {
        return false;
      }
    }
    return true;
  }

  /** Where a cursor of the partition starts: as {@code insert_cursors_*} computes it. */
  long startPosition(PartitionKey k, StartPosition start) {
    Partition p = partitions.get(k);
    return switch (start.kind()) {
      case EARLIEST -> 0;
      case LATEST -> p.last;
      case TIMESTAMP -> {
        for (Row r : p.rows.values()) {
          if (!r.createdAt().isBefore(start.timestamp())) {
            yield r.seq() - 1;
          }
        }
        yield p.last;
      }
    };
  }

  /** When the first event after {@code position} was created, or null. */
  Instant firstCreatedAfter(PartitionKey k, long position) {
    Partition p = partitions.get(k);
    if (p == null || p.last <= position) {
      return null;
    }
    Map.Entry<Long, Row> e = p.rows.higherEntry(position);
    return e == null ? null : e.getValue().createdAt();
  }

  // ------------------------------------------------------------------ publishing (in a
  // transaction)
  /**
   * Claims the idempotency keys of {@code records} for {@code tx}: per record, null when it has no
   * key or its key is now this event's, else the id of the event that owns it (an earlier one, or
   * the first of this list with the key). A key another open transaction claimed waits for it.
   */
  List<UUID> claimKeys(MemoryTransaction tx, List<OutboxRecord> records, Instant now) {
    List<UUID> owners = new ArrayList<>(records.size());
    Map<IdempotencyKey, UUID> seen = new HashMap<>();
    for (OutboxRecord r : records) {
      if (r.idempotencyKey() == null) {
        owners.add(null);
        continue;
      }
      IdempotencyKey k = new IdempotencyKey(r.topicId(), r.idempotencyKey());
      UUID owner = seen.get(k);
      boolean claimedNow = false;
      if (owner == null) {
        locks.awaitFree(tx, k);
        if (locks.owner(k) == tx) {
          owner = (UUID) tx.pending.get(k);
        } else if (keys.containsKey(k)) {
          owner = keys.get(k).eventId();
        } else {
          locks.acquire(tx, k);
          owner = r.eventId();
          claimedNow = true;
          tx.pending.put(k, owner);
          KeyOwner claimed = new KeyOwner(owner, now);
          tx.writes.add(() -> keys.put(k, claimed));
        }
        seen.put(k, owner);
      }
      // A key owned before is another publish's, even of this event id (published again after a
      // commit whose answer was lost): only the record that claimed it now is stored.
      owners.add(claimedNow ? null : owner);
    }
    return owners;
  }

  /** Adds {@code rows} to the outbox when {@code tx} commits. */
  void append(MemoryTransaction tx, List<OutboxRecord> rows, Instant now) {
    for (OutboxRecord r : rows) {
      OutboxRecord copy = copyOf(r);
      tx.writes.add(
          () -> {
            long id = nextOutboxId++;
            outbox.put(id, new OutboxRow(id, copy, now));
          });
    }
  }

  private static OutboxRecord copyOf(OutboxRecord r) {
    return new OutboxRecord(
        r.eventId(),
        r.topicId(),
        r.partition(),
        r.key(),
        r.type(),
        r.source(),
        r.contentType(),
        copy(r.payload()),
        r.headers() == null ? Map.of() : Map.copyOf(r.headers()),
        r.idempotencyKey(),
        r.deliverAt());
  }

  /**
   * Numbers {@code rows} (of IN_TRANSACTION topics) after each partition's head in list order,
   * locking the partitions for {@code tx} in key order; the events and heads are written at its
   * commit. Returns each row's sequence.
   */
  long[] appendToLog(MemoryTransaction tx, List<OutboxRecord> rows, Instant now) {
    Map<PartitionKey, Integer> counts = new TreeMap<>(ORDER);
    for (OutboxRecord r : rows) {
      counts.merge(PartitionKey.of(r.topicId(), r.partition()), 1, Integer::sum);
    }
    long found = counts.keySet().stream().filter(partitions::containsKey).count();
    if (found != counts.size()) {
      throw new StoreException(
          "append_to_log",
          "(in memory)",
          new SQLException("lock_partitions matched " + found + " of " + counts.size()));
    }
    Map<PartitionKey, Long> next = new HashMap<>();
    for (PartitionKey k : counts.keySet()) {
      locks.acquire(tx, k);
      long last = (Long) tx.pending.getOrDefault(k, partitions.get(k).last);
      next.put(k, last + 1);
      tx.pending.put(k, last + counts.get(k));
    }
    long[] seqs = new long[rows.size()];
    for (int i = 0; i < rows.size(); i++) {
      OutboxRecord r = rows.get(i);
      PartitionKey k = PartitionKey.of(r.topicId(), r.partition());
      long seq = next.merge(k, 1L, Long::sum) - 1;
      seqs[i] = seq;
      Row row = Row.of(r, seq, now);
      Partition p = partitions.get(k);
      tx.writes.add(
          () -> {
            p.rows.put(row.seq(), row);
            p.last = Math.max(p.last, row.seq());
          });
    }
    return seqs;
  }

  // ------------------------------------------------------------------ sequencer
  LeaseStatus acquireLease(String owner, Duration ttl, Instant now) {
    if (leaseOwner != null && !leaseOwner.equals(owner) && !leaseExpires.isBefore(now)) {
      return LeaseStatus.NOT_HELD;
    }
    leaseOwner = owner;
    leaseExpires = now.plus(ttl);
    return outbox.isEmpty() ? LeaseStatus.HELD_IDLE : LeaseStatus.HELD_WITH_WORK;
  }

  void releaseLease(String owner) {
    if (owner.equals(leaseOwner)) {
      leaseOwner = null;
      leaseExpires = Instant.EPOCH;
    }
  }

  /**
   * Moves up to {@code max} outbox rows into the log, in outbox order, with gap-free sequences per
   * partition; waits first for partitions an open transaction holds. Null when {@code owner} does
   * not hold the lease.
   */
  SequencedBatch sequence(
      String owner,
      Duration ttl,
      int max,
      PartitionAssigner assigner,
      boolean returnEvents,
      Instant now) {
    while (true) {
      if (!owner.equals(leaseOwner)) {
        return SequencedBatch.NOT_LEADER;
      }
      leaseExpires = now.plus(ttl);
      List<OutboxRow> taken = new ArrayList<>();
      for (OutboxRow r : outbox.values()) {
        if (taken.size() >= max) {
          break;
        }
        taken.add(r);
      }
      if (taken.isEmpty()) {
        return SequencedBatch.EMPTY;
      }
      SequencePlan plan = new SequencePlan(assigner);
      for (OutboxRow o : taken) {
        plan.add(o.record().topicId(), o.record().partition(), o.record().key());
      }
      Map<PartitionKey, Long> last = new HashMap<>();
      for (PartitionKey k : plan.partitions()) {
        Partition p = partitions.get(k);
        if (p != null) {
          last.put(k, p.last);
        }
      }
      PartitionKey busy =
          plan.partitions().stream().filter(k -> locks.owner(k) != null).findFirst().orElse(null);
      if (busy != null && last.size() == plan.partitions().size()) {
        locks.awaitFree(null, busy); // the lock was let go meanwhile: look at everything again
        continue;
      }
      plan.numberAfter(last); // fails on a partition that does not exist
      Map<PartitionKey, List<StoredEvent>> appended = returnEvents ? new HashMap<>() : Map.of();
      for (int i = 0; i < taken.size(); i++) {
        OutboxRow o = taken.get(i);
        PartitionKey k = plan.partition(i);
        Partition p = partitions.get(k);
        Row row = Row.of(o.record(), plan.sequence(i), o.createdAt());
        p.last = row.seq();
        p.rows.put(row.seq(), row);
        outbox.remove(o.id());
        if (returnEvents) {
          appended.computeIfAbsent(k, x -> new ArrayList<>()).add(row.stored());
        }
      }
      List<PartitionHead> heads = plan.heads();
      return new SequencedBatch(true, taken.size(), heads, appended);
    }
  }

  /** Moves outbox rows {@code unplaceable} says cannot be placed to the rejected rows. */
  int setAside(Predicate<OutboxRecord> unplaceable, Instant now) {
    int n = 0;
    for (var it = outbox.values().iterator(); it.hasNext(); ) {
      OutboxRow r = it.next();
      if (unplaceable.test(r.record())) {
        rejected.add(new Rejected(r, "its topic or partition does not exist", now));
        it.remove();
        n++;
      }
    }
    return n;
  }

  OutboxBacklog backlog() {
    return new OutboxBacklog(
        outbox.size(), outbox.isEmpty() ? null : outbox.firstEntry().getValue().createdAt());
  }

  // ------------------------------------------------------------------ retention
  /**
   * Deletes events of topics with a retention that are past its age or size bound, except, with
   * keepUnconsumed, those the slowest cursor of their partition (of the subscriptions the policy
   * still waits for) has not passed, and those some subscription keeps parked. Returns how many.
   */
  long purgeLog(
      Map<Long, RetentionPolicy> retentions,
      Instant now,
      java.util.function.ToLongBiFunction<PartitionKey, RetentionPolicy> slowestCursor,
      BiPredicate<PartitionKey, Long> parked) {
    long deleted = 0;
    for (Map.Entry<PartitionKey, Partition> e : partitions.entrySet()) {
      RetentionPolicy policy = retentions.get(e.getKey().topicId());
      if (policy == null) {
        continue;
      }
      Partition p = e.getValue();
      Instant cutoff = policy.maxAge() == null ? null : now.minus(policy.maxAge());
      long slowest = slowestCursor.applyAsLong(e.getKey(), policy);
      for (var it = p.rows.values().iterator(); it.hasNext(); ) {
        Row r = it.next();
        boolean expired =
            (cutoff != null && r.createdAt().isBefore(cutoff))
                || (policy.maxEventsPerPartition() > 0
                    && r.seq() <= p.last - policy.maxEventsPerPartition());
        if (expired
            && (!policy.keepUnconsumed() || r.seq() <= slowest)
            && !parked.test(e.getKey(), r.seq())) {
          it.remove();
          deleted++;
        }
      }
    }
    return deleted;
  }

  long purgeKeys(Instant cutoff) {
    long before = keys.size();
    keys.values().removeIf(o -> o.createdAt().isBefore(cutoff));
    return before - keys.size();
  }
}
