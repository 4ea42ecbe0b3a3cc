package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.Fence;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * PostgreSQL (13+): {@code timestamptz} and {@code uuid} columns, lists of rows as arrays read with
 * {@code unnest} (a batch of any size is one round trip), migrations in one transaction, the
 * sequencer's batch in one statement ({@link PostgresSequencing}), wake-ups by LISTEN/NOTIFY
 * ({@link PostgresSignals}), sent by the sequencer once per batch and never by every producer
 * transaction, and a log cut into time segments by declarative partitioning.
 */
public final class PostgresDialect implements SqlDialect {
  private static final System.Logger LOG =
      // Under the store's name, which operators configure (and the tests watch).
      System.getLogger(SqlStore.class.getName());

  /** Default of {@code JdbcStore.Builder.outboxVacuumEvery}. */
  public static final int DEFAULT_OUTBOX_VACUUM_EVERY = 4096;

  /** Default of {@code JdbcStore.Builder.longTransactionWarning}. */
  public static final Duration DEFAULT_LONG_TRANSACTION_WARNING = Duration.ofMinutes(1);

  /**
   * PostgreSQL's own settings of a store.
   *
   * @param vacuumWhenAutovacuumOff after a purge, vacuum Boxline's tables when the server does not
   * @param outboxVacuumEvery the sequencer vacuums the outbox after this many events (0: never)
   * @param longTransactionWarning after an outbox vacuum, warn about transactions open longer than
   *     this (zero: never)
   * @param logSegmentWidth the width of the log's time segments (null: from the retentions)
   */
  public record Options(
      boolean vacuumWhenAutovacuumOff,
      int outboxVacuumEvery,
      Duration longTransactionWarning,
      Duration logSegmentWidth) {
    /** The defaults of {@code JdbcStore.Builder}. */
    public static final Options DEFAULTS =
        new Options(true, DEFAULT_OUTBOX_VACUUM_EVERY, DEFAULT_LONG_TRANSACTION_WARNING, null);
  }

  private final String outboxChannel;
  private final String logChannel;
  private final Options options;

  /** A dialect for the store with tables in {@code schema}, named with {@code prefix}. */
  public PostgresDialect(String schema, String prefix, Options options) {
    this.outboxChannel = schema + "_" + prefix + "outbox";
    this.logChannel = schema + "_" + prefix + "log";
    this.options = options;
  }

  @Override
  public String folder() {
    return "postgresql";
  }

  // ------------------------------------------------------------------ migrations
  @Override
  public void migrate(SqlContext ctx) {
    String[] user = {"?"};
    try {
      migrate(ctx, user);
    } catch (StoreException e) {
      if (e.getCause() instanceof SQLException s && JdbcSql.isPermissionDenied(s)) {
        throw SqlMigrations.denied(ctx, schemaKind(), user[0], s);
      }
      throw e;
    }
    if (!ctx.db().one("autovacuum_on", ps -> {}, rs -> rs.getBoolean(1)).orElse(false)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "autovacuum is off on this PostgreSQL server: Boxline's outbox, log and coordination"
              + " tables only shrink when vacuumed. "
              + (options.vacuumWhenAutovacuumOff()
                  ? "Boxline's retention loop vacuums them after each run; turn autovacuum on for"
                      + " steadier sizes."
                  : "vacuumWhenAutovacuumOff is false, so vacuum them yourself or turn autovacuum"
                      + " on."));
    }
  }

  /** Applies the missing migrations; sets {@code user[0]} to the database user first. */
  private void migrate(SqlContext ctx, String[] user) {
    JdbcSql db = ctx.db();
    db.tx(
        "migrate",
        c -> {
          user[0] = c.getMetaData().getUserName();
          try (PreparedStatement lock = c.prepareStatement(db.sql("lock_migrations"))) {
            lock.setLong(1, ("boxline:" + ctx.schema() + "." + ctx.prefix()).hashCode());
            lock.execute();
          }
          try (Statement st = c.createStatement()) {
            st.execute(db.sql("create_schema"));
            st.execute(db.sql("create_version_table"));
          }
          int current;
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery(db.sql("current_version"))) {
            rs.next();
            current = rs.getInt(1);
          }
          List<String> migrations = SqlScript.POSTGRES_MIGRATIONS;
          if (current > migrations.size()) {
            throw SqlMigrations.newerSchema(ctx, schemaKind(), current, migrations.size());
          }
          for (int v = current + 1; v <= migrations.size(); v++) {
            String file = migrations.get(v - 1);
            try (Statement st = c.createStatement()) {
              st.execute(SqlScript.load(folder(), file, ctx.schema(), ctx.prefix()));
            }
            try (PreparedStatement ps = c.prepareStatement(db.sql("record_version"))) {
              ps.setInt(1, v);
              ps.setString(2, file);
              ps.executeUpdate();
            }
          }
          return null;
        });
  }

  // ------------------------------------------------------------------ the store's parts
  @Override
  public boolean keepsIdleConnection() {
    return true;
  }

  @Override
  public SqlSequencing sequencing(SqlContext ctx) {
    return new PostgresSequencing(
        ctx, logChannel, options.outboxVacuumEvery(), options.longTransactionWarning());
  }

  @Override
  public SqlSignals signals(SqlContext ctx) {
    return new PostgresSignals(ctx, outboxChannel, logChannel);
  }

  @Override
  public LogSegments segments(SqlContext ctx) {
    return new PostgresLogSegments(
        ctx.db(), this, ctx.schema(), ctx.prefix(), options.logSegmentWidth());
  }

  @Override
  public boolean vacuumsWhenAutovacuumOff() {
    return options.vacuumWhenAutovacuumOff();
  }

  // ------------------------------------------------------------------ publish
  /** One row through {@code append_one}; more through {@code append_many}, one array a column. */
  @Override
  public void appendRows(Connection tx, JdbcSql db, List<OutboxRecord> toStore)
      throws SQLException {
    String step = "append_one";
    {
      if (toStore.size() == 1) {
        OutboxRecord r = toStore.get(0);
        try (PreparedStatement ps = tx.prepareStatement(db.sql(step))) {
          ps.setObject(1, r.eventId());
          ps.setLong(2, r.topicId());
          ps.setInt(3, r.partition());
          ps.setString(4, r.key());
          ps.setString(5, r.type());
          ps.setString(6, r.source());
          ps.setString(7, r.contentType());
          ps.setBytes(8, r.payload());
          ps.setString(9, Headers.toJson(r.headers()));
          ps.setTimestamp(10, r.deliverAt() == null ? null : Timestamp.from(r.deliverAt()));
          ps.executeUpdate();
        }
      } else if (!toStore.isEmpty()) {
        step = "append_many";
        EventArrays a = EventArrays.of(toStore, null);
        try (PreparedStatement ps = tx.prepareStatement(db.sql(step))) {
          ps.setArray(1, tx.createArrayOf("uuid", a.ids));
          ps.setArray(2, tx.createArrayOf("bigint", a.topics));
          ps.setArray(3, tx.createArrayOf("integer", a.partitions));
          a.bindBody(ps, tx, 4);
          ps.setArray(10, tx.createArrayOf("timestamptz", a.deliverAt));
          ps.executeUpdate();
        }
      }
    }
  }

  /**
   * Inserts the keys that are new, returning them; then reads the owning event id of every key in
   * the batch.
   */
  @Override
  public KeyClaims claimKeys(Connection tx, JdbcSql db, List<OutboxRecord> records)
      throws SQLException {
    List<Long> topics = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    List<UUID> ids = new ArrayList<>();
    for (OutboxRecord r : records) {
      if (r.idempotencyKey() != null) {
        topics.add(r.topicId());
        keys.add(r.idempotencyKey());
        ids.add(r.eventId());
      }
    }
    Array topicArray = tx.createArrayOf("bigint", topics.toArray());
    Array keyArray = tx.createArrayOf("text", keys.toArray());
    java.util.Set<String> claimedNow = new java.util.HashSet<>();
    try (PreparedStatement ps = tx.prepareStatement(db.sql("claim_idempotency_keys"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      ps.setArray(3, tx.createArrayOf("uuid", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          claimedNow.add(rs.getLong(1) + "/" + rs.getString(2));
        }
      }
    }
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement ps = tx.prepareStatement(db.sql("idempotency_owners"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          owners.put(rs.getLong(1) + "/" + rs.getString(2), rs.getObject(3, UUID.class));
        }
      }
    }
    return new KeyClaims(owners, claimedNow);
  }

  @Override
  public int setAsideUnplaceable(JdbcSql db) {
    return db.update("set_aside_unplaceable", ps -> {});
  }

  /** One call of {@code append_to_log} (V10): locks, numbers and inserts in one round trip. */
  @Override
  public List<Long> appendToLog(
      Connection tx, JdbcSql db, List<OutboxRecord> rows, Instant createdAt) throws SQLException {
    int n = rows.size();
    EventArrays a = EventArrays.of(rows, createdAt);
    List<Long> seqs = new ArrayList<>(n);
    try (PreparedStatement ps = tx.prepareStatement(db.sql("append_to_log"))) {
      ps.setArray(1, tx.createArrayOf("bigint", a.topics));
      ps.setArray(2, tx.createArrayOf("integer", a.partitions));
      ps.setArray(3, tx.createArrayOf("uuid", a.ids));
      a.bindBody(ps, tx, 4);
      ps.setArray(10, tx.createArrayOf("timestamptz", a.created));
      ps.setArray(11, tx.createArrayOf("timestamptz", a.deliverAt));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          seqs.add(rs.getLong(1));
        }
        if (seqs.size() != n) {
          throw new SQLException(
              "append_to_log returned " + seqs.size() + " sequences for " + n + " rows");
        }
      }
    }
    return seqs;
  }

  // ------------------------------------------------------------------ consume
  @Override
  public Map<PartitionKey, Long> fence(
      JdbcSql db, long subscriptionId, List<Fence> sorted, String owner) {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(db.sql("fence_cursors"))) {
      ps.setString(1, owner);
      ps.setArray(
          2, c.createArrayOf("bigint", JdbcSql.longs(sorted, f -> f.partition().topicId())));
      ps.setArray(
          3, c.createArrayOf("integer", JdbcSql.ints(sorted, f -> f.partition().partition())));
      ps.setArray(4, c.createArrayOf("bigint", JdbcSql.longs(sorted, Fence::epoch)));
      ps.setLong(5, subscriptionId);
      try (ResultSet rs = ps.executeQuery()) {
        return JdbcSql.readPositions(rs);
      }
    } catch (SQLException e) {
      throw db.fail("fence_cursors", e);
    }
  }

  /** All moves in one statement (the {@code commit_cursors} function), log checks included. */
  @Override
  public boolean movesInOneStatement() {
    return true;
  }

  @Override
  public List<CommitOutcome> moveAcross(
      Connection c, JdbcSql db, List<io.boxline.spi.SubscriptionSettlement> across)
      throws SQLException {
    // Primitive arrays travel in pgjdbc's binary array format: building ten text arrays with
    // createArrayOf was most of a worker's time in W1. A first sequence of 0 (sequences start at 1)
    // marks a move over events read from the log.
    int n = across.size();
    long[] subscriptions = new long[n];
    long[] topics = new long[n];
    int[] partitions = new int[n];
    long[] expected = new long[n];
    long[] positions = new long[n];
    long[] epochs = new long[n];
    long[] firstSeqs = new long[n];
    long[] lastSeqs = new long[n];
    int[] firstIds = new int[n];
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Settlement m = across.get(i).settlement();
      subscriptions[i] = across.get(i).subscriptionId();
      topics[i] = m.partition().topicId();
      partitions[i] = m.partition().partition();
      expected[i] = m.expectedPosition();
      positions[i] = m.position();
      epochs[i] = m.epoch();
      if (m.checksLog()) {
        firstSeqs[i] = m.held().get(0).sequence();
        lastSeqs[i] = m.held().get(m.held().size() - 1).sequence();
        firstIds[i] = ids.size() + 1; // SQL arrays count from 1
        m.held().forEach(h -> ids.add(h.id()));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(db.sql("commit_cursors"))) {
      ps.setObject(1, subscriptions);
      ps.setObject(2, topics);
      ps.setObject(3, partitions);
      ps.setObject(4, expected);
      ps.setObject(5, positions);
      ps.setObject(6, epochs);
      ps.setObject(7, firstSeqs);
      ps.setObject(8, lastSeqs);
      ps.setObject(9, firstIds);
      ps.setArray(10, ids.isEmpty() ? null : c.createArrayOf("uuid", ids.toArray()));
      List<CommitOutcome> outcomes = new ArrayList<>(n);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          outcomes.add(
              !rs.getBoolean(1)
                  ? CommitOutcome.LOG_CHANGED
                  : rs.getBoolean(2)
                      ? CommitOutcome.COMMITTED
                      : rs.getBoolean(3) ? CommitOutcome.CURSOR_MOVED : CommitOutcome.FENCED);
        }
      }
      return outcomes;
    }
  }

  @Override
  public Instant instant(ResultSet rs, int column) throws SQLException {
    return JdbcSql.instant(rs.getTimestamp(column));
  }

  @Override
  public void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    ps.setTimestamp(at, t == null ? null : Timestamp.from(t));
  }

  @Override
  public UUID uuid(ResultSet rs, int column) throws SQLException {
    return rs.getObject(column, UUID.class);
  }

  @Override
  public void bindUuid(PreparedStatement ps, int at, UUID id) throws SQLException {
    ps.setObject(at, id);
  }

  @Override
  public void bindDuration(PreparedStatement ps, int at, Duration age) throws SQLException {
    ps.setDouble(at, age.toMillis() / 1000.0);
  }

  /** The insert's {@code RETURNING id} yields no row when the row existed. */
  @Override
  public Long insertReturningId(Connection c, String sql, JdbcSql.Binder binder)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  public boolean retryable(SQLException e) {
    return JdbcSql.isDeadlock(e);
  }

  @Override
  public boolean serializationFailure(SQLException e) {
    return JdbcSql.anyCause(e, s -> "40001".equals(s.getSQLState()));
  }

  @Override
  public void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
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
    try (PreparedStatement ps = tx.prepareStatement(parkSql)) {
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

  /** One compare-and-set statement for all of them ({@code INSERT ... ON CONFLICT DO UPDATE}). */
  @Override
  public Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException {
    Map<PartitionKey, Long> epochs = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("acquire_leases"))) {
      ps.setString(1, group);
      ps.setString(2, member);
      bindPartitions(ps, 3, c, sorted);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          epochs.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    }
    return epochs;
  }

  @Override
  public int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("force_release"))) {
      bindPartitions(ps, 1, c, sorted);
      ps.setString(3, group);
      return ps.executeUpdate();
    }
  }

  @Override
  public void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException {
    ps.setArray(at, c.createArrayOf("text", members.toArray()));
  }

  /** Partitions as two arrays (topics, partitions) at {@code at} and {@code at + 1}. */
  private static void bindPartitions(
      PreparedStatement ps, int at, Connection c, List<PartitionKey> partitions)
      throws SQLException {
    ps.setArray(
        at, c.createArrayOf("bigint", partitions.stream().map(PartitionKey::topicId).toArray()));
    ps.setArray(
        at + 1,
        c.createArrayOf("integer", partitions.stream().map(PartitionKey::partition).toArray()));
  }

  @Override
  public void wakeAll(Connection tx, JdbcSql db) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(db.sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, "*");
      ps.execute();
    }
  }
}
