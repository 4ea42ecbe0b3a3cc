package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Settlement;
import io.boxline.spi.StoreStats;
import io.boxline.spi.WakeupListener;
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
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The PostgreSQL dialect. Multi-row writes go through {@code unnest} of arrays, so a batch of any
 * size is one round trip; wake-ups use LISTEN/NOTIFY, sent by the sequencer once per batch (and by
 * remote publishers at a bounded rate), never by every producer transaction.
 */
public final class PostgresStore extends SqlStore {
  final String outboxChannel;
  final String logChannel;
  private final SqlCoordination coordination;
  private final boolean vacuumWhenAutovacuumOff;

  /** Default of {@code JdbcStore.Builder.outboxVacuumEvery}. */
  public static final int DEFAULT_OUTBOX_VACUUM_EVERY = 4096;

  private final PostgresSequencer sequencer;
  private final PostgresOutboxVacuum outboxVacuum;

  /** Default of {@code JdbcStore.Builder.longTransactionWarning}. */
  public static final Duration DEFAULT_LONG_TRANSACTION_WARNING = Duration.ofMinutes(1);

  private volatile PostgresListener listener;
  private final IdleConnection idle;
  private static final System.Logger LOG = System.getLogger(PostgresStore.class.getName());

  public PostgresStore(DataSource dataSource, String schema, String prefix, String version) {
    this(
        dataSource,
        schema,
        prefix,
        version,
        true,
        DEFAULT_OUTBOX_VACUUM_EVERY,
        DEFAULT_LONG_TRANSACTION_WARNING,
        null);
  }

  /**
   * @param outboxVacuumEvery the sequencer vacuums the outbox after this many events (0: never)
   * @param longTransactionWarning after an outbox vacuum, warn about transactions open longer than
   *     this (zero: never)
   * @param logSegmentWidth the width of the log's time segments (null: from the retentions)
   */
  public PostgresStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      boolean vacuumWhenAutovacuumOff,
      int outboxVacuumEvery,
      Duration longTransactionWarning,
      Duration logSegmentWidth) {
    this(
        dataSource,
        schema,
        prefix,
        description(version, "schema", schema, prefix),
        SqlScript.named("postgresql", schema, prefix),
        vacuumWhenAutovacuumOff,
        outboxVacuumEvery,
        longTransactionWarning,
        logSegmentWidth);
  }

  private PostgresStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String description,
      Map<String, String> q,
      boolean vacuumWhenAutovacuumOff,
      int outboxVacuumEvery,
      Duration longTransactionWarning,
      Duration logSegmentWidth) {
    super(
        dataSource,
        schema,
        prefix,
        description,
        new JdbcSql(dataSource, q),
        new PostgresDialect(logChannel(schema, prefix)),
        vacuumWhenAutovacuumOff,
        (db, dialect) -> new PostgresLogSegments(db, dialect, schema, prefix, logSegmentWidth));
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    this.outboxVacuum =
        new PostgresOutboxVacuum(db, schema, prefix, outboxVacuumEvery, longTransactionWarning);
    this.outboxChannel = schema + "_" + prefix + "outbox";
    this.logChannel = logChannel(schema, prefix);
    this.sequencer = new PostgresSequencer(db, logChannel);
    this.idle = new IdleConnection(dataSource);
    this.coordination = new SqlCoordination(db, dialect, description, idle);
  }

  private static String logChannel(String schema, String prefix) {
    return schema + "_" + prefix + "log";
  }

  private Connection connect() throws SQLException {
    return db.connect();
  }

  private <T> T tx(String name, JdbcSql.Work<T> work) {
    return db.tx(name, work);
  }

  // ------------------------------------------------------------------ migrations
  @Override
  public void migrate() {
    String[] user = {"?"};
    try {
      migrate(user);
    } catch (StoreException e) {
      if (e.getCause() instanceof SQLException s && JdbcSql.isPermissionDenied(s)) {
        throw migrationDenied("schema", user[0], s);
      }
      throw e;
    }
    if (!parking.autovacuumOn()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "autovacuum is off on this PostgreSQL server: Boxline's outbox, log and coordination"
              + " tables only shrink when vacuumed. "
              + (vacuumWhenAutovacuumOff
                  ? "Boxline's retention loop vacuums them after each run; turn autovacuum on for"
                      + " steadier sizes."
                  : "vacuumWhenAutovacuumOff is false, so vacuum them yourself or turn autovacuum"
                      + " on."));
    }
  }

  /** Applies the missing migrations; sets {@code user[0]} to the database user first. */
  private void migrate(String[] user) {
    tx(
        "migrate",
        c -> {
          user[0] = c.getMetaData().getUserName();
          try (PreparedStatement lock = c.prepareStatement(sql("lock_migrations"))) {
            lock.setLong(1, ("boxline:" + schema + "." + prefix).hashCode());
            lock.execute();
          }
          try (Statement st = c.createStatement()) {
            st.execute(sql("create_schema"));
            st.execute(sql("create_version_table"));
          }
          int current;
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery(sql("current_version"))) {
            rs.next();
            current = rs.getInt(1);
          }
          List<String> migrations = SqlScript.POSTGRES_MIGRATIONS;
          if (current > migrations.size()) {
            throw newerSchema("schema", current, migrations.size());
          }
          for (int v = current + 1; v <= migrations.size(); v++) {
            String file = migrations.get(v - 1);
            try (Statement st = c.createStatement()) {
              st.execute(SqlScript.load("postgresql", file, schema, prefix));
            }
            try (PreparedStatement ps = c.prepareStatement(sql("record_version"))) {
              ps.setInt(1, v);
              ps.setString(2, file);
              ps.executeUpdate();
            }
          }
          return null;
        });
  }

  // ------------------------------------------------------------------ publish
  /** One row through {@code append_one}; more through {@code append_many}, one array a column. */
  @Override
  void appendRows(Connection tx, List<OutboxRecord> toStore) {
    String step = "append_one";
    try {
      if (toStore.size() == 1) {
        OutboxRecord r = toStore.get(0);
        try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
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
        try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
          ps.setArray(1, tx.createArrayOf("uuid", a.ids));
          ps.setArray(2, tx.createArrayOf("bigint", a.topics));
          ps.setArray(3, tx.createArrayOf("integer", a.partitions));
          a.bindBody(ps, tx, 4);
          ps.setArray(10, tx.createArrayOf("timestamptz", a.deliverAt));
          ps.executeUpdate();
        }
      }
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  /** Inserts the keys that are new; returns the owning event id of every key in the batch. */
  @Override
  Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records) throws SQLException {
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
    try (PreparedStatement ps = tx.prepareStatement(sql("claim_idempotency_keys"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      ps.setArray(3, tx.createArrayOf("uuid", ids.toArray()));
      ps.executeUpdate();
    }
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement ps = tx.prepareStatement(sql("idempotency_owners"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          owners.put(rs.getLong(1) + "/" + rs.getString(2), rs.getObject(3, UUID.class));
        }
      }
    }
    return owners;
  }

  @Override
  public int setAsideUnplaceable() {
    return db.update("set_aside_unplaceable", ps -> {});
  }

  @Override
  public void notifyOutbox(Connection tx) {
    try (PreparedStatement ps = tx.prepareStatement(sql("notify"))) {
      ps.setString(1, outboxChannel);
      ps.setString(2, "");
      ps.execute();
    } catch (SQLException e) {
      throw fail("notify", e);
    }
  }

  /** One call of {@code append_to_log} (V10): locks, numbers and inserts in one round trip. */
  @Override
  long[] appendToLogRows(Connection tx, List<OutboxRecord> rows, Instant createdAt)
      throws SQLException {
    int n = rows.size();
    EventArrays a = EventArrays.of(rows, createdAt);
    long[] seqs = new long[n];
    try (PreparedStatement ps = tx.prepareStatement(sql("append_to_log"))) {
      ps.setArray(1, tx.createArrayOf("bigint", a.topics));
      ps.setArray(2, tx.createArrayOf("integer", a.partitions));
      ps.setArray(3, tx.createArrayOf("uuid", a.ids));
      a.bindBody(ps, tx, 4);
      ps.setArray(10, tx.createArrayOf("timestamptz", a.created));
      ps.setArray(11, tx.createArrayOf("timestamptz", a.deliverAt));
      try (ResultSet rs = ps.executeQuery()) {
        int i = 0;
        while (rs.next()) {
          seqs[i++] = rs.getLong(1);
        }
        if (i != n) {
          throw new SQLException("append_to_log returned " + i + " sequences for " + n + " rows");
        }
      }
    }
    return seqs;
  }

  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    try (PreparedStatement ps = tx.prepareStatement(sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
      return true;
    } catch (SQLException e) {
      throw fail("notify", e);
    }
  }

  @Override
  public void announce(List<PartitionHead> heads) {
    try (Connection c = idle.borrow();
        PreparedStatement ps = c.prepareStatement(sql("announce"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    } catch (SQLException e) {
      throw fail("announce", e);
    }
  }

  // ------------------------------------------------------------------ sequencer
  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    try (Connection c = idle.borrow();
        PreparedStatement ps = c.prepareStatement(sql("acquire_sequencer"))) {
      ps.setString(1, owner);
      ps.setString(2, owner);
      ps.setDouble(3, ttl.toMillis() / 1000.0);
      ps.setString(4, owner);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return LeaseStatus.NOT_HELD;
        }
        return rs.getBoolean(1) ? LeaseStatus.HELD_WITH_WORK : LeaseStatus.HELD_IDLE;
      }
    } catch (SQLException e) {
      throw fail("acquire_sequencer", e);
    }
  }

  @Override
  public void releaseSequencerLease(String owner) {
    db.update("release_sequencer", ps -> ps.setString(1, owner));
  }

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch batch = sequencer.sequence(owner, ttl, maxEvents, assigner, returnEvents);
    outboxVacuum.sequenced(batch.events());
    return batch;
  }

  @Override
  public StoreStats stats() {
    return outboxVacuum.stats();
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fenceSorted(
      long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("fence_cursors"))) {
      ps.setString(1, owner);
      ps.setArray(2, c.createArrayOf("bigint", H2Sql.longs(sorted, f -> f.partition().topicId())));
      ps.setArray(
          3, c.createArrayOf("integer", H2Sql.ints(sorted, f -> f.partition().partition())));
      ps.setArray(4, c.createArrayOf("bigint", H2Sql.longs(sorted, io.boxline.spi.Fence::epoch)));
      ps.setLong(5, subscriptionId);
      try (ResultSet rs = ps.executeQuery()) {
        return readPositions(rs);
      }
    } catch (SQLException e) {
      throw fail("fence_cursors", e);
    }
  }

  @Override
  public CoordinationStore coordination() {
    return coordination;
  }

  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    try (Connection c = idle.borrow()) {
      return db.list(
          c,
          "backlogged",
          ps -> ps.setLong(1, subscriptionId),
          rs -> new Backlog(rs.getLong(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4)));
    } catch (SQLException e) {
      throw fail("backlogged", e);
    }
  }

  /** All moves in one statement (the {@code commit_cursors} function), log checks included. */
  @Override
  protected boolean movesInOneStatement() {
    return true;
  }

  @Override
  protected List<CommitOutcome> moveCursors(
      Connection c, long subscriptionId, List<Settlement> moves) throws SQLException {
    return commitCursors(c, subscriptionId, moves);
  }

  private List<CommitOutcome> commitCursors(
      Connection c, long subscriptionId, List<Settlement> moves) throws SQLException {
    // Primitive arrays travel in pgjdbc's binary array format: building ten text arrays with
    // createArrayOf was most of a worker's time in W1. A first sequence of 0 (sequences start at 1)
    // marks a move over events read from the log.
    int n = moves.size();
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
      Settlement m = moves.get(i);
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
    try (PreparedStatement ps = c.prepareStatement(sql("commit_cursors"))) {
      ps.setLong(1, subscriptionId);
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

  // ------------------------------------------------------------------ wake-ups
  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (listener == null) {
      listener = new PostgresListener(dataSource, outboxChannel, logChannel, wakeups);
      listener.start();
    }
    return true;
  }

  @Override
  public synchronized void close() {
    if (listener != null) {
      listener.stop();
      listener = null;
    }
    outboxVacuum.close();
    idle.close();
  }
}
