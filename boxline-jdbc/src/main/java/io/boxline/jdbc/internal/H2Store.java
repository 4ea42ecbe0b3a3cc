package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * The H2 (2.2.224+) dialect, in memory or file mode, embedded or through an H2 server. It follows
 * the MariaDB dialect's shape (see {@link PollingSqlStore}): times are epoch microseconds, there is
 * no LISTEN/NOTIFY, and there are no data-modifying CTEs. Lists travel as SQL arrays read with
 * {@code UNNEST}; rows of a list that must be locked are locked one per execution, in key order.
 * See docs/h2.md.
 */
public final class H2Store extends PollingSqlStore {
  /** Migrations of one schema in one JVM run one at a time (H2 has no named locks). */
  private static final ConcurrentHashMap<String, Object> MIGRATION_LOCKS =
      new ConcurrentHashMap<>();

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   */
  public H2Store(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      Duration fastestPoll,
      Duration slowestPoll) {
    super(
        dataSource,
        schema,
        prefix,
        description(version, "schema", schema, prefix),
        new JdbcSql(dataSource, SqlScript.named("h2", schema, prefix)),
        new H2Dialect(),
        fastestPoll,
        slowestPoll,
        null);
  }

  // ------------------------------------------------------------------ migrations
  /**
   * DDL commits implicitly in H2, so migrations cannot run in one transaction: every statement is
   * re-runnable ({@code IF NOT EXISTS}), each file is recorded right after it was applied, and a
   * version recorded twice (two processes migrating at once) is ignored. Within one JVM migrations
   * of the same schema also take turns on a lock.
   */
  @Override
  public void migrate() {
    String key;
    try (Connection c = db.connect()) {
      key = c.getMetaData().getURL() + "|" + schema + "|" + prefix;
    } catch (SQLException e) {
      throw new StoreException("migrate: connect", "connect", e);
    }
    synchronized (MIGRATION_LOCKS.computeIfAbsent(key, k -> new Object())) {
      migrateLocked();
    }
  }

  private void migrateLocked() {
    Step step = new Step("create_version_table");
    try (Connection c = db.connect()) {
      applyMigrations(
          c,
          step,
          "CREATE SCHEMA IF NOT EXISTS " + schema,
          "h2",
          SqlScript.H2_MIGRATIONS,
          "schema");
    } catch (SQLException e) {
      throw new StoreException("migrate: " + step.name(), step.name(), e);
    }
  }

  // ------------------------------------------------------------------ publish
  /** One JDBC batch of single-row inserts (H2 runs it in-process, or in one round trip). */
  @Override
  void appendRows(Connection tx, List<OutboxRecord> rows) throws SQLException {
    if (rows.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = tx.prepareStatement(sql("append"))) {
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
  Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records) throws SQLException {
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement claim = tx.prepareStatement(sql("claim_idempotency_key"));
        PreparedStatement owner = tx.prepareStatement(sql("idempotency_owner"))) {
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
        if (H2Sql.insertIgnore(claim) == 1) {
          owners.put(id, r.eventId());
          continue;
        }
        owner.setLong(1, r.topicId());
        owner.setString(2, r.idempotencyKey());
        try (ResultSet rs = owner.executeQuery()) {
          owners.put(id, rs.next() ? EpochMicros.uuid(rs.getString(1)) : null);
        }
      }
    }
    return owners;
  }

  // ------------------------------------------------------------------ sequencer
  @Override
  Long lockSequencer(Connection c, Step step, String owner, Duration ttl) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("lock_sequencer"))) {
      ps.setLong(1, EpochMicros.micros(ttl));
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  Map<PartitionKey, Long> lockPartitions(Connection c, Step step, List<PartitionKey> keys)
      throws SQLException {
    step.at("lock_partition");
    Map<PartitionKey, Long> last = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql("lock_partition"))) {
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
  void advancePartitions(Connection c, Step step, List<PartitionHead> heads, long version)
      throws SQLException {
    step.at("advance_partition");
    try (PreparedStatement ps = c.prepareStatement(sql("advance_partition"))) {
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
  int appendLog(Connection c, List<LogRow> rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setObject(1, H2Sql.longs(rows, LogRow::outboxId));
      ps.setObject(2, H2Sql.ints(rows, LogRow::partition));
      ps.setObject(3, H2Sql.longs(rows, LogRow::sequence));
      return ps.executeUpdate();
    }
  }

  @Override
  void deleteOutbox(Connection c, List<Long> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("delete_outbox"))) {
      ps.setObject(1, ids.toArray(new Long[0]));
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fence(
      Connection c, long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner)
      throws SQLException {
    Map<PartitionKey, Long> positions = new HashMap<>();
    try (PreparedStatement lock = c.prepareStatement(sql("fence_lock"));
        PreparedStatement fence = c.prepareStatement(sql("fence_cursor"))) {
      for (io.boxline.spi.Fence f : sorted) {
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
}
