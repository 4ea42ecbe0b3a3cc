package io.boxline.internal.memory;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.StoreException;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CursorStore;
import io.boxline.spi.InboxStore;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.ParkingStore;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.Settlement;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The consumers' side of {@link InMemoryStore} (its roles {@link CursorStore}, {@link ParkingStore}
 * and {@link InboxStore}): reads of the log, cursor moves fenced by epoch and position, fenced
 * transactions, parked events and dead letters, the inbox. Split from the store only to keep each
 * file short.
 */
abstract class MemoryCursorStore implements CursorStore, ParkingStore, InboxStore {
  final MemoryDatabase db;

  MemoryCursorStore(MemoryDatabase db) {
    this.db = db;
  }

  /** The store's transaction behind {@code c} (also through a connection that wraps it). */
  final MemoryTransaction transaction(Connection c) {
    Objects.requireNonNull(c, "connection");
    MemoryTransaction t = null;
    if (c instanceof MemoryTransaction.Handle h) {
      t = h.transaction();
    } else {
      try {
        if (c.isWrapperFor(MemoryTransaction.Handle.class)) {
          t = c.unwrap(MemoryTransaction.Handle.class).transaction();
        }
      } catch (SQLException e) {
        throw new StoreException("cannot unwrap the connection: " + e.getMessage(), e);
      }
    }
    if (t == null || !t.belongsTo(db)) {
      throw new IllegalArgumentException(
          "the in-memory store works only in its own transactions: open one with"
              + " store.openTransaction() or boxline.inTransaction(...), not "
              + c);
    }
    if (t.closed()) {
      throw new StoreException(
          "the in-memory transaction is closed", new SQLException("connection closed", "08003"));
    }
    return t;
  }

  // ------------------------------------------------------------------ cursors
  @Override
  public List<java.util.OptionalLong> fenceCursors(
      long subscriptionId, List<io.boxline.spi.Fence> fences, String owner) {
    List<PartitionKey> partitions = io.boxline.spi.Fence.partitions(fences);
    long[] epochs = fences.stream().mapToLong(io.boxline.spi.Fence::epoch).toArray();
    long[] positions =
        db.locked(() -> db.cursors.fence(subscriptionId, partitions, epochs, owner, db.now()));
    List<java.util.OptionalLong> out = new ArrayList<>(positions.length);
    for (long p : positions) {
      out.add(p < 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(p));
    }
    return out;
  }

  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    return db.locked(
        () -> {
          Instant now = db.now();
          List<Backlog> out = new ArrayList<>();
          db.cursors
              .of(subscriptionId)
              .forEach(
                  (k, c) -> {
                    long last = db.log.last(k);
                    boolean due = db.parking.retryDue(subscriptionId, k, now);
                    if (last > c.position || due) {
                      out.add(new Backlog(k.topicId(), k.partition(), last, due));
                    }
                  });
          return out;
        });
  }

  @Override
  public List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit) {
    return db.locked(() -> db.log.read(PartitionKey.of(topicId, partition), afterSequence, limit));
  }

  @Override
  public List<StoredEvent> readWhere(
      long topicId,
      int partition,
      long afterSequence,
      String key,
      java.util.UUID eventId,
      int limit) {
    return db.locked(
        () ->
            db.log.readWhere(
                PartitionKey.of(topicId, partition), afterSequence, key, eventId, limit));
  }

  @Override
  public CommitOutcome settleIn(Connection tx, long subscriptionId, Settlement settlement) {
    MemoryTransaction t = transaction(tx);
    PartitionKey partition = settlement.partition();
    return db.locked(
        () -> {
          // The cursor's row lock, held until the transaction ends, as an UPDATE takes it.
          db.locks.acquire(t, new Cursors.CursorKey(subscriptionId, partition));
          if (settlement.checksLog() && !db.log.holds(partition, settlement.held())) {
            return CommitOutcome.LOG_CHANGED;
          }
          CommitOutcome why =
              db.cursors.check(
                  subscriptionId, partition, settlement.expectedPosition(), settlement.epoch());
          if (why != null) {
            return why;
          }
          Instant now = db.now();
          t.writes.add(() -> write(subscriptionId, settlement, now));
          return CommitOutcome.COMMITTED;
        });
  }

  @Override
  public List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements) {
    return db.locked(
        () -> {
          db.cursors.awaitAllFree(
              subscriptionId, settlements.stream().map(Settlement::partition).toList());
          List<CommitOutcome> out = new ArrayList<>(settlements.size());
          for (Settlement s : settlements) {
            out.add(settleLocked(subscriptionId, s));
          }
          return out;
        });
  }

  /** One settlement, under the lock, the cursor free. */
  private CommitOutcome settleLocked(long subscriptionId, Settlement s) {
    if (s.checksLog() && !db.log.holds(s.partition(), s.held())) {
      return CommitOutcome.LOG_CHANGED;
    }
    CommitOutcome why =
        db.cursors.check(subscriptionId, s.partition(), s.expectedPosition(), s.epoch());
    if (why != null) {
      return why;
    }
    write(subscriptionId, s, db.now());
    return CommitOutcome.COMMITTED;
  }

  /** A settlement's writes: parks, parked events done, the cursor move. */
  private void write(long subscriptionId, Settlement s, Instant now) {
    db.parking.insert(subscriptionId, s.partition(), s.parks(), now);
    for (long seq : s.doneParked()) {
      db.parking.remove(subscriptionId, s.partition(), seq);
    }
    db.cursors.move(subscriptionId, s.partition(), s.position(), now);
  }

  // ------------------------------------------------------------------ parked events
  @Override
  public ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks) {
    return db.locked(() -> db.parking.summary(subscriptionId, partition, deadBlocks));
  }

  @Override
  public List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, Instant now, int limit) {
    return db.locked(
        () -> {
          List<ParkedEvent> out = new ArrayList<>();
          for (Parking.Parked p :
              db.parking.due(subscriptionId, partition, deadBlocks, now, limit)) {
            EventLog.Row row = db.log.row(partition, p.seq);
            if (row != null) {
              out.add(new ParkedEvent(row.stored(), p.attempts, p.firstFailedAt));
            }
          }
          return out;
        });
  }

  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    if (outcomes.isEmpty()) {
      return true;
    }
    return db.locked(
        () -> {
          Cursors.Cursor c = db.cursors.get(subscriptionId, partition);
          if (c == null
              || c.epoch != epoch
              || !db.parking.allParked(subscriptionId, partition, outcomes.keySet())) {
            return false;
          }
          Instant now = db.now();
          outcomes.forEach((seq, r) -> db.parking.resolve(subscriptionId, partition, seq, r, now));
          return true;
        });
  }

  @Override
  public List<io.boxline.DeadLetterReason> deadLetterReasons(long subscriptionId, int limit) {
    return db.locked(
        () -> {
          java.util.Map<String, long[]> counts = new java.util.HashMap<>();
          java.util.Map<String, Instant[]> times = new java.util.HashMap<>();
          for (Parking.Parked p :
              db.parking.dead(subscriptionId, DeadLetterQuery.of("any"), null, null, 0)) {
            String reason = p.lastError == null ? "" : p.lastError;
            if (reason.length() > io.boxline.DeadLetterReason.MAX_LENGTH) {
              reason = reason.substring(0, io.boxline.DeadLetterReason.MAX_LENGTH);
            }
            counts.computeIfAbsent(reason, r -> new long[1])[0]++;
            Instant[] t = times.computeIfAbsent(reason, r -> new Instant[] {p.deadAt, p.deadAt});
            if (p.deadAt != null && (t[0] == null || p.deadAt.isBefore(t[0]))) {
              t[0] = p.deadAt;
            }
            if (p.deadAt != null && (t[1] == null || p.deadAt.isAfter(t[1]))) {
              t[1] = p.deadAt;
            }
          }
          List<io.boxline.DeadLetterReason> out = new ArrayList<>();
          counts.forEach(
              (r, n) ->
                  out.add(
                      new io.boxline.DeadLetterReason(r, n[0], times.get(r)[0], times.get(r)[1])));
          out.sort(
              java.util.Comparator.comparingLong(io.boxline.DeadLetterReason::count)
                  .reversed()
                  .thenComparing(io.boxline.DeadLetterReason::reason));
          return out.size() > limit ? new ArrayList<>(out.subList(0, limit)) : out;
        });
  }

  @Override
  public List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.locked(
        () -> {
          List<DeadLetter> out = new ArrayList<>();
          for (Parking.Parked p :
              db.parking.dead(subscriptionId, q, topicOf(q), keyOf(q.after()), seqOf(q.after()))) {
            EventLog.Row row = db.log.row(p.partition, p.seq);
            if (row == null) {
              continue;
            }
            if (out.size() >= q.limit()) {
              break;
            }
            StoredEvent s = row.stored();
            Event e =
                new Event(
                    s.id(),
                    db.catalog.topicOf(p.partition.topicId()).name(),
                    p.partition.partition(),
                    s.sequence(),
                    s.key(),
                    s.type(),
                    s.source(),
                    s.contentType(),
                    s.payload(),
                    s.headers(),
                    s.createdAt(),
                    s.deliverAt());
            out.add(
                new DeadLetter(
                    q.subscription(), e, p.attempts, p.lastError, p.firstFailedAt, p.deadAt));
          }
          return out;
        });
  }

  @Override
  public List<io.boxline.RetryingEvent> retrying(
      long subscriptionId, String subscription, io.boxline.EventPosition after, int limit) {
    return db.locked(
        () -> {
          List<io.boxline.RetryingEvent> out = new ArrayList<>();
          for (Parking.Parked p : db.parking.notDead(subscriptionId, keyOf(after), seqOf(after))) {
            EventLog.Row row = db.log.row(p.partition, p.seq);
            if (row == null) {
              continue;
            }
            if (out.size() >= limit) {
              break;
            }
            Event e =
                row.stored()
                    .toEvent(
                        db.catalog.topicOf(p.partition.topicId()).name(), p.partition.partition());
            out.add(
                new io.boxline.RetryingEvent(
                    subscription,
                    e,
                    p.state == io.boxline.spi.ParkState.WAITING,
                    p.attempts,
                    p.nextAttemptAt,
                    p.lastError,
                    p.firstFailedAt));
          }
          return out;
        });
  }

  /** The partition of a page's "after" position, or null for the first page. */
  private PartitionKey keyOf(io.boxline.EventPosition after) {
    if (after == null) {
      return null;
    }
    TopicInfo t =
        db.catalog
            .topic(after.topic())
            .orElseThrow(
                () ->
                    new io.boxline.NotFoundException(
                        "topic '" + after.topic() + "' does not exist"));
    return PartitionKey.of(t.id(), after.partition());
  }

  private static long seqOf(io.boxline.EventPosition after) {
    return after == null ? 0 : after.sequence();
  }

  /** The query's topic id: null when it names none, -1 when it does not exist. */
  private Long topicOf(DeadLetterQuery q) {
    return q.topic() == null ? null : db.catalog.topic(q.topic()).map(TopicInfo::id).orElse(-1L);
  }

  private List<Parking.Parked> deadLimited(long subscriptionId, DeadLetterQuery q) {
    List<Parking.Parked> dead =
        db.parking.dead(subscriptionId, q, topicOf(q), keyOf(q.after()), seqOf(q.after()));
    return dead.size() > q.limit() ? dead.subList(0, q.limit()) : dead;
  }

  /** Redriven retries are due now: every listener re-checks everything. */
  @Override
  public int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    int n =
        db.locked(
            () -> {
              List<Parking.Parked> dead = deadLimited(subscriptionId, q);
              db.parking.redrive(dead, db.now());
              return dead.size();
            });
    if (n > 0) {
      db.wakeups.resynchronize();
    }
    return n;
  }

  @Override
  public List<io.boxline.FailureCounts> failureCounts() {
    return db.locked(
        () -> {
          List<io.boxline.FailureCounts> out = new ArrayList<>();
          for (SubscriptionInfo s : db.catalog.subscriptions()) {
            long[] n = db.parking.counts(s.id());
            if (n[0] + n[1] + n[2] > 0) {
              out.add(new io.boxline.FailureCounts(s.name(), n[0], n[1], n[2]));
            }
          }
          return out;
        });
  }

  @Override
  public java.util.Map<String, Long> inboxSizes() {
    return db.locked(
        () -> {
          java.util.Map<String, Long> out = new java.util.LinkedHashMap<>();
          for (SubscriptionInfo s : db.catalog.subscriptions()) {
            long n = db.parking.inboxSize(s.id());
            if (n > 0) {
              out.put(s.name(), n);
            }
          }
          return out;
        });
  }

  @Override
  public long inboxSize(long subscriptionId) {
    return db.locked(() -> db.parking.inboxSize(subscriptionId));
  }

  @Override
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.locked(
        () -> {
          List<Parking.Parked> dead = new ArrayList<>(deadLimited(subscriptionId, q));
          db.parking.discard(subscriptionId, dead);
          return dead.size();
        });
  }

  // ------------------------------------------------------------------ inbox
  @Override
  public boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    MemoryTransaction t = transaction(tx);
    return db.locked(() -> db.parking.claim(t, subscriptionId, key, db.now()));
  }

  @Override
  public boolean inboxSeen(long subscriptionId, String key) {
    return db.locked(() -> db.parking.seen(subscriptionId, key));
  }

  @Override
  public void inboxRecord(long subscriptionId, String key) {
    db.locked(() -> db.parking.record(subscriptionId, key, db.now()));
  }
}
