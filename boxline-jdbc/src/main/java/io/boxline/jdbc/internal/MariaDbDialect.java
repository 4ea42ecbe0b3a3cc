package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.Fence;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * MariaDB (10.6+) and MySQL (8.0+): times as epoch microseconds, event ids as text, lists as JSON
 * arrays (read with {@code JSON_TABLE}) or multi-row {@code VALUES}, inbox and idempotency keys
 * stored by their SHA-256 (so keys of any length fit the primary key), wake-ups through the {@code
 * wake_all} row that pollers watch. On MariaDB the sequencer's connection has {@code
 * idle_transaction_timeout} = the lease time, so a leader frozen inside a transaction cannot hold
 * the lease row for longer than its lease.
 */
public final class MariaDbDialect extends PollingDialect {
  /** MariaDB reports deadlocks as 1213 and lock wait timeouts as 1205. */
  private static final int DEADLOCK = 1213;

  private static final int LOCK_WAIT_TIMEOUT = 1205;

  /** Rows per multi-row INSERT: far below the 65,535 placeholders a statement may carry. */
  static final int MAX_ROWS = 500;

  /** Bytes of payload per multi-row INSERT, well under the default max_allowed_packet (16 MiB). */
  static final long MAX_BYTES = 4L << 20;

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  private final boolean mariaDb;
  private final Duration logSegmentWidth;
  private long sequencerTimeoutSeconds;

  /**
   * @param mariaDb true for MariaDB, false for MySQL (which has no idle-transaction timeout)
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   * @param logSegmentWidth the width of the log's time segments (null: from the retentions)
   */
  public MariaDbDialect(
      boolean mariaDb, Duration fastestPoll, Duration slowestPoll, Duration logSegmentWidth) {
    super(fastestPoll, slowestPoll);
    this.mariaDb = mariaDb;
    this.logSegmentWidth = logSegmentWidth;
  }

  @Override
  public String folder() {
    return "mariadb";
  }

  @Override
  public String schemaKind() {
    return "database";
  }

  @Override
  public LogSegments segments(SqlContext ctx) {
    return new MariaDbLogSegments(ctx.db(), this, logSegmentWidth);
  }

  /** {@code insert_partitions} takes the partition numbers as a JSON array. */
  @Override
  public void bindPartitionNumbers(PreparedStatement ps, int at, int partitions)
      throws SQLException {
    StringBuilder numbers = new StringBuilder(partitions * 6).append('[');
    for (int i = 0; i < partitions; i++) {
      numbers.append(i == 0 ? "" : ",").append(i);
    }
    ps.setString(at, numbers.append(']').toString());
  }

  @Override
  public boolean retryable(SQLException e) {
    return JdbcSql.anyCause(
        e,
        s ->
            s.getErrorCode() == DEADLOCK
                || s.getErrorCode() == LOCK_WAIT_TIMEOUT
                || "40001".equals(s.getSQLState()));
  }

  /** Connector/J may answer a batch with "success, count unknown" per statement. */
  @Override
  public boolean batchCountsRows() {
    return false;
  }

  @Override
  public String inboxLookupKey(String key) {
    return sha256(key);
  }

  @Override
  public boolean inboxKeepsKey() {
    return true;
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException {
    for (int from = 0; from < parks.size(); from += MAX_ROWS) {
      List<Park> chunk = parks.subList(from, Math.min(parks.size(), from + MAX_ROWS));
      try (PreparedStatement ps = tx.prepareStatement(repeatRows(parkSql, chunk.size()))) {
        int i = 1;
        for (Park k : chunk) {
          i = bindParkRow(ps, i, subscriptionId, partition, k);
        }
        ps.executeUpdate();
      }
    }
  }

  @Override
  public long deleteRows(PreparedStatement delete, List<LogKey> rows) throws SQLException {
    delete.setString(1, jsonRows(rows, LogKey::topicId, LogKey::partition, LogKey::sequence));
    return delete.executeUpdate();
  }

  /**
   * Lease rows outlive their owners: the missing ones are created first, on their own, so that the
   * transaction that follows only ever locks existing rows, exclusively, in list (key) order.
   */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    for (int from = 0; from < sorted.size(); from += MAX_ROWS) {
      List<PartitionKey> chunk = sorted.subList(from, Math.min(sorted.size(), from + MAX_ROWS));
      try (PreparedStatement ps =
          c.prepareStatement(repeatRows(db.sql("create_leases"), chunk.size()))) {
        int i = 1;
        for (PartitionKey k : chunk) {
          ps.setString(i++, group);
          ps.setLong(i++, k.topicId());
          ps.setInt(i++, k.partition());
        }
        ps.executeUpdate();
      }
    }
    return JdbcSql.inTransaction(c, tx -> lockAndTake(tx, db, group, member, sorted));
  }

  private static Map<PartitionKey, Long> lockAndTake(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    List<PartitionKey> free = new ArrayList<>();
    Map<PartitionKey, Long> epochs = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_lock"))) {
      ps.setString(1, json(sorted));
      ps.setString(2, group);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rs.getString(3);
          if (rs.wasNull()) {
            PartitionKey k = PartitionKey.of(rs.getLong(1), rs.getInt(2));
            free.add(k);
            epochs.put(k, rs.getLong(4) + 1);
          }
        }
      }
    }
    if (free.isEmpty()) {
      return epochs;
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_take"))) {
      ps.setString(1, json(JdbcSql.sorted(free)));
      ps.setString(2, group);
      ps.setString(3, member);
      int n = ps.executeUpdate();
      if (n != free.size()) {
        throw new SQLException(
            "acquire_take changed " + n + " of " + free.size() + " locked free leases");
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      ps.setString(1, json(sorted));
      ps.setString(2, group);
      return ps.executeUpdate();
    }
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setString(at, jsonStrings(members));
  }

  // ------------------------------------------------------------------ migrations
  /**
   * DDL commits implicitly on MariaDB/MySQL, so migrations cannot run in one transaction: they run
   * under a named lock (several JVMs starting at once serialise on it), every statement is
   * re-runnable, and each file is recorded right after it was applied.
   */
  @Override
  public void migrate(SqlContext ctx) {
    String lockName = "boxline:" + sha256(ctx.schema() + "." + ctx.prefix()).substring(0, 40);
    Step step = new Step("lock_migrations");
    String user = "?";
    try (Connection c = ctx.db().connect()) {
      user = c.getMetaData().getUserName();
      try (PreparedStatement lock = c.prepareStatement(ctx.db().sql(step.name()))) {
        lock.setString(1, lockName);
        try (ResultSet rs = lock.executeQuery()) {
          if (!rs.next() || rs.getInt(1) != 1) {
            throw new StoreException(
                "another process has been migrating "
                    + ctx.schema()
                    + " for two minutes; try again",
                new SQLException("GET_LOCK timed out"));
          }
        }
      }
      try {
        SqlMigrations.applyOneByOne(
            ctx,
            this,
            c,
            step,
            "CREATE DATABASE IF NOT EXISTS "
                + ctx.schema()
                + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            SqlScript.MARIADB_MIGRATIONS,
            schemaKind());
      } finally {
        try (PreparedStatement unlock = c.prepareStatement(ctx.db().sql("unlock_migrations"))) {
          unlock.setString(1, lockName);
          unlock.executeQuery().close();
        }
      }
    } catch (SQLException e) {
      if (JdbcSql.isPermissionDenied(e)) {
        throw SqlMigrations.denied(ctx, schemaKind(), user, e);
      }
      throw new StoreException("migrate: " + step.name(), step.name(), e);
    }
  }

  // ------------------------------------------------------------------ admin

  // ------------------------------------------------------------------ publish
  /** Multi-row inserts of at most {@link #MAX_ROWS} rows and about MAX_BYTES payload. */
  @Override
  public void appendRows(Connection tx, JdbcSql db, List<OutboxRecord> rows) throws SQLException {
    int from = 0;
    while (from < rows.size()) {
      int to = from;
      long bytes = 0;
      while (to < rows.size()
          && to - from < MAX_ROWS
          && (to == from || bytes + rows.get(to).payload().length <= MAX_BYTES)) {
        bytes += rows.get(to).payload().length;
        to++;
      }
      insertOutboxRows(tx, db, rows.subList(from, to));
      from = to;
    }
  }

  private static void insertOutboxRows(Connection tx, JdbcSql db, List<OutboxRecord> rows)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(repeatRows(db.sql("append"), rows.size()))) {
      int i = 1;
      for (OutboxRecord r : rows) {
        i = bindOutboxRow(ps, i, r);
      }
      ps.executeUpdate();
    }
  }

  /** Idempotency keys are stored with their SHA-256, the primary key (keys of any length fit). */
  @Override
  public String ownerKey(OutboxRecord r) {
    return r.topicId() + "/" + sha256(r.idempotencyKey());
  }

  /**
   * Reads which keys of the batch are taken already (a plain read: a locking one would take gap
   * locks that two transactions inserting keys deadlock on), inserts the others, and reads every
   * owner again with a locking read (a key another transaction holds waits for it). A key taken
   * before the insert is an earlier publish's, even of the same event id. Without RETURNING (MySQL
   * has none), a key a concurrent transaction claimed between the read and the insert counts as
   * this call's only when its owner is another event: the same event id published twice at once is
   * the one case this cannot tell apart.
   */
  @Override
  public KeyClaims claimKeys(Connection tx, JdbcSql db, List<OutboxRecord> records)
      throws SQLException {
    List<OutboxRecord> keyed = records.stream().filter(r -> r.idempotencyKey() != null).toList();
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < keyed.size(); i++) {
      OutboxRecord r = keyed.get(i);
      json.append(i == 0 ? "" : ",")
          .append('[')
          .append(r.topicId())
          .append(",\"")
          .append(sha256(r.idempotencyKey()))
          .append("\"]");
    }
    String keys = json.append(']').toString();
    Map<String, UUID> before = owners(tx, db, "idempotency_owners_before", keys);
    List<OutboxRecord> fresh = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>(before.keySet());
    for (OutboxRecord r : keyed) {
      if (seen.add(ownerKey(r))) {
        fresh.add(r);
      }
    }
    for (int from = 0; from < fresh.size(); from += MAX_ROWS) {
      List<OutboxRecord> chunk = fresh.subList(from, Math.min(fresh.size(), from + MAX_ROWS));
      try (PreparedStatement ps =
          tx.prepareStatement(repeatRows(db.sql("claim_idempotency_keys"), chunk.size()))) {
        int i = 1;
        for (OutboxRecord r : chunk) {
          String hash = sha256(r.idempotencyKey());
          ps.setLong(i++, r.topicId());
          ps.setString(i++, hash);
          ps.setString(i++, r.idempotencyKey());
          ps.setString(i++, r.eventId().toString());
        }
        ps.executeUpdate();
      }
    }
    Map<String, UUID> owners = owners(tx, db, "idempotency_owners", keys);
    java.util.Set<String> claimedNow = new java.util.HashSet<>();
    for (OutboxRecord r : fresh) {
      claimedNow.add(ownerKey(r));
    }
    return new KeyClaims(owners, claimedNow);
  }

  private static Map<String, UUID> owners(Connection tx, JdbcSql db, String query, String keys)
      throws SQLException {
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement ps = tx.prepareStatement(db.sql(query))) {
      ps.setString(1, keys);
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
  Long lockSequencer(Connection c, JdbcSql db, Step step, String owner, Duration ttl)
      throws SQLException {
    long version;
    try (PreparedStatement ps =
        c.prepareStatement(db.sql("lock_sequencer"), Statement.RETURN_GENERATED_KEYS)) {
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
          ResultSet rs = st.executeQuery(db.sql("last_insert_id"))) {
        rs.next();
        version = rs.getLong(1);
      }
    }
    return version;
  }

  @Override
  Map<PartitionKey, Long> lockPartitions(
      Connection c, JdbcSql db, Step step, List<PartitionKey> keys) throws SQLException {
    step.at("lock_partitions");
    Map<PartitionKey, Long> last = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("lock_partitions"))) {
      ps.setString(1, json(keys));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          last.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    }
    return last;
  }

  @Override
  void advancePartitions(
      Connection c, JdbcSql db, Step step, List<PartitionHead> heads, long version)
      throws SQLException {
    step.at("advance_partitions");
    try (PreparedStatement ps = c.prepareStatement(db.sql("advance_partitions"))) {
      ps.setString(
          1,
          jsonRows(
              heads,
              PartitionHead::topicId,
              PartitionHead::partition,
              PartitionHead::lastSequence));
      ps.setLong(2, version);
      ps.executeUpdate();
    }
  }

  @Override
  int appendLog(Connection c, JdbcSql db, List<LogRow> rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("append_log"))) {
      ps.setString(1, jsonRows(rows, LogRow::outboxId, LogRow::partition, LogRow::sequence));
      return ps.executeUpdate();
    }
  }

  @Override
  void deleteOutbox(Connection c, JdbcSql db, List<Long> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("delete_outbox"))) {
      ps.setString(1, jsonRows(ids, Long::longValue));
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fenceIn(
      Connection c, JdbcSql db, long subscriptionId, List<Fence> sorted, String owner)
      throws SQLException {
    String json =
        jsonRows(
            sorted, f -> f.partition().topicId(), f -> f.partition().partition(), Fence::epoch);
    Map<PartitionKey, Long> positions;
    try (PreparedStatement ps = c.prepareStatement(db.sql("fence_lock"))) {
      ps.setString(1, json);
      ps.setLong(2, subscriptionId);
      try (ResultSet rs = ps.executeQuery()) {
        positions = JdbcSql.readPositions(rs);
      }
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("fence_cursors"))) {
      ps.setString(1, json);
      ps.setLong(2, subscriptionId);
      ps.setString(3, owner);
      ps.executeUpdate();
    }
    return positions;
  }

  // ------------------------------------------------------------------ lists
  /** Lower-case hex SHA-256 of the UTF-8 bytes: equal to {@code LOWER(SHA2(key, 256))} in SQL. */
  static String sha256(String key) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(md.digest(key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /**
   * A statement that ends in {@code VALUES (...)} with its row group repeated {@code rows} times.
   */
  static String repeatRows(String sql, int rows) {
    int at = sql.lastIndexOf("VALUES");
    String head = sql.substring(0, at + "VALUES".length());
    String row = sql.substring(at + "VALUES".length()).strip();
    StringBuilder out = new StringBuilder(head.length() + rows * (row.length() + 2));
    out.append(head).append(' ');
    for (int i = 0; i < rows; i++) {
      if (i > 0) {
        out.append(", ");
      }
      out.append(row);
    }
    return out.toString();
  }

  /** {@code [[topic, partition], ...]} */
  static String json(List<PartitionKey> partitions) {
    StringBuilder b = new StringBuilder(partitions.size() * 12 + 2).append('[');
    for (int i = 0; i < partitions.size(); i++) {
      PartitionKey k = partitions.get(i);
      if (i > 0) {
        b.append(',');
      }
      b.append('[').append(k.topicId()).append(',').append(k.partition()).append(']');
    }
    return b.append(']').toString();
  }

  /** {@code [[a0, b0, ...], ...]}: the numbers {@code columns} take from each row, in order. */
  @SafeVarargs
  static <T> String jsonRows(List<T> rows, java.util.function.ToLongFunction<T>... columns) {
    StringBuilder b = new StringBuilder(rows.size() * 24 + 2).append('[');
    for (int i = 0; i < rows.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append('[');
      for (int j = 0; j < columns.length; j++) {
        if (j > 0) {
          b.append(',');
        }
        b.append(columns[j].applyAsLong(rows.get(i)));
      }
      b.append(']');
    }
    return b.append(']').toString();
  }

  /** A JSON array of strings, escaped with Jackson. */
  static String jsonStrings(Collection<String> values) {
    try {
      return JSON.writeValueAsString(values);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
