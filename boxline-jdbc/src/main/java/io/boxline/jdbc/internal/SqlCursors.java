package io.boxline.jdbc.internal;

import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PartitionRead;
import io.boxline.spi.Settlement;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A subscription's cursors on every dialect: reading the log, and moving cursors under the epoch of
 * the lease that holds the partition (compare-and-set on epoch and position), alone, in groups,
 * with parked events, or in a transaction that a transactional handler writes into.
 */
final class SqlCursors {
  private final JdbcSql db;
  private final SqlDialect dialect;
  private final SqlParking parking;

  SqlCursors(JdbcSql db, SqlDialect dialect, SqlParking parking) {
    this.db = db;
    this.dialect = dialect;
    this.parking = parking;
  }

  List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit) {
    return read(db, topicId, partition, afterSequence, limit);
  }

  /** {@link #read} on {@code source}: the primary's statements, or a read replica's. */
  List<StoredEvent> read(
      JdbcSql source, long topicId, int partition, long afterSequence, int limit) {
    return source.list(
        "read",
        ps -> {
          ps.setLong(1, topicId);
          ps.setInt(2, partition);
          ps.setLong(3, afterSequence);
          ps.setInt(4, limit);
        },
        this::storedEvent);
  }

  /** Partitions read by one statement at most (four parameters each). */
  private static final int READS_PER_STATEMENT = 200;

  /**
   * Several partitions' reads in one statement each {@link #READS_PER_STATEMENT}: the dialect's
   * {@code read} once per partition, each tagged with its place in the list, joined by UNION ALL.
   * The text is the query's own and this loop's counter; the values are bound.
   */
  List<List<StoredEvent>> readEach(List<PartitionRead> reads) {
    return readEach(db, reads);
  }

  /** {@link #readEach} on {@code source}: the primary's statements, or a read replica's. */
  List<List<StoredEvent>> readEach(JdbcSql source, List<PartitionRead> reads) {
    List<List<StoredEvent>> out = new ArrayList<>(reads.size());
    for (int from = 0; from < reads.size(); from += READS_PER_STATEMENT) {
      List<PartitionRead> chunk =
          reads.subList(from, Math.min(reads.size(), from + READS_PER_STATEMENT));
      if (chunk.size() == 1) {
        PartitionRead r = chunk.get(0);
        out.add(read(source, r.topicId(), r.partition(), r.afterSequence(), r.limit()));
        continue;
      }
      String one = db.sql("read");
      StringBuilder sql = new StringBuilder();
      for (int i = 0; i < chunk.size(); i++) {
        sql.append(i == 0 ? "" : "\nUNION ALL\n")
            .append("SELECT r.*, ")
            .append(i)
            .append(" FROM (")
            .append(one)
            .append(") r");
      }
      List<List<StoredEvent>> events = new ArrayList<>(chunk.size());
      chunk.forEach(r -> events.add(new ArrayList<>()));
      try (Connection c = source.connect();
          PreparedStatement ps = c.prepareStatement(sql.toString())) {
        int at = 1;
        for (PartitionRead r : chunk) {
          ps.setLong(at++, r.topicId());
          ps.setInt(at++, r.partition());
          ps.setLong(at++, r.afterSequence());
          ps.setInt(at++, r.limit());
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            events.get(rs.getInt(11)).add(storedEvent(rs));
          }
        }
      } catch (SQLException e) {
        throw source.fail("read", e);
      }
      // A union keeps no order: each partition's events in sequence order again.
      events.forEach(l -> l.sort(java.util.Comparator.comparingLong(StoredEvent::sequence)));
      out.addAll(events);
    }
    return out;
  }

  /** A row of {@code read} or {@code read_filtered}. */
  private StoredEvent storedEvent(ResultSet rs) throws SQLException {
    return logEvent(dialect, rs, 10);
  }

  /**
   * The event of a log row whose columns 1-9 are sequence, id, key, type, source, content type,
   * payload, headers and creation time, with its delivery time in {@code deliverAtColumn} (the
   * reads, {@code due_parked}).
   */
  static StoredEvent logEvent(SqlDialect dialect, ResultSet rs, int deliverAtColumn)
      throws SQLException {
    return Headers.storedEvent(
        dialect.uuid(rs, 2),
        rs.getLong(1),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getBytes(7),
        rs.getString(8),
        dialect.instant(rs, 9),
        dialect.instant(rs, deliverAtColumn));
  }

  /**
   * Binds {@code commit_cursor}: the cursor moves from {@code expected} to {@code position} if it
   * is still at {@code epoch} and at {@code expected}.
   */
  static void bindCommitCursor(
      PreparedStatement ps,
      long subscriptionId,
      PartitionKey partition,
      long expected,
      long position,
      long epoch)
      throws SQLException {
    ps.setLong(1, position);
    ps.setLong(2, subscriptionId);
    ps.setLong(3, partition.topicId());
    ps.setInt(4, partition.partition());
    ps.setLong(5, epoch);
    ps.setLong(6, expected);
  }

  /** Runs {@code commit_cursor} on {@code c}; returns how many cursor rows moved (0 or 1). */
  private int moveCursor(
      Connection c,
      long subscriptionId,
      PartitionKey partition,
      long expected,
      long position,
      long epoch)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("commit_cursor"))) {
      bindCommitCursor(ps, subscriptionId, partition, expected, position, epoch);
      if (!ps.execute()) {
        return ps.getUpdateCount();
      }
      // PostgreSQL's returns a row per moved cursor (its RETURNING makes the commit asynchronous).
      int moved = 0;
      try (ResultSet rs = ps.getResultSet()) {
        while (rs.next()) {
          moved++;
        }
      }
      return moved;
    }
  }

  /**
   * Applies settlements ({@link io.boxline.spi.CursorStore#settle}). Without parks, in auto-commit
   * statements when the dialect moves them all in one ({@link SqlDialect#moveAll}), or when there
   * is one move over events read from the log; otherwise in one transaction in which each cursor is
   * moved (locking its row, or telling that nothing must be written) before its parks.
   */
  List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements) {
    boolean oneStatement = dialect.movesInOneStatement();
    boolean parks =
        settlements.stream().anyMatch(st -> !st.parks().isEmpty() || !st.doneParked().isEmpty());
    boolean lone = settlements.size() == 1 && !settlements.get(0).checksLog();
    if (!parks && (oneStatement || lone)) {
      try (Connection c = db.connect()) {
        return move(c, subscriptionId, settlements);
      } catch (SQLException e) {
        throw db.fail("commit_cursor", e);
      }
    }
    return db.tx(
        parks ? "park" : "commit_cursor",
        c -> {
          List<CommitOutcome> outcomes = move(c, subscriptionId, settlements);
          for (int i = 0; i < settlements.size(); i++) {
            Settlement st = settlements.get(i);
            if (outcomes.get(i) == CommitOutcome.COMMITTED) {
              writeParked(c, subscriptionId, st);
            }
          }
          return outcomes;
        });
  }

  /** Moves the cursors of {@code settlements} on {@code c}, outcomes in input order. */
  private List<CommitOutcome> move(Connection c, long subscriptionId, List<Settlement> settlements)
      throws SQLException {
    return dialect.movesInOneStatement()
        ? dialect.moveAll(c, db, subscriptionId, settlements)
        : moveEach(c, subscriptionId, settlements);
  }

  /**
   * The portable move: per settlement, the check of the log where it has held events, then {@code
   * commit_cursor}. A move that matches no row, or whose held events the log does not hold, writes
   * nothing.
   */
  List<CommitOutcome> moveEach(Connection c, long subscriptionId, List<Settlement> settlements)
      throws SQLException {
    List<CommitOutcome> outcomes = new ArrayList<>(settlements.size());
    for (Settlement st : settlements) {
      if (st.checksLog() && !logHolds(c, st.partition(), st.held())) {
        outcomes.add(CommitOutcome.LOG_CHANGED);
        continue;
      }
      outcomes.add(
          moveCursor(
                      c,
                      subscriptionId,
                      st.partition(),
                      st.expectedPosition(),
                      st.position(),
                      st.epoch())
                  == 1
              ? CommitOutcome.COMMITTED
              : whyCursorStayed(c, subscriptionId, st.partition(), st.epoch()));
    }
    return outcomes;
  }

  /**
   * Whether the log holds exactly these event ids at these (consecutive) sequences: events handed
   * over in memory are checked in the transaction that moves the cursor past them.
   */
  private boolean logHolds(Connection c, PartitionKey partition, List<Settlement.HeldEvent> held)
      throws SQLException {
    Map<Long, String> stored = new java.util.HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("log_ids"))) {
      ps.setLong(1, partition.topicId());
      ps.setInt(2, partition.partition());
      ps.setLong(3, held.get(0).sequence());
      ps.setLong(4, held.get(held.size() - 1).sequence());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          stored.put(rs.getLong(1), rs.getString(2));
        }
      }
    }
    for (Settlement.HeldEvent h : held) {
      if (!h.id().toString().equals(stored.get(h.sequence()))) {
        return false;
      }
    }
    return true;
  }

  /** After a cursor move that matched no row: fenced (another epoch) or moved (lost commits). */
  CommitOutcome whyCursorStayed(
      Connection c, long subscriptionId, PartitionKey partition, long epoch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("cursor_epoch"))) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getLong(1) == epoch
            ? CommitOutcome.CURSOR_MOVED
            : CommitOutcome.FENCED;
      }
    }
  }

  /**
   * After its cursor moved, in the same transaction: a settlement's parks and parked events done.
   */
  private void writeParked(Connection c, long subscriptionId, Settlement st) throws SQLException {
    if (!st.parks().isEmpty()) {
      parking.insertParks(c, subscriptionId, st.partition(), st.parks());
    }
    for (long seq : st.doneParked()) {
      try (PreparedStatement ps = c.prepareStatement(db.sql("parked_done_locked"))) {
        ps.setLong(1, subscriptionId);
        ps.setLong(2, st.partition().topicId());
        ps.setInt(3, st.partition().partition());
        ps.setLong(4, seq);
        ps.executeUpdate();
      }
    }
  }

  // ------------------------------------------------------------------ in the caller's transaction
  /**
   * {@link io.boxline.spi.CursorStore#settleIn}: the check of the log where there are held events,
   * the compare-and-set on the cursor ({@code settle_cursor}, synchronous: the transaction carries
   * the application's writes), then the parks and the handled parked events. Nothing is written
   * before the cursor row is known to be this consumer's.
   */
  CommitOutcome settleIn(Connection tx, long subscriptionId, Settlement st) {
    String step = "settle_cursor";
    try {
      if (st.checksLog() && !logHolds(tx, st.partition(), st.held())) {
        return CommitOutcome.LOG_CHANGED;
      }
      int moved;
      try (PreparedStatement ps = tx.prepareStatement(db.sql(step))) {
        bindCommitCursor(
            ps, subscriptionId, st.partition(), st.expectedPosition(), st.position(), st.epoch());
        moved = ps.executeUpdate();
      }
      if (moved != 1) {
        return whyCursorStayed(tx, subscriptionId, st.partition(), st.epoch());
      }
      step = "park";
      writeParked(tx, subscriptionId, st);
      return CommitOutcome.COMMITTED;
    } catch (SQLException e) {
      throw db.fail(step, e);
    }
  }

  /** An operator's read: {@link #read} with optional key and id filters. */
  List<StoredEvent> readWhere(
      JdbcSql source,
      long topicId,
      int partition,
      long afterSequence,
      String key,
      UUID eventId,
      int limit) {
    return source.list(
        "read_filtered",
        ps -> {
          ps.setLong(1, topicId);
          ps.setInt(2, partition);
          ps.setLong(3, afterSequence);
          ps.setString(4, key);
          ps.setString(5, key);
          dialect.bindUuid(ps, 6, eventId);
          dialect.bindUuid(ps, 7, eventId);
          ps.setInt(8, limit);
        },
        this::storedEvent);
  }
}
