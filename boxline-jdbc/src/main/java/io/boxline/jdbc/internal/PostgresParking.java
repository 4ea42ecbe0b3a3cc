package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.TopicName;
import io.boxline.spi.Park;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.ToLongFunction;

/**
 * The PostgreSQL side of what subscriptions set aside or remember: parked events (retries, dead
 * letters), the inbox, and retention. Split from {@link PostgresStore} so each class stays about
 * one thing.
 */
final class PostgresParking implements SqlStore.Parking {
  private final JdbcSql db;
  private final ToLongFunction<TopicName> topicIds;
  private final String logChannel;

  private final boolean vacuumWhenAutovacuumOff;

  PostgresParking(
      JdbcSql db,
      ToLongFunction<TopicName> topicIds,
      String logChannel,
      boolean vacuumWhenAutovacuumOff) {
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    this.db = db;
    this.topicIds = topicIds;
    this.logChannel = logChannel;
  }

  private String sql(String name) {
    return db.sql(name);
  }

  private io.boxline.StoreException fail(String name, SQLException e) {
    return db.fail(name, e);
  }

  private Connection connect() throws SQLException {
    return db.connect();
  }

  private <T> T tx(String name, JdbcSql.Work<T> work) {
    return db.tx(name, work);
  }

  // ------------------------------------------------------------------ inbox
  @Override
  public boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    try (PreparedStatement ps = tx.prepareStatement(sql("inbox_claim"))) {
      ps.setLong(1, subscriptionId);
      ps.setString(2, key);
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw fail("inbox_claim", e);
    }
  }

  @Override
  public boolean inboxSeen(long subscriptionId, String key) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("inbox_seen"))) {
      ps.setLong(1, subscriptionId);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw fail("inbox_seen", e);
    }
  }

  // ------------------------------------------------------------------ retention
  @Override
  public void setRetention(long topicId, io.boxline.RetentionPolicy policy) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("set_retention"))) {
      ps.setObject(1, policy.maxAge() == null ? null : policy.maxAge().toMillis(), Types.BIGINT);
      ps.setBoolean(2, policy.keepUnconsumed());
      ps.setObject(
          3,
          policy.maxEventsPerPartition() == 0 ? null : policy.maxEventsPerPartition(),
          Types.BIGINT);
      ps.setLong(4, topicId);
      ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("set_retention", e);
    }
  }

  @Override
  public io.boxline.spi.PurgeResult purge(
      Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch) {
    boolean[] todo = new boolean[5];
    long deadTuples;
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("maintenance_needed"))) {
      ps.setDouble(1, inboxAge.toMillis() / 1000.0);
      ps.setDouble(2, deadLetterAge.toMillis() / 1000.0);
      ps.setDouble(3, idempotencyAge.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        for (int i = 0; i < 5; i++) {
          todo[i] = rs.getBoolean(i + 1);
        }
        deadTuples = rs.getLong(6);
      }
    } catch (SQLException e) {
      throw fail("maintenance_needed", e);
    }
    long events =
        todo[0]
            ? purgeAll("purge_log", null, batch) + purgeAll("purge_log_by_count", null, batch)
            : 0;
    long inbox = todo[1] ? purgeAll("purge_inbox", inboxAge, batch) : 0;
    long dead = todo[2] ? purgeAll("purge_dead_letters", deadLetterAge, batch) : 0;
    long keys = todo[3] ? purgeAll("purge_idempotency", idempotencyAge, batch) : 0;
    boolean autovacuumOff = todo[4];
    // The statistics lag a little; what this run deleted counts as dead already.
    if (vacuumWhenAutovacuumOff
        && autovacuumOff
        && deadTuples + events + inbox + dead + keys >= VACUUM_THRESHOLD) {
      vacuumHotTables();
    }
    return new io.boxline.spi.PurgeResult(events, inbox, dead, keys);
  }

  /** Dead tuples across Boxline's tables below which vacuuming is not worth a statement. */
  private static final long VACUUM_THRESHOLD = 1_000;

  /** Whether the server runs autovacuum (warned about at start when it does not). */
  boolean autovacuumOn() {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("autovacuum_on"));
        ResultSet rs = ps.executeQuery()) {
      return rs.next() && rs.getBoolean(1);
    } catch (SQLException e) {
      throw fail("autovacuum_on", e);
    }
  }

  private void vacuumHotTables() {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(true); // VACUUM cannot run inside a transaction block
      st.execute(sql("vacuum_hot_tables"));
    } catch (SQLException e) {
      throw fail("vacuum_hot_tables", e);
    }
  }

  /**
   * Runs a batched delete until a batch comes back short; each batch is its own short transaction.
   */
  private long purgeAll(String name, Duration age, int batch) {
    long total = 0;
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql(name))) {
      while (true) {
        int i = 1;
        if (age != null) {
          ps.setDouble(i++, age.toMillis() / 1000.0);
        }
        ps.setInt(i, batch);
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

  @Override
  public void insertParks(
      Connection tx, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    int n = parks.size();
    Long[] seqs = new Long[n];
    UUID[] ids = new UUID[n];
    String[] keys = new String[n];
    String[] types = new String[n];
    String[] states = new String[n];
    Integer[] attempts = new Integer[n];
    Timestamp[] next = new Timestamp[n];
    String[] errors = new String[n];
    for (int i = 0; i < n; i++) {
      Park k = parks.get(i);
      seqs[i] = k.seq();
      ids[i] = k.eventId();
      keys[i] = k.key();
      types[i] = k.type();
      states[i] = k.state().name();
      attempts[i] = k.attempts();
      next[i] = Timestamp.from(k.nextAttemptAt());
      errors[i] = k.lastError();
    }
    try (PreparedStatement ps = tx.prepareStatement(sql("park"))) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      ps.setArray(4, tx.createArrayOf("bigint", seqs));
      ps.setArray(5, tx.createArrayOf("uuid", ids));
      ps.setArray(6, tx.createArrayOf("text", keys));
      ps.setArray(7, tx.createArrayOf("text", types));
      ps.setArray(8, tx.createArrayOf("text", states));
      ps.setArray(9, tx.createArrayOf("integer", attempts));
      ps.setArray(10, tx.createArrayOf("timestamptz", next));
      ps.setArray(11, tx.createArrayOf("text", errors));
      ps.executeUpdate();
    }
  }

  @Override
  public ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("parked_heads"))) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      ps.setBoolean(4, deadBlocks);
      java.util.Set<String> keys = new java.util.HashSet<>();
      java.time.Instant next = null;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String key = rs.getString(1);
          if (key != null) {
            keys.add(key);
          }
          if (!"DEAD".equals(rs.getString(2))) {
            java.time.Instant at = rs.getTimestamp(3).toInstant();
            next = next == null || at.isBefore(next) ? at : next;
          }
        }
      }
      return new ParkedSummary(keys, next);
    } catch (SQLException e) {
      throw fail("parked_heads", e);
    }
  }

  @Override
  public List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, int limit) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("due_parked"))) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      ps.setBoolean(4, deadBlocks);
      ps.setInt(5, limit);
      List<ParkedEvent> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Timestamp first = rs.getTimestamp(11);
          out.add(
              new ParkedEvent(
                  Headers.storedEvent(
                      rs.getObject(2, UUID.class),
                      rs.getLong(1),
                      rs.getString(3),
                      rs.getString(4),
                      rs.getString(5),
                      rs.getString(6),
                      rs.getBytes(7),
                      rs.getString(8),
                      rs.getTimestamp(9).toInstant(),
                      JdbcSql.instant(rs.getTimestamp(12))),
                  rs.getInt(10),
                  first == null ? null : first.toInstant()));
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("due_parked", e);
    }
  }

  /** All outcomes of a retry pass in one transaction: one commit instead of one per event. */
  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    if (outcomes.isEmpty()) {
      return true;
    }
    try (Connection c = connect()) {
      boolean single = outcomes.size() == 1;
      if (!single) {
        c.setAutoCommit(false);
      }
      try (PreparedStatement done = c.prepareStatement(sql("parked_done"));
          PreparedStatement retry = c.prepareStatement(sql("parked_retry"))) {
        int dones = 0;
        int retries = 0;
        for (Map.Entry<Long, Resolution> o : outcomes.entrySet()) {
          Resolution r = o.getValue();
          PreparedStatement ps = r.kind() == Resolution.Kind.DONE ? done : retry;
          int i = 1;
          if (r.kind() != Resolution.Kind.DONE) {
            String state = r.kind() == Resolution.Kind.DEAD ? "DEAD" : "RETRY";
            ps.setString(i++, state);
            ps.setInt(i++, r.attempts());
            ps.setTimestamp(
                i++, r.nextAttemptAt() == null ? null : Timestamp.from(r.nextAttemptAt()));
            ps.setString(i++, r.error());
            ps.setString(i++, state);
            retries++;
          } else {
            dones++;
          }
          ps.setLong(i++, subscriptionId);
          ps.setLong(i++, partition.topicId());
          ps.setInt(i++, partition.partition());
          ps.setLong(i++, o.getKey());
          ps.setLong(i, epoch);
          ps.addBatch();
        }
        int matched = 0;
        for (int n : dones == 0 ? new int[0] : done.executeBatch()) {
          matched += n;
        }
        for (int n : retries == 0 ? new int[0] : retry.executeBatch()) {
          matched += n;
        }
        // The epoch check is the same for every row: either all match or the partition was taken.
        boolean all = matched == outcomes.size();
        if (!single) {
          if (all) {
            c.commit();
          } else {
            c.rollback();
          }
        }
        return all;
      } catch (SQLException | RuntimeException e) {
        if (!single) {
          c.rollback();
        }
        throw e;
      }
    } catch (SQLException e) {
      throw fail("parked_done/parked_retry", e);
    }
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
    ps.setLong(i++, subscriptionId);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setObject(i++, topicId, Types.BIGINT);
    ps.setString(i++, q.type());
    ps.setString(i++, q.type());
    ps.setString(i++, q.key());
    ps.setString(i++, q.key());
    ps.setObject(i++, q.eventId());
    ps.setObject(i++, q.eventId());
    ps.setString(i++, q.errorContains());
    ps.setString(i++, q.errorContains());
    Timestamp before = q.deadBefore() == null ? null : Timestamp.from(q.deadBefore());
    Timestamp after = q.deadAfter() == null ? null : Timestamp.from(q.deadAfter());
    ps.setTimestamp(i++, before);
    ps.setTimestamp(i++, before);
    ps.setTimestamp(i++, after);
    ps.setTimestamp(i++, after);
    ps.setInt(i++, q.limit());
    return i;
  }

  @Override
  public List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("dead_letters"))) {
      bindDeadLetterFilters(ps, 1, subscriptionId, q);
      List<DeadLetter> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          io.boxline.Event e =
              new io.boxline.Event(
                  rs.getObject(10, UUID.class),
                  TopicName.of(rs.getString(8), rs.getString(9)),
                  rs.getInt(2),
                  rs.getLong(3),
                  rs.getString(11),
                  rs.getString(12),
                  rs.getString(13),
                  rs.getString(14),
                  rs.getBytes(15),
                  Headers.fromJsonOrEmpty(rs.getString(16)),
                  rs.getTimestamp(17).toInstant(),
                  JdbcSql.instant(rs.getTimestamp(18)));
          Timestamp first = rs.getTimestamp(6);
          out.add(
              new DeadLetter(
                  q.subscription(),
                  e,
                  rs.getInt(4),
                  rs.getString(5),
                  first == null ? null : first.toInstant(),
                  rs.getTimestamp(7).toInstant()));
        }
      }
      return out;
    } catch (SQLException e) {
      throw fail("dead_letters", e);
    }
  }

  @Override
  public int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return tx(
        "redrive_dead",
        c -> {
          int n;
          try (PreparedStatement ps = c.prepareStatement(sql("redrive_dead"))) {
            bindDeadLetterFilters(ps, 1, subscriptionId, q);
            n = ps.executeUpdate();
          }
          if (n > 0) {
            // Every consumer re-reads its backlog, which now shows retries due.
            try (PreparedStatement ps = c.prepareStatement(sql("notify"))) {
              ps.setString(1, logChannel);
              ps.setString(2, "*");
              ps.execute();
            }
          }
          return n;
        });
  }

  @Override
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("discard_dead"))) {
      bindDeadLetterFilters(ps, 1, subscriptionId, q);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("discard_dead", e);
    }
  }
}
