package io.boxline.jdbc.internal;

import io.boxline.DeadLetterQuery;
import io.boxline.spi.Backlog;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.SequencePlan;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What the dialects without LISTEN/NOTIFY and without data-modifying CTEs (MariaDB / MySQL, H2) do
 * alike. Times are epoch microseconds and event ids text; wake-ups come from in-process signals and
 * from {@link PollingWakeups}, an adaptive poll of one primary-key row; the sequencer keeps a
 * connection of its own (READ COMMITTED) and moves outbox rows in the steps of {@link
 * SqlSequencer}. Subclasses say how lists of rows travel to the database.
 */
abstract class PollingSqlStore extends SqlStore {
  private final System.Logger log = System.getLogger(getClass().getName());
  private final SqlCoordination coordination;
  private final Duration fastestPoll;
  private final Duration slowestPoll;
  private final Object sequencerLock = new Object();
  private Connection sequencerConnection;
  private final PollingSequencer sequencer = new PollingSequencer();
  private PollingWakeups poller;

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   * @param segments see {@link SqlStore}
   */
  PollingSqlStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String description,
      JdbcSql db,
      SqlDialect dialect,
      Duration fastestPoll,
      Duration slowestPoll,
      java.util.function.BiFunction<JdbcSql, SqlDialect, LogSegments> segments) {
    super(dataSource, schema, prefix, description, db, dialect, false, segments);
    this.coordination = new SqlCoordination(db, dialect, description, null);
    this.fastestPoll = fastestPoll;
    this.slowestPoll = slowestPoll;
  }

  /**
   * Takes the sequencer lease row for {@code owner} in the open transaction; returns the lease's
   * version, or null when another process holds it. Sets {@code step} to what runs.
   */
  abstract Long lockSequencer(Connection c, Step step, String owner, Duration ttl)
      throws SQLException;

  /**
   * Locks the partition rows {@code keys} (in key order) and returns their last sequences. Sets
   * {@code step} to what runs.
   */
  abstract Map<PartitionKey, Long> lockPartitions(Connection c, Step step, List<PartitionKey> keys)
      throws SQLException;

  /**
   * Moves each partition's head to its last sequence at lease {@code version}. Sets {@code step} to
   * what runs.
   */
  abstract void advancePartitions(Connection c, Step step, List<PartitionHead> heads, long version)
      throws SQLException;

  /** Runs {@code append_log} over {@code rows}; returns the rows written. */
  abstract int appendLog(Connection c, List<LogRow> rows) throws SQLException;

  /** Runs {@code delete_outbox} over the outbox rows {@code ids}. */
  abstract void deleteOutbox(Connection c, List<Long> ids) throws SQLException;

  /**
   * In the open transaction: raises the cursors of {@code sorted} (in key order) to their fence's
   * epoch for {@code owner}; returns the position of each one raised.
   */
  abstract Map<PartitionKey, Long> fence(
      Connection c, long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner)
      throws SQLException;

  /** Whether the open sequencer connection may go on serving leases of {@code ttl}. */
  boolean sequencerConnectionFits(Duration ttl) {
    return true;
  }

  /** Sets up a new sequencer connection's session for leases of {@code ttl}. */
  void prepareSequencerSession(Connection c, Duration ttl) throws SQLException {}

  /** Undoes {@link #prepareSequencerSession} before the connection goes back to the pool. */
  void resetSequencerSession(Connection c) throws SQLException {}

  // ------------------------------------------------------------------ migrations
  /**
   * Applies the migrations the schema lacks. DDL commits implicitly, so every statement runs on its
   * own (each is re-runnable) and each file is recorded right after it was applied.
   *
   * @param createSchema the statement that creates the schema if it does not exist
   * @param kind what the dialect calls a schema, for messages
   * @param step set to what runs, for the caller's failure message
   */
  void applyMigrations(
      Connection c,
      Step step,
      String createSchema,
      String dialect,
      List<String> migrations,
      String kind)
      throws SQLException {
    step.at("create_version_table");
    try (Statement st = c.createStatement()) {
      st.execute(createSchema);
      st.execute(sql(step.name()));
    }
    step.at("current_version");
    int current;
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql(step.name()))) {
      rs.next();
      current = rs.getInt(1);
    }
    if (current > migrations.size()) {
      throw newerSchema(kind, current, migrations.size());
    }
    for (int v = current + 1; v <= migrations.size(); v++) {
      String file = migrations.get(v - 1);
      step.at(file);
      for (String statement : SqlScript.statements(SqlScript.load(dialect, file, schema, prefix))) {
        try (Statement st = c.createStatement()) {
          st.execute(statement);
        }
      }
      step.at("record_version");
      try (PreparedStatement ps = c.prepareStatement(sql(step.name()))) {
        ps.setInt(1, v);
        ps.setString(2, file);
        insertUnlessPresent(ps);
      }
    }
  }

  // ------------------------------------------------------------------ admin
  /**
   * Locks the partitions (in key order, {@link #lockPartitions}), sets their new last sequences and
   * inserts the rows into the log; the sequencer never sees them.
   */
  @Override
  long[] appendToLogRows(Connection tx, List<OutboxRecord> rows, java.time.Instant createdAt)
      throws SQLException {
    Map<PartitionKey, Integer> counts = new HashMap<>();
    for (OutboxRecord r : rows) {
      counts.merge(PartitionKey.of(r.topicId(), r.partition()), 1, Integer::sum);
    }
    List<PartitionKey> keys = JdbcSql.sorted(counts.keySet());
    Step step = new Step("lock_partitions");
    Map<PartitionKey, Long> last = lockPartitions(tx, step, keys);
    if (last.size() != keys.size()) {
      throw new SQLException(
          "lock_partitions matched " + last.size() + " of " + keys.size() + " partitions");
    }
    try (PreparedStatement ps = tx.prepareStatement(sql("set_last_seq"))) {
      for (PartitionKey k : keys) {
        ps.setLong(1, last.get(k) + counts.get(k));
        ps.setLong(2, k.topicId());
        ps.setInt(3, k.partition());
        ps.addBatch();
      }
      ps.executeBatch();
    }
    long[] seqs = new long[rows.size()];
    Map<PartitionKey, Long> next = new HashMap<>();
    for (int i = 0; i < rows.size(); i++) {
      OutboxRecord r = rows.get(i);
      seqs[i] =
          next.merge(
              PartitionKey.of(r.topicId(), r.partition()),
              last.get(PartitionKey.of(r.topicId(), r.partition())) + 1,
              (a, b) -> a + 1);
    }
    long created = EpochMicros.micros(createdAt);
    long sequenced = EpochMicros.micros(java.time.Instant.now());
    try (PreparedStatement ps = tx.prepareStatement(sql("insert_log"))) {
      for (int i = 0; i < rows.size(); i++) {
        OutboxRecord r = rows.get(i);
        int c = 1;
        ps.setLong(c++, r.topicId());
        ps.setInt(c++, r.partition());
        ps.setLong(c++, seqs[i]);
        ps.setString(c++, r.eventId().toString());
        c = bindBody(ps, c, r);
        ps.setLong(c++, created);
        ps.setLong(c++, sequenced);
        ps.setObject(c, EpochMicros.microsOrNull(r.deliverAt()), java.sql.Types.BIGINT);
        ps.addBatch();
      }
      ps.executeBatch();
    }
    return seqs;
  }

  /**
   * Binds one outbox row of the row-wise {@code append} statement from parameter {@code i}; returns
   * the next index.
   */
  static int bindOutboxRow(PreparedStatement ps, int i, OutboxRecord r) throws SQLException {
    ps.setString(i++, r.eventId().toString());
    ps.setLong(i++, r.topicId());
    ps.setObject(i++, r.partition() < 0 ? null : r.partition(), java.sql.Types.INTEGER);
    i = bindBody(ps, i, r);
    ps.setObject(i++, EpochMicros.microsOrNull(r.deliverAt()), java.sql.Types.BIGINT);
    return i;
  }

  /**
   * Binds key, type, source, content type, payload and headers, the columns every event statement
   * has in this order, from parameter {@code i}; returns the next index.
   */
  static int bindBody(PreparedStatement ps, int i, OutboxRecord r) throws SQLException {
    ps.setString(i++, r.key());
    ps.setString(i++, r.type());
    ps.setString(i++, r.source());
    ps.setString(i++, r.contentType());
    ps.setBytes(i++, r.payload());
    ps.setString(i++, Headers.toJson(r.headers()));
    return i;
  }

  @Override
  public int setAsideUnplaceable() {
    return db.tx(
        "set_aside_unplaceable",
        c -> {
          int copied = db.update(c, "set_aside_unplaceable_copy", ps -> {});
          return copied == 0 ? 0 : db.update(c, "set_aside_unplaceable_delete", ps -> {});
        });
  }

  /** Other processes re-check every partition at their next poll (there is no NOTIFY). */
  @Override
  public void announce(List<PartitionHead> heads) {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql("wake_all"))) {
      ps.executeUpdate();
    } catch (SQLException e) {
      throw fail("wake_all", e);
    }
  }

  /**
   * A wake-up in the caller's transaction would need NOTIFY; the caller announces after its commit
   * instead.
   */
  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    return false;
  }

  /** The sequencer and the poller keep no counters of their own. */
  @Override
  public io.boxline.spi.StoreStats stats() {
    return io.boxline.spi.StoreStats.NONE;
  }

  // ------------------------------------------------------------------ publish
  /**
   * Nothing to add to the transaction: there is no NOTIFY. The sequencer's process finds the rows
   * with its wake-up poll (see {@link PollingWakeups}).
   */
  @Override
  public void notifyOutbox(Connection tx) {}

  // ------------------------------------------------------------------ sequencer
  /** The sequencer's own connection: auto-commit off, READ COMMITTED. */
  private Connection sequencerConnection(Duration ttl) throws SQLException {
    if (sequencerConnection != null && !sequencerConnectionFits(ttl)) {
      closeSequencerConnection();
    }
    if (sequencerConnection == null) {
      Connection c = dataSource.getConnection();
      try {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        prepareSequencerSession(c, ttl);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        JdbcSql.closeQuietly(c);
        throw e;
      }
      sequencerConnection = c;
    }
    return sequencerConnection;
  }

  private void closeSequencerConnection() {
    if (sequencerConnection != null) {
      Connection c = sequencerConnection;
      try {
        c.rollback();
        resetSequencerSession(c);
      } catch (SQLException e) {
        try {
          c.abort(Runnable::run); // cannot reset it: make sure nobody reuses it
        } catch (SQLException | RuntimeException ignored) {
          // closing anyway
        }
      }
      JdbcSql.closeQuietly(c);
      sequencerConnection = null;
    }
  }

  /** Runs sequencer work on its connection; any failure discards the connection. */
  private <T> T onSequencerConnection(Duration ttl, Step step, JdbcSql.Work<T> work) {
    synchronized (sequencerLock) {
      try {
        Connection c = sequencerConnection(ttl);
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          closeSequencerConnection();
          throw e;
        }
      } catch (SQLException e) {
        closeSequencerConnection();
        throw fail(step.name(), e);
      }
    }
  }

  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    Step step = new Step("try_sequencer");
    return onSequencerConnection(
        ttl,
        step,
        c -> {
          boolean work;
          try (PreparedStatement ps = c.prepareStatement(sql("try_sequencer"))) {
            ps.setString(1, owner);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return LeaseStatus.NOT_HELD;
              }
              work = rs.getBoolean(2);
            }
          }
          step.at("take_sequencer");
          try (PreparedStatement ps = c.prepareStatement(sql("take_sequencer"))) {
            ps.setString(1, owner);
            ps.setString(2, owner);
            ps.setLong(3, EpochMicros.micros(ttl));
            ps.executeUpdate();
          }
          return work ? LeaseStatus.HELD_WITH_WORK : LeaseStatus.HELD_IDLE;
        });
  }

  @Override
  public void releaseSequencerLease(String owner) {
    synchronized (sequencerLock) {
      closeSequencerConnection();
    }
    db.update("release_sequencer", ps -> ps.setString(1, owner));
  }

  /**
   * With {@code returnEvents} the sequencer reads the whole outbox rows it moves (one read, on the
   * connection it holds anyway) and returns them with their sequences, so that consumers in this
   * process take them from memory; they settle such events naming them ({@link
   * io.boxline.spi.Settlement#held}), so that the cursor passes them only if the log holds them.
   */
  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    Step step = new Step("lock_sequencer");
    return onSequencerConnection(
        ttl,
        step,
        c -> sequencer.sequenceIn(c, step, owner, ttl, maxEvents, assigner, returnEvents));
  }

  /**
   * The sequencer's steps here: a plain read of the outbox rows (with their events, when they are
   * handed over), partitions locked and read, then advanced at the lease's version, the log rows
   * copied inside the database from {@code [outbox id, partition, sequence]} rows, the outbox rows
   * deleted. Nothing wakes anyone in the transaction: pollers see the lease's new version.
   */
  private final class PollingSequencer extends SqlSequencer<StoredEvent> {
    PollingSequencer() {
      super(PollingSqlStore.this.db);
    }

    @Override
    Long lockSequencer(Connection c, Step step, String owner, Duration ttl) throws SQLException {
      return PollingSqlStore.this.lockSequencer(c, step, owner, ttl);
    }

    /** {@code row} is the event (sequence 0) with {@code events}, else null. */
    @Override
    Taken<StoredEvent> taken(ResultSet rs, boolean events) throws SQLException {
      return new Taken<>(
          rs.getLong(1),
          rs.getLong(2),
          partitionOrNone(rs, 3),
          rs.getString(4),
          events
              ? Headers.storedEvent(
                  uuid(rs, 5),
                  0,
                  rs.getString(4),
                  rs.getString(6),
                  rs.getString(7),
                  rs.getString(8),
                  rs.getBytes(9),
                  rs.getString(10),
                  instant(rs, 11),
                  instant(rs, 12))
              : null);
    }

    @Override
    void advancePartitions(Connection c, Step step, SequencePlan plan, long version)
        throws SQLException {
      plan.numberAfter(lockPartitions(c, step, plan.partitions()));
      PollingSqlStore.this.advancePartitions(c, step, plan.heads(), version);
    }

    @Override
    int appendLog(Connection c, List<Taken<StoredEvent>> taken, SequencePlan plan)
        throws SQLException {
      List<LogRow> rows = new ArrayList<>(taken.size());
      for (int i = 0; i < taken.size(); i++) {
        rows.add(
            new LogRow(taken.get(i).outboxId(), plan.partition(i).partition(), plan.sequence(i)));
      }
      return PollingSqlStore.this.appendLog(c, rows);
    }

    @Override
    void deleteOutbox(Connection c, Step step, List<Taken<StoredEvent>> taken) throws SQLException {
      step.at("delete_outbox");
      List<Long> ids = new ArrayList<>(taken.size());
      for (Taken<StoredEvent> t : taken) {
        ids.add(t.outboxId());
      }
      PollingSqlStore.this.deleteOutbox(c, ids);
    }

    /** Pollers see the lease row's new version once the transaction commits. */
    @Override
    void wake(Connection c, Step step, List<PartitionHead> heads) {
      step.at("commit");
    }

    @Override
    StoredEvent event(StoredEvent row) {
      return row;
    }
  }

  // ------------------------------------------------------------------ consume
  @Override
  Map<PartitionKey, Long> fenceSorted(
      long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner) {
    return db.tx("fence_cursors", c -> fence(c, subscriptionId, sorted, owner));
  }

  @Override
  public CoordinationStore coordination() {
    return coordination;
  }

  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    return db.list(
        "backlogged",
        ps -> ps.setLong(1, subscriptionId),
        rs -> new Backlog(rs.getLong(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4)));
  }

  @Override
  public int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    int n = super.redriveDeadLetters(subscriptionId, q);
    PollingWakeups local;
    synchronized (this) {
      local = poller;
    }
    if (n > 0 && local != null) {
      local.wakeAllLocally(); // other processes see wake_all at their next poll
    }
    return n;
  }

  // ------------------------------------------------------------------ wake-ups
  /** Starts the adaptive wake-up poll (there is no LISTEN/NOTIFY). */
  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (poller == null) {
      poller =
          new PollingWakeups(
              db, "boxline-listener-" + schema + prefix, wakeups, fastestPoll, slowestPoll);
      poller.start();
    }
    return true;
  }

  /** Statements the wake-up poll has run, for measuring its cost. */
  public synchronized long pollStatements() {
    return poller == null ? 0 : poller.statements();
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.stop();
      poller = null;
    }
    synchronized (sequencerLock) {
      closeSequencerConnection();
    }
    coordination.close(); // its held check-in connection
    log.log(System.Logger.Level.DEBUG, "closed {0}", description);
  }
}
