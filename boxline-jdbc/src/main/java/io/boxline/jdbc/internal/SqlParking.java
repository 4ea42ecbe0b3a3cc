package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
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
 * What subscriptions set aside or remember on MariaDB / MySQL and H2: parked events (retries, dead
 * letters), the inbox, and retention (batched deletes, each batch its own short transaction). Times
 * are epoch microseconds. Subclasses say how inbox keys are stored and how lists of rows travel.
 */
abstract class SqlParking implements SqlStore.Parking {
  protected final JdbcSql db;
  private final ToLongFunction<TopicName> topicIds;

  SqlParking(JdbcSql db, ToLongFunction<TopicName> topicIds) {
    this.db = db;
    this.topicIds = topicIds;
  }

  /** The inbox key as {@code inbox_seen} looks it up. */
  abstract String inboxLookupKey(String key);

  /**
   * Runs {@code purge_log_delete} over {@code [topic, partition, sequence]} rows; returns how many.
   */
  abstract long deletePurged(PreparedStatement delete, List<long[]> rows) throws SQLException;

  String sql(String name) {
    return db.sql(name);
  }

  io.boxline.StoreException fail(String name, SQLException e) {
    return db.fail(name, e);
  }

  // ------------------------------------------------------------------ inbox
  @Override
  public boolean inboxSeen(long subscriptionId, String key) {
    return db.one(
            "inbox_seen",
            ps -> {
              ps.setLong(1, subscriptionId);
              ps.setString(2, inboxLookupKey(key));
            },
            rs -> rs.getBoolean(1))
        .orElse(false);
  }

  // ------------------------------------------------------------------ retention
  @Override
  public void setRetention(long topicId, io.boxline.RetentionPolicy policy) {
    db.update(
        "set_retention",
        ps -> {
          ps.setObject(
              1, policy.maxAge() == null ? null : policy.maxAge().toMillis(), Types.BIGINT);
          ps.setBoolean(2, policy.keepUnconsumed());
          ps.setLong(3, policy.maxEventsPerPartition());
          ps.setLong(4, topicId);
        });
  }

  @Override
  public PurgeResult purge(
      Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch) {
    long events = purgeLog(batch);
    long inbox = purgeAll("purge_inbox", inboxAge, batch);
    long dead = purgeAll("purge_dead_letters", deadLetterAge, batch);
    long keys = purgeAll("purge_idempotency", idempotencyAge, batch);
    return new PurgeResult(events, inbox, dead, keys);
  }

  /** Picks a batch of expired log rows, deletes them by key; repeats until a batch is short. */
  private long purgeLog(int batch) {
    long total = 0;
    String step = "purge_log_pick";
    try (Connection c = db.connect();
        PreparedStatement pick = c.prepareStatement(sql("purge_log_pick"));
        PreparedStatement delete = c.prepareStatement(sql("purge_log_delete"))) {
      while (true) {
        step = "purge_log_pick";
        pick.setInt(1, batch);
        List<long[]> rows = new ArrayList<>();
        try (ResultSet rs = pick.executeQuery()) {
          while (rs.next()) {
            rows.add(new long[] {rs.getLong(1), rs.getInt(2), rs.getLong(3)});
          }
        }
        if (rows.isEmpty()) {
          return total;
        }
        step = "purge_log_delete";
        total += deletePurged(delete, rows);
        if (rows.size() < batch) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  /** Runs a batched delete until a batch comes back short; each batch commits on its own. */
  private long purgeAll(String name, Duration age, int batch) {
    long total = 0;
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql(name))) {
      while (true) {
        ps.setLong(1, MariaDbSql.micros(age));
        ps.setInt(2, batch);
        int n = ps.executeUpdate();
        total += n;
        if (n < batch) {
          return total;
        }
      }
    } catch (SQLException e) {
      throw fail(name, e);
    }
  }

  // ------------------------------------------------------------------ parked events
  /**
   * Binds one parked event's row of {@code park} from parameter {@code i}; returns the next index.
   */
  static int bindPark(
      PreparedStatement ps, int i, long subscriptionId, PartitionKey partition, Park k)
      throws SQLException {
    String state = k.state().name();
    ps.setLong(i++, subscriptionId);
    ps.setLong(i++, partition.topicId());
    ps.setInt(i++, partition.partition());
    ps.setLong(i++, k.seq());
    ps.setString(i++, k.eventId().toString());
    ps.setString(i++, k.key());
    ps.setString(i++, k.type());
    ps.setString(i++, state);
    ps.setInt(i++, k.attempts());
    ps.setLong(i++, MariaDbSql.micros(k.nextAttemptAt()));
    ps.setString(i++, k.lastError());
    ps.setString(i++, state);
    ps.setString(i++, state);
    ps.setString(i++, state);
    return i;
  }

  @Override
  public ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks) {
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
            Instant at = MariaDbSql.instant(rs.getLong(3));
            next[0] = next[0] == null || at.isBefore(next[0]) ? at : next[0];
          }
          return key;
        });
    return new ParkedSummary(keys, next[0]);
  }

  @Override
  public List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, int limit) {
    return db.list(
        "due_parked",
        ps -> {
          ps.setLong(1, subscriptionId);
          ps.setLong(2, partition.topicId());
          ps.setInt(3, partition.partition());
          ps.setBoolean(4, deadBlocks);
          ps.setInt(5, limit);
        },
        rs ->
            new ParkedEvent(
                Headers.storedEvent(
                    MariaDbSql.uuid(rs.getString(2)),
                    rs.getLong(1),
                    rs.getString(3),
                    rs.getString(4),
                    rs.getString(5),
                    rs.getString(6),
                    rs.getBytes(7),
                    rs.getString(8),
                    MariaDbSql.instant(rs.getLong(9)),
                    MariaDbSql.instant(rs, 12)),
                rs.getInt(10),
                MariaDbSql.instant(rs, 11)));
  }

  /**
   * All outcomes of a retry pass in one transaction. Every statement carries the epoch check, which
   * is the same for all of them: either all match or the partition was taken (then roll back).
   */
  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    if (outcomes.isEmpty()) {
      return true;
    }
    return db.tx(
        "parked_done/parked_retry",
        c -> {
          try (PreparedStatement done = c.prepareStatement(sql("parked_done"));
              PreparedStatement retry = c.prepareStatement(sql("parked_retry"))) {
            for (Map.Entry<Long, Resolution> o : outcomes.entrySet()) {
              Resolution r = o.getValue();
              PreparedStatement ps = r.kind() == Resolution.Kind.DONE ? done : retry;
              int i = 1;
              if (r.kind() != Resolution.Kind.DONE) {
                String state = r.kind() == Resolution.Kind.DEAD ? "DEAD" : "RETRY";
                ps.setString(i++, state);
                ps.setInt(i++, r.attempts());
                ps.setObject(i++, MariaDbSql.microsOrNull(r.nextAttemptAt()), Types.BIGINT);
                ps.setString(i++, r.error());
                ps.setString(i++, state);
              }
              ps.setLong(i++, subscriptionId);
              ps.setLong(i++, partition.topicId());
              ps.setInt(i++, partition.partition());
              ps.setLong(i++, o.getKey());
              ps.setLong(i, epoch);
              if (ps.executeUpdate() != 1) {
                c.rollback();
                return false;
              }
            }
          }
          return true;
        });
  }

  /**
   * Binds the shared dead-letter filters starting at parameter {@code i}; returns the next index.
   */
  private int bindDeadLetterFilters(
      PreparedStatement ps, int i, long subscriptionId, DeadLetterQuery q) throws SQLException {
    Long topicId = null;
    if (q.topic() != null) {
      topicId = topicIds.applyAsLong(q.topic());
    }
    String eventId = q.eventId() == null ? null : q.eventId().toString();
    Long before = MariaDbSql.microsOrNull(q.deadBefore());
    Long after = MariaDbSql.microsOrNull(q.deadAfter());
    ps.setLong(i++, subscriptionId);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setString(i++, q.type());
    ps.setString(i++, q.type());
    ps.setString(i++, q.key());
    ps.setString(i++, q.key());
    ps.setString(i++, eventId);
    ps.setString(i++, eventId);
    ps.setString(i++, q.errorContains());
    ps.setString(i++, q.errorContains());
    ps.setObject(i++, before, Types.BIGINT);
    ps.setObject(i++, before, Types.BIGINT);
    ps.setObject(i++, after, Types.BIGINT);
    ps.setObject(i++, after, Types.BIGINT);
    ps.setInt(i++, q.limit());
    return i;
  }

  @Override
  public List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.list(
        "dead_letters",
        ps -> bindDeadLetterFilters(ps, 1, subscriptionId, q),
        rs -> {
          io.boxline.Event e =
              new io.boxline.Event(
                  MariaDbSql.uuid(rs.getString(10)),
                  TopicName.of(rs.getString(8), rs.getString(9)),
                  rs.getInt(2),
                  rs.getLong(3),
                  rs.getString(11),
                  rs.getString(12),
                  rs.getString(13),
                  rs.getString(14),
                  rs.getBytes(15),
                  Headers.fromJsonOrEmpty(rs.getString(16)),
                  MariaDbSql.instant(rs.getLong(17)),
                  MariaDbSql.instant(rs, 18));
          return new DeadLetter(
              q.subscription(),
              e,
              rs.getInt(4),
              rs.getString(5),
              MariaDbSql.instant(rs, 6),
              MariaDbSql.instant(rs.getLong(7)));
        });
  }

  @Override
  public int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.tx(
        "redrive_dead",
        c -> {
          int n;
          try (PreparedStatement ps = c.prepareStatement(sql("redrive_dead"))) {
            bindDeadLetterFilters(ps, 1, subscriptionId, q);
            n = ps.executeUpdate();
          }
          if (n > 0) {
            // Every consumer re-reads its backlog, which now shows retries due (see MariaDbPoller).
            try (PreparedStatement ps = c.prepareStatement(sql("wake_all"))) {
              ps.executeUpdate();
            }
          }
          return n;
        });
  }

  @Override
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return db.update("discard_dead", ps -> bindDeadLetterFilters(ps, 1, subscriptionId, q));
  }
}
