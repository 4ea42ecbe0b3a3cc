package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.FailureCounts;
import io.boxline.RetentionPolicy;
import io.boxline.TopicName;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.Resolution;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * What subscriptions set aside or remember, on every dialect: parked events (retries, dead
 * letters), the inbox, and retention (batched deletes, each batch its own short transaction). What
 * differs between databases comes from the {@link SqlDialect} and the dialect's queries.
 */
final class SqlParking {
  /** Dead tuples across Boxline's tables below which vacuuming is not worth a statement. */
  private static final long VACUUM_THRESHOLD = 1_000;

  private final JdbcSql db;
  private final SqlDialect dialect;
  private final ToLongFunction<TopicName> topicIds;
  private final boolean vacuumWhenAutovacuumOff;
  private final VacuumSkips vacuumSkips = new VacuumSkips();
  private final LogSegments segments;

  /**
   * @param topicIds a topic's id by name, -1 when it does not exist
   * @param vacuumWhenAutovacuumOff after a purge, vacuum Boxline's tables when the server does not
   *     (only where the dialect has {@code maintenance_needed}: PostgreSQL)
   * @param segments the log's time segments, null where the dialect deletes row by row only
   */
  SqlParking(
      JdbcSql db,
      SqlDialect dialect,
      ToLongFunction<TopicName> topicIds,
      boolean vacuumWhenAutovacuumOff,
      LogSegments segments) {
    this.db = db;
    this.dialect = dialect;
    this.topicIds = topicIds;
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    this.segments = segments;
  }

  // ------------------------------------------------------------------ inbox
  boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    try (PreparedStatement ps = tx.prepareStatement(db.sql("inbox_claim"))) {
      ps.setLong(1, subscriptionId);
      ps.setString(2, dialect.inboxLookupKey(key));
      if (dialect.inboxKeepsKey()) {
        ps.setString(3, key);
      }
      return dialect.insertUnlessPresent(ps) == 1;
    } catch (SQLException e) {
      throw db.fail("inbox_claim", e);
    }
  }

  boolean inboxSeen(long subscriptionId, String key) {
    return db.one(
            "inbox_seen",
            ps -> {
              ps.setLong(1, subscriptionId);
              ps.setString(2, dialect.inboxLookupKey(key));
            },
            rs -> rs.getBoolean(1))
        .orElse(false);
  }

  Map<String, Long> inboxSizes() {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    db.list("inbox_sizes", ps -> {}, rs -> out.put(rs.getString(1), rs.getLong(2)));
    return out;
  }

  long inboxSize(long subscriptionId) {
    return db.one("inbox_size", ps -> ps.setLong(1, subscriptionId), rs -> rs.getLong(1))
        .orElse(0L);
  }

  // ------------------------------------------------------------------ retention
  void setRetention(long topicId, RetentionPolicy policy) {
    db.update(
        "set_retention",
        ps -> {
          ps.setObject(
              1, policy.maxAge() == null ? null : policy.maxAge().toMillis(), Types.BIGINT);
          ps.setBoolean(2, policy.keepUnconsumed());
          ps.setLong(3, policy.maxEventsPerPartition());
          ps.setLong(4, policy.abandonAfter().toMillis());
          ps.setLong(5, topicId);
        });
  }

  /** Which parts of a purge have work (all, where the dialect cannot tell cheaply). */
  private record Work(
      boolean log,
      boolean inbox,
      boolean deadLetters,
      boolean idempotency,
      boolean autovacuumOff,
      long deadTuples) {
    static final Work ALL = new Work(true, true, true, true, false, 0);
  }

  RetentionPolicy retention(long topicId) {
    return db.one(
            "topic_retention",
            ps -> ps.setLong(1, topicId),
            rs -> {
              long ms = rs.getLong(1);
              Duration age = rs.wasNull() ? null : Duration.ofMillis(ms);
              return new RetentionPolicy(
                  age, rs.getBoolean(2), rs.getLong(3), Duration.ofMillis(rs.getLong(4)));
            })
        .orElse(RetentionPolicy.forever());
  }

  PurgeResult purge(Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch) {
    Work todo =
        db.has("maintenance_needed")
            ? maintenanceNeeded(inboxAge, deadLetterAge, idempotencyAge)
            : Work.ALL;
    LogSegments.Run segmentRun = LogSegments.Run.ROWS_ONLY;
    if (todo.log() && segments != null) {
      segmentRun = segments.maintain();
    }
    long events = todo.log() ? segmentRun.events() + purgeLog(segmentRun, batch) : 0;
    long inbox = todo.inbox() ? purgeAll("purge_inbox", inboxAge, batch) : 0;
    long dead = todo.deadLetters() ? purgeAll("purge_dead_letters", deadLetterAge, batch) : 0;
    long keys = todo.idempotency() ? purgeAll("purge_idempotency", idempotencyAge, batch) : 0;
    // The statistics lag a little; what this run deleted counts as dead already.
    if (vacuumWhenAutovacuumOff
        && todo.autovacuumOff()
        && todo.deadTuples() + events + inbox + dead + keys >= VACUUM_THRESHOLD) {
      vacuumHotTables();
    }
    return new PurgeResult(events, inbox, dead, keys, segmentRun.segments(), segmentRun.events());
  }

  /** One statement that says which purges have rows to delete (PostgreSQL). */
  private Work maintenanceNeeded(Duration inboxAge, Duration deadLetterAge, Duration keyAge) {
    return db.one(
            "maintenance_needed",
            ps -> {
              dialect.bindDuration(ps, 1, inboxAge);
              dialect.bindDuration(ps, 2, deadLetterAge);
              dialect.bindDuration(ps, 3, keyAge);
            },
            rs ->
                new Work(
                    rs.getBoolean(1),
                    rs.getBoolean(2),
                    rs.getBoolean(3),
                    rs.getBoolean(4),
                    rs.getBoolean(5),
                    rs.getLong(6)))
        .orElse(Work.ALL);
  }

  /** Whether the server runs autovacuum (PostgreSQL; warned about at start when it does not). */
  boolean autovacuumOn() {
    return db.one("autovacuum_on", ps -> {}, rs -> rs.getBoolean(1)).orElse(false);
  }

  /**
   * A user who may not vacuum a table (the application role of least-privilege.md) gets a warning
   * from the server, not an error: say so once, and go on without the vacuum.
   */
  private void vacuumHotTables() {
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute(db.sql("vacuum_hot_tables")); // auto-commit: VACUUM cannot run in a transaction
      String skipped = VacuumSkips.skipped(st);
      if (skipped != null) {
        vacuumSkips.warnOnce(
            "autovacuum is off for Boxline's tables and the retention loop cannot vacuum them as"
                + " database user '"
                + c.getMetaData().getUserName()
                + "' ("
                + skipped
                + "): they only shrink when someone else does. Turn autovacuum on, vacuum them as"
                + " their owner, or (PostgreSQL 17+) GRANT MAINTAIN on them to this user;"
                + " JdbcStore.builder(..).vacuumWhenAutovacuumOff(false) stops the attempts."
                + " Retention goes on without it");
      }
    } catch (SQLException e) {
      throw db.fail("vacuum_hot_tables", e);
    }
  }

  /**
   * Deletes events past retention: by age and by count in one statement each where the dialect has
   * them, else by picking a batch of expired rows and deleting them by key, until a batch is short.
   */
  private long purgeLog(LogSegments.Run segmentRun, int batch) {
    if (!db.has("purge_log_pick")) {
      long byAge = segmentRun.rowsByAge() ? purgeByAge(segmentRun, batch) : 0;
      return byAge + purgeAll("purge_log_by_count", null, batch);
    }
    long total = 0;
    String step = "purge_log_pick";
    try (Connection c = db.connect();
        PreparedStatement pick = c.prepareStatement(db.sql("purge_log_pick"));
        PreparedStatement delete = c.prepareStatement(db.sql("purge_log_delete"))) {
      while (true) {
        step = "purge_log_pick";
        int at = 1;
        if (segments != null) {
          pick.setLong(at++, segmentRun.segmentedFromMs());
          pick.setLong(at++, segmentRun.graceMs());
        }
        pick.setInt(at, batch);
        List<LogKey> rows = new ArrayList<>();
        try (ResultSet rs = pick.executeQuery()) {
          while (rs.next()) {
            rows.add(new LogKey(rs.getLong(1), rs.getInt(2), rs.getLong(3)));
          }
        }
        if (rows.isEmpty()) {
          return total;
        }
        step = "purge_log_delete";
        total += dialect.deleteRows(delete, rows);
        if (rows.size() < batch) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw db.fail(step, e);
    }
  }

  /** {@code purge_log} in batches: by age, leaving the topics that segments serve to them. */
  private long purgeByAge(LogSegments.Run segmentRun, int batch) {
    long total = 0;
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(db.sql("purge_log"))) {
      while (true) {
        ps.setLong(1, segmentRun.segmentedFromMs());
        ps.setLong(2, segmentRun.graceMs());
        ps.setInt(3, batch);
        int n = ps.executeUpdate();
        total += n;
        if (n < batch) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw db.fail("purge_log", e);
    }
  }

  /**
   * Runs a batched delete (older than {@code age}, when given) until a batch comes back short; each
   * batch commits on its own.
   */
  private long purgeAll(String name, Duration age, int batch) {
    long total = 0;
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(db.sql(name))) {
      while (true) {
        int i = 1;
        if (age != null) {
          dialect.bindDuration(ps, i++, age);
        }
        ps.setInt(i, batch);
        int n = ps.executeUpdate();
        total += n;
        if (n < batch) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw db.fail(name, e);
    }
  }

  // ------------------------------------------------------------------ parked events
  void insertParks(Connection tx, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    dialect.insertParks(tx, db.sql("park"), subscriptionId, partition, parks);
  }

  ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks) {
    Set<String> keys = new HashSet<>();
    Instant[] next = {null};
    db.list(
        "parked_heads",
        ps -> {
          ps.setLong(1, subscriptionId);
          ps.setLong(2, partition.topicId());
          ps.setInt(3, partition.partition());
          ps.setBoolean(4, deadBlocks);
        },
        rs -> {
          String key = rs.getString(1);
          if (key != null) {
            keys.add(key);
          }
          if (!ParkState.DEAD.name().equals(rs.getString(2))) {
            Instant at = dialect.instant(rs, 3);
            next[0] = next[0] == null || at.isBefore(next[0]) ? at : next[0];
          }
          return key;
        });
    return new ParkedSummary(keys, next[0]);
  }

  List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, Instant now, int limit) {
    return db.list(
        "due_parked",
        ps -> {
          ps.setLong(1, subscriptionId);
          ps.setLong(2, partition.topicId());
          ps.setInt(3, partition.partition());
          ps.setBoolean(4, deadBlocks);
          dialect.bindInstant(ps, 5, now);
          ps.setInt(6, limit);
        },
        rs ->
            new ParkedEvent(
                SqlCursors.logEvent(dialect, rs, 12), rs.getInt(10), dialect.instant(rs, 11)));
  }

  /**
   * All outcomes of a retry pass in one transaction (a single one on its own, auto-commit). Every
   * statement carries the epoch check, which is the same for all of them: either all match or the
   * partition was taken (then nothing is recorded).
   */
  boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    if (outcomes.isEmpty()) {
      return true;
    }
    JdbcSql.Work<Boolean> work =
        c -> {
          try (PreparedStatement done = c.prepareStatement(db.sql("parked_done"));
              PreparedStatement retry = c.prepareStatement(db.sql("parked_retry"))) {
            int matched = 0;
            int batched = 0;
            for (Map.Entry<Long, Resolution> o : outcomes.entrySet()) {
              Resolution r = o.getValue();
              PreparedStatement ps = r.kind() == Resolution.Kind.DONE ? done : retry;
              bindResolution(ps, subscriptionId, partition, epoch, o.getKey(), r);
              if (dialect.batchCountsRows()) {
                ps.addBatch();
                batched++;
              } else {
                matched += ps.executeUpdate();
              }
            }
            if (batched > 0) {
              matched += sum(done.executeBatch()) + sum(retry.executeBatch());
            }
            if (matched != outcomes.size()) {
              if (!c.getAutoCommit()) {
                c.rollback();
              }
              return false;
            }
            return true;
          }
        };
    if (outcomes.size() == 1) {
      try (Connection c = db.connect()) {
        return work.run(c); // one auto-commit statement: nothing to roll back when it misses
      } catch (SQLException e) {
        throw db.fail("parked_done/parked_retry", e);
      }
    }
    return db.tx("parked_done/parked_retry", work);
  }

  private void bindResolution(
      PreparedStatement ps,
      long subscriptionId,
      PartitionKey partition,
      long epoch,
      long seq,
      Resolution r)
      throws SQLException {
    int i = 1;
    if (r.kind() != Resolution.Kind.DONE) {
      String state = r.kind() == Resolution.Kind.DEAD ? "DEAD" : "RETRY";
      ps.setString(i++, state);
      ps.setInt(i++, r.attempts());
      dialect.bindInstant(ps, i++, r.nextAttemptAt());
      ps.setString(i++, r.error());
      ps.setString(i++, state);
    }
    ps.setLong(i++, subscriptionId);
    ps.setLong(i++, partition.topicId());
    ps.setInt(i++, partition.partition());
    ps.setLong(i++, seq);
    ps.setLong(i, epoch);
  }

  private static int sum(int[] counts) {
    int n = 0;
    for (int c : counts) {
      n += c;
    }
    return n;
  }

  /**
   * Binds the shared dead-letter filters starting at parameter {@code i}; returns the next index.
   * Each filter goes in twice: "is it set", and the comparison.
   */
  private int bindDeadLetterFilters(
      PreparedStatement ps, int i, long subscriptionId, DeadLetterQuery q) throws SQLException {
    Long topicId = q.topic() == null ? null : topicIds.applyAsLong(q.topic());
    ps.setLong(i++, subscriptionId);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setString(i++, q.type());
    ps.setString(i++, q.type());
    ps.setString(i++, q.key());
    ps.setString(i++, q.key());
    dialect.bindUuid(ps, i++, q.eventId());
    dialect.bindUuid(ps, i++, q.eventId());
    ps.setString(i++, q.errorContains());
    ps.setString(i++, q.errorContains());
    dialect.bindInstant(ps, i++, q.deadBefore());
    dialect.bindInstant(ps, i++, q.deadBefore());
    dialect.bindInstant(ps, i++, q.deadAfter());
    dialect.bindInstant(ps, i++, q.deadAfter());
    i = bindAfter(ps, i, q.after());
    ps.setInt(i++, q.limit());
    return i;
  }

  /**
   * Binds an optional "past this position" filter, {@code (? IS NULL OR (topic, partition, seq) >
   * (?, ?, ?))}, at parameter {@code i}; returns the next index.
   */
  private int bindAfter(PreparedStatement ps, int i, io.boxline.EventPosition after)
      throws SQLException {
    Long topicId = after == null ? null : topicIds.applyAsLong(after.topic());
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setObject(i++, after == null ? null : after.partition(), Types.INTEGER);
    ps.setObject(i++, after == null ? null : after.sequence(), Types.BIGINT);
    return i;
  }

  /**
   * The event of a row of the dead_letters and retrying queries, which select the same columns:
   * topic namespace and name at 8 and 9, then the event's id and fields at 10 to 18.
   */
  private Event parkedEvent(java.sql.ResultSet rs) throws java.sql.SQLException {
    return new Event(
        dialect.uuid(rs, 10),
        TopicName.of(rs.getString(8), rs.getString(9)),
        rs.getInt(2),
        rs.getLong(3),
        rs.getString(11),
        rs.getString(12),
        rs.getString(13),
        rs.getString(14),
        rs.getBytes(15),
        Headers.fromJsonOrEmpty(rs.getString(16)),
        dialect.instant(rs, 17),
        dialect.instant(rs, 18));
  }

  List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.list(
        "dead_letters",
        ps -> bindDeadLetterFilters(ps, 1, subscriptionId, q),
        rs -> {
          return new DeadLetter(
              q.subscription(),
              parkedEvent(rs),
              rs.getInt(4),
              rs.getString(5),
              dialect.instant(rs, 6),
              dialect.instant(rs, 7));
        });
  }

  List<io.boxline.DeadLetterReason> deadLetterReasons(long subscriptionId, int limit) {
    return db.list(
        "dead_letter_reasons",
        ps -> {
          ps.setLong(1, subscriptionId);
          ps.setInt(2, limit);
        },
        rs ->
            new io.boxline.DeadLetterReason(
                rs.getString(1), rs.getLong(2), dialect.instant(rs, 3), dialect.instant(rs, 4)));
  }

  int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.tx(
        "redrive_dead",
        c -> {
          int n;
          try (PreparedStatement ps = c.prepareStatement(db.sql("redrive_dead"))) {
            bindDeadLetterFilters(ps, 1, subscriptionId, q);
            n = ps.executeUpdate();
          }
          if (n > 0) {
            dialect.wakeAll(c, db); // every consumer re-reads its backlog, which shows retries due
          }
          return n;
        });
  }

  List<io.boxline.RetryingEvent> retrying(
      long subscriptionId, String subscription, io.boxline.EventPosition after, int limit) {
    return db.list(
        "retrying",
        ps -> {
          ps.setLong(1, subscriptionId);
          ps.setInt(bindAfter(ps, 2, after), limit);
        },
        rs ->
            new io.boxline.RetryingEvent(
                subscription,
                parkedEvent(rs),
                ParkState.WAITING.name().equals(rs.getString(19)),
                rs.getInt(4),
                dialect.instant(rs, 7),
                rs.getString(5),
                dialect.instant(rs, 6)));
  }

  List<FailureCounts> failureCounts() {
    return db.list(
        "parked_counts",
        ps -> {},
        rs -> new FailureCounts(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)));
  }

  int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.update("discard_dead", ps -> bindDeadLetterFilters(ps, 1, subscriptionId, q));
  }
}
