package io.boxline.jdbc.internal;

import io.boxline.spi.Fence;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The dialects without a time zone-aware timestamp, a uuid type, NOTIFY or data-modifying CTEs
 * (MariaDB / MySQL, H2). Times are epoch microseconds in {@code BIGINT} columns and event ids text;
 * other processes are woken through the {@code wake_all} row that their pollers watch ({@link
 * PollingSignals}); the sequencer keeps a connection of its own and runs its batch in steps ({@link
 * PollingSequencing}), whose statements a subclass gives, with how its lists of rows travel.
 */
public abstract class PollingDialect implements SqlDialect {
  private final Duration fastestPoll;
  private final Duration slowestPoll;

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   */
  PollingDialect(Duration fastestPoll, Duration slowestPoll) {
    this.fastestPoll = fastestPoll;
    this.slowestPoll = slowestPoll;
  }

  // ------------------------------------------------------------------ the sequencer's steps
  /**
   * Takes the sequencer lease row for {@code owner} in the open transaction; returns the lease's
   * version, or null when another process holds it. Sets {@code step} to what runs.
   */
  abstract Long lockSequencer(Connection c, JdbcSql db, Step step, String owner, Duration ttl)
      throws SQLException;

  /**
   * Locks the partition rows {@code keys} (in key order) and returns their last sequences. Sets
   * {@code step} to what runs.
   */
  abstract Map<PartitionKey, Long> lockPartitions(
      Connection c, JdbcSql db, Step step, List<PartitionKey> keys) throws SQLException;

  /**
   * Moves each partition's head to its last sequence at lease {@code version}. Sets {@code step} to
   * what runs.
   */
  abstract void advancePartitions(
      Connection c, JdbcSql db, Step step, List<PartitionHead> heads, long version)
      throws SQLException;

  /** Runs {@code append_log} over {@code rows}; returns the rows written. */
  abstract int appendLog(Connection c, JdbcSql db, List<LogRow> rows) throws SQLException;

  /** Runs {@code delete_outbox} over the outbox rows {@code ids}. */
  abstract void deleteOutbox(Connection c, JdbcSql db, List<Long> ids) throws SQLException;

  /** Whether the open sequencer connection may go on serving leases of {@code ttl}. */
  boolean sequencerConnectionFits(Duration ttl) {
    return true;
  }

  /** Sets up a new sequencer connection's session for leases of {@code ttl}. */
  void prepareSequencerSession(Connection c, Duration ttl) throws SQLException {}

  /** Undoes {@link #prepareSequencerSession} before the connection goes back to the pool. */
  void resetSequencerSession(Connection c) throws SQLException {}

  /**
   * In the open transaction: raises the cursors of {@code sorted} (in key order) to their fence's
   * epoch for {@code owner}; returns the position of each one raised.
   */
  abstract Map<PartitionKey, Long> fenceIn(
      Connection c, JdbcSql db, long subscriptionId, List<Fence> sorted, String owner)
      throws SQLException;

  // ------------------------------------------------------------------ the store's parts
  @Override
  public SqlSequencing sequencing(SqlContext ctx) {
    return new PollingSequencing(ctx, this);
  }

  @Override
  public SqlSignals signals(SqlContext ctx) {
    return new PollingSignals(ctx, fastestPoll, slowestPoll);
  }

  @Override
  public Map<PartitionKey, Long> fence(
      JdbcSql db, long subscriptionId, List<Fence> sorted, String owner) {
    return db.tx("fence_cursors", c -> fenceIn(c, db, subscriptionId, sorted, owner));
  }

  /** Copies the unplaceable rows aside, then deletes them from the outbox (no CTE moves them). */
  @Override
  public int setAsideUnplaceable(JdbcSql db) {
    return db.tx(
        "set_aside_unplaceable",
        c -> {
          int copied = db.update(c, "set_aside_unplaceable_copy", ps -> {});
          return copied == 0 ? 0 : db.update(c, "set_aside_unplaceable_delete", ps -> {});
        });
  }

  /**
   * Locks the partitions (in key order, {@link #lockPartitions}), sets their new last sequences and
   * inserts the rows into the log; the sequencer never sees them.
   */
  @Override
  public List<Long> appendToLog(
      Connection tx, JdbcSql db, List<OutboxRecord> rows, Instant createdAt) throws SQLException {
    Map<PartitionKey, Integer> counts = new HashMap<>();
    for (OutboxRecord r : rows) {
      counts.merge(PartitionKey.of(r.topicId(), r.partition()), 1, Integer::sum);
    }
    List<PartitionKey> keys = JdbcSql.sorted(counts.keySet());
    Step step = new Step("lock_partitions");
    Map<PartitionKey, Long> last = lockPartitions(tx, db, step, keys);
    if (last.size() != keys.size()) {
      throw new SQLException(
          "lock_partitions matched " + last.size() + " of " + keys.size() + " partitions");
    }
    try (PreparedStatement ps = tx.prepareStatement(db.sql("set_last_seq"))) {
      for (PartitionKey k : keys) {
        ps.setLong(1, last.get(k) + counts.get(k));
        ps.setLong(2, k.topicId());
        ps.setInt(3, k.partition());
        ps.addBatch();
      }
      ps.executeBatch();
    }
    List<Long> seqs = new ArrayList<>(rows.size());
    Map<PartitionKey, Long> next = new HashMap<>();
    for (OutboxRecord r : rows) {
      PartitionKey k = PartitionKey.of(r.topicId(), r.partition());
      seqs.add(next.merge(k, last.get(k) + 1, (a, b) -> a + 1));
    }
    long created = EpochMicros.micros(createdAt);
    long sequenced = EpochMicros.micros(Instant.now());
    try (PreparedStatement ps = tx.prepareStatement(db.sql("insert_log"))) {
      for (int i = 0; i < rows.size(); i++) {
        OutboxRecord r = rows.get(i);
        int c = 1;
        ps.setLong(c++, r.topicId());
        ps.setInt(c++, r.partition());
        ps.setLong(c++, seqs.get(i));
        ps.setString(c++, r.eventId().toString());
        c = bindBody(ps, c, r);
        ps.setLong(c++, created);
        ps.setLong(c++, sequenced);
        ps.setObject(c, EpochMicros.microsOrNull(r.deliverAt()), Types.BIGINT);
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
    ps.setObject(i++, r.partition() < 0 ? null : r.partition(), Types.INTEGER);
    i = bindBody(ps, i, r);
    ps.setObject(i++, EpochMicros.microsOrNull(r.deliverAt()), Types.BIGINT);
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

  // ------------------------------------------------------------------ values
  @Override
  public Instant instant(ResultSet rs, int column) throws SQLException {
    return EpochMicros.instant(rs, column);
  }

  @Override
  public void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    ps.setObject(at, EpochMicros.microsOrNull(t), Types.BIGINT);
  }

  @Override
  public UUID uuid(ResultSet rs, int column) throws SQLException {
    return EpochMicros.uuid(rs.getString(column));
  }

  @Override
  public void bindUuid(PreparedStatement ps, int at, UUID id) throws SQLException {
    ps.setString(at, id == null ? null : id.toString());
  }

  @Override
  public void bindDuration(PreparedStatement ps, int at, Duration d) throws SQLException {
    ps.setLong(at, EpochMicros.micros(d));
  }

  /**
   * Binds one parked event's row of the row-wise {@code park} statement of these dialects from
   * parameter {@code i}; returns the next index. The state goes in four times: its column, and the
   * three time columns it decides.
   */
  static int bindParkRow(
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
    ps.setLong(i++, EpochMicros.micros(k.nextAttemptAt()));
    ps.setString(i++, k.lastError());
    ps.setString(i++, state);
    ps.setString(i++, state);
    ps.setString(i++, state);
    return i;
  }

  /** The new row's generated key, when the insert did not skip it as present. */
  @Override
  public Long insertReturningId(Connection c, String sql, JdbcSql.Binder binder)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql, java.sql.Statement.RETURN_GENERATED_KEYS)) {
      binder.bind(ps);
      if (insertUnlessPresent(ps) == 1) {
        try (ResultSet rs = ps.getGeneratedKeys()) {
          if (rs.next()) {
            return rs.getLong(1);
          }
        }
      }
    }
    return null;
  }

  /** Every consumer re-reads its backlog at its next poll (see {@link PollingWakeups}). */
  @Override
  public void wakeAll(Connection tx, JdbcSql db) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(db.sql("wake_all"))) {
      ps.executeUpdate();
    }
  }
}
