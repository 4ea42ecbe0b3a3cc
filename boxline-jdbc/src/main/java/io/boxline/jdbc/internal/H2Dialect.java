package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.Fence;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * H2 (2.2.224+), in memory or file mode, embedded or through an H2 server: times as epoch
 * microseconds and event ids as text (as on MariaDB), lists as SQL arrays read with {@code UNNEST}
 * or as JDBC batches of single-row statements, rows of a list that must be locked locked one per
 * execution in key order, "insert unless present" as an insert whose duplicate-key error counts as
 * zero rows, wake-ups through the {@code wake_all} row that pollers watch. See docs/h2.md.
 */
public final class H2Dialect extends PollingDialect {
  /** H2's codes: duplicate key, deadlock, lock timeout, concurrent update of a row. */
  private static final int DUPLICATE_KEY = 23505;

  private static final int DEADLOCK = 40001;
  private static final int LOCK_TIMEOUT = 50200;
  private static final int CONCURRENT_UPDATE = 90131;

  /** Migrations of one schema in one JVM run one at a time (H2 has no named locks). */
  private static final ConcurrentHashMap<String, Object> MIGRATION_LOCKS =
      new ConcurrentHashMap<>();

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   */
  public H2Dialect(Duration fastestPoll, Duration slowestPoll) {
    super(fastestPoll, slowestPoll);
  }

  @Override
  public String folder() {
    return "h2";
  }

  // ------------------------------------------------------------------ migrations
  /**
   * DDL commits implicitly in H2, so migrations cannot run in one transaction: every statement is
   * re-runnable ({@code IF NOT EXISTS}), each file is recorded right after it was applied, and a
   * version recorded twice (two processes migrating at once) is ignored. Within one JVM migrations
   * of the same schema also take turns on a lock.
   */
  @Override
  public void migrate(SqlContext ctx) {
    String key;
    try (Connection c = ctx.db().connect()) {
      key = c.getMetaData().getURL() + "|" + ctx.schema() + "|" + ctx.prefix();
    } catch (SQLException e) {
      throw new StoreException("migrate: connect", "connect", e);
    }
    synchronized (MIGRATION_LOCKS.computeIfAbsent(key, k -> new Object())) {
      Step step = new Step("create_version_table");
      try (Connection c = ctx.db().connect()) {
        SqlMigrations.applyOneByOne(
            ctx,
            this,
            c,
            step,
            "CREATE SCHEMA IF NOT EXISTS " + ctx.schema(),
            SqlScript.H2_MIGRATIONS,
            schemaKind());
      } catch (SQLException e) {
        throw new StoreException("migrate: " + step.name(), step.name(), e);
      }
    }
  }

  // ------------------------------------------------------------------ publish
  /** One JDBC batch of single-row inserts (H2 runs it in-process, or in one round trip). */
  @Override
  public void appendRows(Connection tx, JdbcSql db, List<OutboxRecord> rows) throws SQLException {
    if (rows.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = tx.prepareStatement(db.sql("append"))) {
      for (OutboxRecord r : rows) {
        bindOutboxRow(ps, 1, r);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /**
   * Inserts the keys that are new (a key another transaction holds waits for it, then counts as
   * taken); returns the owning event id of every key in the batch, by "topic/key".
   */
  @Override
  public KeyClaims claimKeys(Connection tx, JdbcSql db, List<OutboxRecord> records)
      throws SQLException {
    Map<String, UUID> owners = new HashMap<>();
    java.util.Set<String> claimedNow = new java.util.HashSet<>();
    try (PreparedStatement claim = tx.prepareStatement(db.sql("claim_idempotency_key"));
        PreparedStatement owner = tx.prepareStatement(db.sql("idempotency_owner"))) {
      for (OutboxRecord r : records) {
        if (r.idempotencyKey() == null) {
          continue;
        }
        String id = ownerKey(r);
        if (owners.containsKey(id)) {
          continue; // the first record of the batch with this key owns it
        }
        claim.setLong(1, r.topicId());
        claim.setString(2, r.idempotencyKey());
        claim.setString(3, r.eventId().toString());
        if (insertIgnore(claim) == 1) {
          owners.put(id, r.eventId());
          claimedNow.add(id);
          continue;
        }
        owner.setLong(1, r.topicId());
        owner.setString(2, r.idempotencyKey());
        try (ResultSet rs = owner.executeQuery()) {
          owners.put(id, rs.next() ? EpochMicros.uuid(rs.getString(1)) : null);
        }
      }
    }
    return new KeyClaims(owners, claimedNow);
  }

  // ------------------------------------------------------------------ sequencer
  @Override
  Long lockSequencer(Connection c, JdbcSql db, Step step, String owner, Duration ttl)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("lock_sequencer"))) {
      ps.setLong(1, EpochMicros.micros(ttl));
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  Map<PartitionKey, Long> lockPartitions(
      Connection c, JdbcSql db, Step step, List<PartitionKey> keys) throws SQLException {
    step.at("lock_partition");
    Map<PartitionKey, Long> last = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("lock_partition"))) {
      for (PartitionKey k : keys) {
        ps.setLong(1, k.topicId());
        ps.setInt(2, k.partition());
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            last.put(k, rs.getLong(1));
          }
        }
      }
    }
    return last;
  }

  @Override
  void advancePartitions(
      Connection c, JdbcSql db, Step step, List<PartitionHead> heads, long version)
      throws SQLException {
    step.at("advance_partition");
    try (PreparedStatement ps = c.prepareStatement(db.sql("advance_partition"))) {
      for (PartitionHead h : heads) {
        ps.setLong(1, h.lastSequence());
        ps.setLong(2, version);
        ps.setLong(3, h.topicId());
        ps.setInt(4, h.partition());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  @Override
  int appendLog(Connection c, JdbcSql db, List<LogRow> rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("append_log"))) {
      ps.setObject(1, JdbcSql.longs(rows, LogRow::outboxId));
      ps.setObject(2, JdbcSql.ints(rows, LogRow::partition));
      ps.setObject(3, JdbcSql.longs(rows, LogRow::sequence));
      return ps.executeUpdate();
    }
  }

  @Override
  void deleteOutbox(Connection c, JdbcSql db, List<Long> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("delete_outbox"))) {
      ps.setObject(1, ids.toArray(new Long[0]));
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fenceIn(
      Connection c, JdbcSql db, long subscriptionId, List<Fence> sorted, String owner)
      throws SQLException {
    Map<PartitionKey, Long> positions = new HashMap<>();
    try (PreparedStatement lock = c.prepareStatement(db.sql("fence_lock"));
        PreparedStatement fence = c.prepareStatement(db.sql("fence_cursor"))) {
      for (Fence f : sorted) {
        PartitionKey k = f.partition();
        lock.setLong(1, subscriptionId);
        lock.setLong(2, k.topicId());
        lock.setInt(3, k.partition());
        lock.setLong(4, f.epoch());
        try (ResultSet rs = lock.executeQuery()) {
          if (!rs.next()) {
            continue; // already at this epoch or beyond
          }
          positions.put(k, rs.getLong(1));
        }
        fence.setLong(1, f.epoch());
        fence.setString(2, owner);
        fence.setLong(3, subscriptionId);
        fence.setLong(4, k.topicId());
        fence.setInt(5, k.partition());
        fence.setLong(6, f.epoch());
        fence.executeUpdate();
      }
    }
    return positions;
  }

  // ------------------------------------------------------------------ values and lists

  @Override
  public int insertUnlessPresent(PreparedStatement ps) throws SQLException {
    return insertIgnore(ps);
  }

  @Override
  public boolean retryable(SQLException e) {
    return JdbcSql.anyCause(
        e,
        s ->
            s.getErrorCode() == DEADLOCK
                || s.getErrorCode() == LOCK_TIMEOUT
                || s.getErrorCode() == CONCURRENT_UPDATE
                || "40001".equals(s.getSQLState()));
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(parkSql)) {
      for (Park k : parks) {
        bindParkRow(ps, 1, subscriptionId, partition, k);
        insertIgnore(ps);
      }
    }
  }

  @Override
  public long deleteRows(PreparedStatement delete, List<LogKey> rows) throws SQLException {
    for (LogKey r : rows) {
      delete.setLong(1, r.topicId());
      delete.setInt(2, r.partition());
      delete.setLong(3, r.sequence());
      delete.addBatch();
    }
    long total = 0;
    for (int n : delete.executeBatch()) {
      total += Math.max(n, 0);
    }
    return total;
  }

  /**
   * Lease rows outlive their owners: the missing ones are created first, on their own, so that the
   * transaction that follows only ever locks existing rows, exclusively, one by one in key order.
   */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("create_lease"))) {
      for (PartitionKey k : sorted) {
        bindLease(ps, 1, group, k);
        insertIgnore(ps);
      }
    }
    return JdbcSql.inTransaction(c, tx -> lockAndTake(tx, db, group, member, sorted));
  }

  private static Map<PartitionKey, Long> lockAndTake(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    Map<PartitionKey, Long> epochs = new LinkedHashMap<>();
    try (PreparedStatement lock = c.prepareStatement(db.sql("acquire_lock"));
        PreparedStatement take = c.prepareStatement(db.sql("acquire_take"))) {
      for (PartitionKey k : sorted) {
        bindLease(lock, 1, group, k);
        long epoch;
        try (ResultSet rs = lock.executeQuery()) {
          if (!rs.next()) {
            continue;
          }
          rs.getString(1);
          if (!rs.wasNull()) {
            continue; // held by someone
          }
          epoch = rs.getLong(2) + 1;
        }
        take.setString(1, member);
        bindLease(take, 2, group, k);
        if (take.executeUpdate() != 1) {
          throw new SQLException("acquire_take missed a locked free lease " + k);
        }
        epochs.put(k, epoch);
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    int n = 0;
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      for (PartitionKey k : sorted) {
        bindLease(ps, 1, group, k);
        n += ps.executeUpdate();
      }
    }
    return n;
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setObject(at, members.toArray(new String[0]));
  }

  /**
   * Runs an insert; a duplicate key counts as 0 rows. H2 undoes only the failed statement, so the
   * surrounding transaction goes on.
   */
  private static int insertIgnore(PreparedStatement ps) throws SQLException {
    try {
      return ps.executeUpdate();
    } catch (SQLException e) {
      if (e.getErrorCode() == DUPLICATE_KEY || "23505".equals(e.getSQLState())) {
        return 0;
      }
      throw e;
    }
  }

  /** Binds group, topic and partition of one lease row. */
  private static void bindLease(PreparedStatement ps, int at, String group, PartitionKey k)
      throws SQLException {
    ps.setString(at, group);
    ps.setLong(at + 1, k.topicId());
    ps.setInt(at + 2, k.partition());
  }
}
