package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The MariaDB (10.6+) and MySQL (8.0+) dialect (see {@link PollingSqlStore}). Lists travel as JSON
 * arrays read with {@code JSON_TABLE} where PostgreSQL uses {@code unnest}, and producers' batches
 * are multi-row {@code INSERT}s. On MariaDB the sequencer's connection has {@code
 * idle_transaction_timeout} = the lease time, so a leader frozen inside a transaction cannot hold
 * the lease row for longer than its lease.
 */
public final class MariaDbStore extends PollingSqlStore {
  private final boolean mariaDb;
  private long sequencerTimeoutSeconds;

  /**
   * @param mariaDb true for MariaDB, false for MySQL (which has no idle-transaction timeout)
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   * @param logSegmentWidth the width of the log's time segments (null: from the retentions)
   */
  public MariaDbStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      boolean mariaDb,
      Duration fastestPoll,
      Duration slowestPoll,
      Duration logSegmentWidth) {
    super(
        dataSource,
        schema,
        prefix,
        description(version, "database", schema, prefix),
        new JdbcSql(dataSource, SqlScript.named("mariadb", schema, prefix)),
        new MariaDbDialect(),
        fastestPoll,
        slowestPoll,
        (db, dialect) -> new MariaDbLogSegments(db, dialect, logSegmentWidth));
    this.mariaDb = mariaDb;
  }

  // ------------------------------------------------------------------ migrations
  /**
   * DDL commits implicitly on MariaDB/MySQL, so migrations cannot run in one transaction: they run
   * under a named lock (several JVMs starting at once serialise on it), every statement is
   * re-runnable, and each file is recorded right after it was applied.
   */
  @Override
  public void migrate() {
    String lockName = "boxline:" + MariaDbSql.sha256(schema + "." + prefix).substring(0, 40);
    Step step = new Step("lock_migrations");
    String user = "?";
    try (Connection c = db.connect()) {
      user = c.getMetaData().getUserName();
      try (PreparedStatement lock = c.prepareStatement(sql(step.name()))) {
        lock.setString(1, lockName);
        try (ResultSet rs = lock.executeQuery()) {
          if (!rs.next() || rs.getInt(1) != 1) {
            throw new StoreException(
                "another process has been migrating " + schema + " for two minutes; try again",
                new SQLException("GET_LOCK timed out"));
          }
        }
      }
      try {
        applyMigrations(
            c,
            step,
            "CREATE DATABASE IF NOT EXISTS "
                + schema
                + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            "mariadb",
            SqlScript.MARIADB_MIGRATIONS,
            "database");
      } finally {
        try (PreparedStatement unlock = c.prepareStatement(sql("unlock_migrations"))) {
          unlock.setString(1, lockName);
          unlock.executeQuery().close();
        }
      }
    } catch (SQLException e) {
      if (JdbcSql.isPermissionDenied(e)) {
        throw migrationDenied("database", user, e);
      }
      throw new StoreException("migrate: " + step.name(), step.name(), e);
    }
  }

  // ------------------------------------------------------------------ admin

  // ------------------------------------------------------------------ publish
  /** Multi-row inserts of at most {@link MariaDbSql#MAX_ROWS} rows and about MAX_BYTES payload. */
  @Override
  void appendRows(Connection tx, List<OutboxRecord> rows) throws SQLException {
    int from = 0;
    while (from < rows.size()) {
      int to = from;
      long bytes = 0;
      while (to < rows.size()
          && to - from < MariaDbSql.MAX_ROWS
          && (to == from || bytes + rows.get(to).payload().length <= MariaDbSql.MAX_BYTES)) {
        bytes += rows.get(to).payload().length;
        to++;
      }
      insertOutboxRows(tx, rows.subList(from, to));
      from = to;
    }
  }

  private void insertOutboxRows(Connection tx, List<OutboxRecord> rows) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement(MariaDbSql.repeatRows(sql("append"), rows.size()))) {
      int i = 1;
      for (OutboxRecord r : rows) {
        i = bindOutboxRow(ps, i, r);
      }
      ps.executeUpdate();
    }
  }

  /** Idempotency keys are stored with their SHA-256, the primary key (keys of any length fit). */
  @Override
  String ownerKey(OutboxRecord r) {
    return r.topicId() + "/" + MariaDbSql.sha256(r.idempotencyKey());
  }

  /** Inserts the keys that are new; returns the owning event id of every key in the batch. */
  @Override
  Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records) throws SQLException {
    List<OutboxRecord> keyed = records.stream().filter(r -> r.idempotencyKey() != null).toList();
    StringBuilder json = new StringBuilder("[");
    for (int from = 0; from < keyed.size(); from += MariaDbSql.MAX_ROWS) {
      List<OutboxRecord> chunk =
          keyed.subList(from, Math.min(keyed.size(), from + MariaDbSql.MAX_ROWS));
      try (PreparedStatement ps =
          tx.prepareStatement(MariaDbSql.repeatRows(sql("claim_idempotency_keys"), chunk.size()))) {
        int i = 1;
        for (OutboxRecord r : chunk) {
          String hash = MariaDbSql.sha256(r.idempotencyKey());
          ps.setLong(i++, r.topicId());
          ps.setString(i++, hash);
          ps.setString(i++, r.idempotencyKey());
          ps.setString(i++, r.eventId().toString());
        }
        ps.executeUpdate();
      }
    }
    for (int i = 0; i < keyed.size(); i++) {
      OutboxRecord r = keyed.get(i);
      json.append(i == 0 ? "" : ",")
          .append('[')
          .append(r.topicId())
          .append(",\"")
          .append(MariaDbSql.sha256(r.idempotencyKey()))
          .append("\"]");
    }
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement ps = tx.prepareStatement(sql("idempotency_owners"))) {
      ps.setString(1, json.append(']').toString());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          owners.put(rs.getLong(1) + "/" + rs.getString(2), EpochMicros.uuid(rs.getString(3)));
        }
      }
    }
    return owners;
  }

  // ------------------------------------------------------------------ sequencer
  private static long timeoutSeconds(Duration ttl) {
    return Math.max(1, (ttl.toMillis() + 999) / 1000);
  }

  @Override
  boolean sequencerConnectionFits(Duration ttl) {
    return sequencerTimeoutSeconds == timeoutSeconds(ttl);
  }

  @Override
  void prepareSequencerSession(Connection c, Duration ttl) throws SQLException {
    long timeout = timeoutSeconds(ttl);
    if (mariaDb) {
      try (Statement st = c.createStatement()) {
        // A leader frozen inside a transaction (SIGSTOP, a long GC pause) must not keep the lease
        // row locked: the server ends a transaction left idle for longer than the lease time.
        st.execute("SET SESSION idle_transaction_timeout = " + timeout);
      }
    }
    sequencerTimeoutSeconds = timeout;
  }

  @Override
  void resetSequencerSession(Connection c) throws SQLException {
    if (mariaDb) {
      // The pool hands this connection to others next: they must not inherit the lease-sized
      // idle-transaction timeout (the pool itself restores auto-commit and isolation).
      try (Statement st = c.createStatement()) {
        st.execute("SET SESSION idle_transaction_timeout = DEFAULT");
      }
    }
  }

  @Override
  Long lockSequencer(Connection c, Step step, String owner, Duration ttl) throws SQLException {
    long version;
    try (PreparedStatement ps =
        c.prepareStatement(sql("lock_sequencer"), Statement.RETURN_GENERATED_KEYS)) {
      ps.setLong(1, EpochMicros.micros(ttl));
      ps.setString(2, owner);
      if (ps.executeUpdate() != 1) {
        return null;
      }
      try (ResultSet rs = ps.getGeneratedKeys()) {
        version = rs.next() ? rs.getLong(1) : 0;
      }
    }
    if (version <= 0) {
      step.at("last_insert_id");
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery(sql("last_insert_id"))) {
        rs.next();
        version = rs.getLong(1);
      }
    }
    return version;
  }

  @Override
  Map<PartitionKey, Long> lockPartitions(Connection c, Step step, List<PartitionKey> keys)
      throws SQLException {
    step.at("lock_partitions");
    Map<PartitionKey, Long> last = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql("lock_partitions"))) {
      ps.setString(1, MariaDbSql.json(keys));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          last.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    }
    return last;
  }

  @Override
  void advancePartitions(Connection c, Step step, List<PartitionHead> heads, long version)
      throws SQLException {
    step.at("advance_partitions");
    try (PreparedStatement ps = c.prepareStatement(sql("advance_partitions"))) {
      ps.setString(
          1,
          MariaDbSql.jsonRows(
              heads,
              PartitionHead::topicId,
              PartitionHead::partition,
              PartitionHead::lastSequence));
      ps.setLong(2, version);
      ps.executeUpdate();
    }
  }

  @Override
  int appendLog(Connection c, List<LogRow> rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setString(
          1, MariaDbSql.jsonRows(rows, LogRow::outboxId, LogRow::partition, LogRow::sequence));
      return ps.executeUpdate();
    }
  }

  @Override
  void deleteOutbox(Connection c, List<Long> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("delete_outbox"))) {
      ps.setString(1, MariaDbSql.jsonRows(ids, Long::longValue));
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fence(
      Connection c, long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner)
      throws SQLException {
    String json =
        MariaDbSql.jsonRows(
            sorted,
            f -> f.partition().topicId(),
            f -> f.partition().partition(),
            io.boxline.spi.Fence::epoch);
    Map<PartitionKey, Long> positions;
    try (PreparedStatement ps = c.prepareStatement(sql("fence_lock"))) {
      ps.setString(1, json);
      ps.setLong(2, subscriptionId);
      try (ResultSet rs = ps.executeQuery()) {
        positions = readPositions(rs);
      }
    }
    try (PreparedStatement ps = c.prepareStatement(sql("fence_cursors"))) {
      ps.setString(1, json);
      ps.setLong(2, subscriptionId);
      ps.setString(3, owner);
      ps.executeUpdate();
    }
    return positions;
  }
}
