package io.boxline.jdbc.internal;

import io.boxline.spi.CommitOutcome;
import io.boxline.spi.Fence;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Everything that differs between the databases Boxline runs on, and nothing else: how times and
 * event ids are bound and read, how a list of rows travels in one statement, how an "insert unless
 * present" reports a duplicate, which failures are worth another attempt, how the schema is
 * migrated, how the sequencer runs, how other processes are woken and how the log is cut into time
 * segments. One store ({@link SqlStore}) serves every database through its dialect and the
 * dialect's named queries ({@code queries.sql}); adding a database means adding a dialect and its
 * SQL folder.
 */
public interface SqlDialect {

  /** The folder of the dialect's SQL files under {@code io/boxline/jdbc/}. */
  String folder();

  /** What the database calls a schema ("schema", "database"), for descriptions and messages. */
  default String schemaKind() {
    return "schema";
  }

  // ------------------------------------------------------------------ the store's parts
  /** Applies the migrations the schema lacks; safe when several processes start at once. */
  void migrate(SqlContext ctx);

  /** Whether the store holds one connection for its timed statements ({@link IdleConnection}). */
  default boolean keepsIdleConnection() {
    return false;
  }

  /** The sequencer's lease and batches, made once per store. */
  SqlSequencing sequencing(SqlContext ctx);

  /** How processes are woken, made once per store. */
  SqlSignals signals(SqlContext ctx);

  /** The log's time segments, or null where retention deletes row by row only. */
  default LogSegments segments(SqlContext ctx) {
    return null;
  }

  /** After a purge, whether to vacuum Boxline's tables when the server does not (PostgreSQL). */
  default boolean vacuumsWhenAutovacuumOff() {
    return false;
  }

  // ------------------------------------------------------------------ publishing
  /** The key under which {@link #claimKeys} reports the owner of a record's idempotency key. */
  default String ownerKey(OutboxRecord r) {
    return r.topicId() + "/" + r.idempotencyKey();
  }

  /**
   * Inserts the idempotency keys of {@code records} that are new; returns the owning event id of
   * every key in the batch and the keys this call inserted, by {@link #ownerKey}. A key that was
   * there before is another publish's even when its event id is the record's own (the same event
   * published again after a commit whose answer was lost).
   */
  KeyClaims claimKeys(Connection tx, JdbcSql db, List<OutboxRecord> records) throws SQLException;

  /**
   * What {@link #claimKeys} found: the owner of each key, and the keys it inserted itself.
   *
   * @param owners the owning event id by {@link #ownerKey}
   * @param claimedNow the keys this call inserted
   */
  record KeyClaims(Map<String, UUID> owners, java.util.Set<String> claimedNow) {}

  /** Inserts outbox rows (maybe none) in the producer's transaction. */
  void appendRows(Connection tx, JdbcSql db, List<OutboxRecord> rows) throws SQLException;

  /**
   * Appends {@code rows} (of IN_TRANSACTION topics) straight to the log in {@code tx}: locks their
   * partitions in (topic, partition) order, numbers the rows after each one's last sequence in list
   * order, inserts them. Returns each row's sequence.
   */
  List<Long> appendToLog(Connection tx, JdbcSql db, List<OutboxRecord> rows, Instant createdAt)
      throws SQLException;

  /** Moves outbox rows no partition can take aside ({@code set_aside_unplaceable}). */
  int setAsideUnplaceable(JdbcSql db);

  // ------------------------------------------------------------------ cursors
  /**
   * Raises the cursors of {@code sorted} (in key order) to their fence's epoch for {@code owner};
   * returns the position of each one raised.
   */
  Map<PartitionKey, Long> fence(JdbcSql db, long subscriptionId, List<Fence> sorted, String owner);

  /** Whether {@link #moveAll} moves any number of cursors in one auto-commit statement. */
  default boolean movesInOneStatement() {
    return false;
  }

  /**
   * Where {@link #movesInOneStatement}: moves the cursors of {@code settlements} (log checks
   * included) in one statement on {@code c}, outcomes in input order.
   */
  default List<CommitOutcome> moveAll(
      Connection c, JdbcSql db, long subscriptionId, List<Settlement> settlements)
      throws SQLException {
    List<io.boxline.spi.SubscriptionSettlement> all = new java.util.ArrayList<>();
    settlements.forEach(
        st -> all.add(new io.boxline.spi.SubscriptionSettlement(subscriptionId, st)));
    return moveAcross(c, db, all);
  }

  /**
   * Where {@link #movesInOneStatement}: moves the cursors of several subscriptions' {@code
   * settlements} in one statement on {@code c}, outcomes in input order.
   */
  default List<CommitOutcome> moveAcross(
      Connection c, JdbcSql db, List<io.boxline.spi.SubscriptionSettlement> settlements)
      throws SQLException {
    throw new UnsupportedOperationException(folder() + " moves cursors one by one");
  }

  // ------------------------------------------------------------------ values and lists

  /** Reads a nullable time column. */
  Instant instant(ResultSet rs, int column) throws SQLException;

  /** Binds a nullable time parameter. */
  void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException;

  /** Reads a nullable event id column. */
  UUID uuid(ResultSet rs, int column) throws SQLException;

  /** Binds a nullable event id parameter. */
  void bindUuid(PreparedStatement ps, int at, UUID id) throws SQLException;

  /** Binds a duration parameter (an age to purge, a lease's time to live or grace). */
  void bindDuration(PreparedStatement ps, int at, Duration age) throws SQLException;

  /** Runs an insert whose statement skips rows that exist already; returns the rows inserted. */
  default int insertUnlessPresent(PreparedStatement ps) throws SQLException {
    return ps.executeUpdate();
  }

  /**
   * Runs the insert-unless-present statement {@code sql}; returns the new row's id, or null when
   * the row existed already.
   */
  Long insertReturningId(Connection c, String sql, JdbcSql.Binder binder) throws SQLException;

  /** Binds the partitions of a new topic to {@code insert_partitions} at parameter {@code at}. */
  default void bindPartitionNumbers(PreparedStatement ps, int at, int partitions)
      throws SQLException {
    ps.setInt(at, partitions);
  }

  /** Whether the failure is a deadlock or lock timeout, after which another attempt may succeed. */
  boolean retryable(SQLException e);

  /**
   * Whether the failure is a serialization failure of a transaction above Read Committed, not a
   * deadlock. PostgreSQL tells them apart (40001 and 40P01); MariaDB and H2 report deadlocks as
   * 40001, so there it is never one.
   */
  default boolean serializationFailure(SQLException e) {
    return false;
  }

  /** Whether {@code executeBatch} reports the rows each statement changed (not "unknown"). */
  default boolean batchCountsRows() {
    return true;
  }

  /** The inbox key as the inbox table's key column stores it. */
  default String inboxLookupKey(String key) {
    return key;
  }

  /** Whether {@code inbox_claim} also takes the key itself after the lookup key. */
  default boolean inboxKeepsKey() {
    return false;
  }

  /**
   * Inserts a batch of parked events of one partition with the {@code park} statement, skipping any
   * that exist already.
   */
  void insertParks(
      Connection tx, String parkSql, long subscriptionId, PartitionKey partition, List<Park> parks)
      throws SQLException;

  /** Runs {@code purge_log_delete} over {@code rows}; returns how many. */
  default long deleteRows(PreparedStatement delete, List<LogKey> rows) throws SQLException {
    throw new IllegalStateException(folder() + " purges the log without purge_log_delete");
  }

  /** In {@code tx}: wakes every consumer in every process, sent when {@code tx} commits. */
  void wakeAll(Connection tx, JdbcSql db) throws SQLException;

  /**
   * On {@code c} (auto-commit): takes the leases of {@code sorted} (in key order) that nobody
   * holds, for {@code member}, creating lease rows that do not exist yet; returns the new epoch of
   * each one taken. Exactly one of several contenders gets each lease.
   */
  Map<PartitionKey, Long> takeLeases(
      Connection c, JdbcSql db, String group, String member, List<PartitionKey> sorted)
      throws SQLException;

  /** On {@code c}: frees the leases of {@code sorted} whoever holds them; returns how many. */
  int forceRelease(Connection c, JdbcSql db, String group, List<PartitionKey> sorted)
      throws SQLException;

  /** Binds the set of live member ids of {@code reclaim_leases} at parameter {@code at}. */
  void bindMembers(PreparedStatement ps, int at, Connection c, Set<String> members)
      throws SQLException;
}
