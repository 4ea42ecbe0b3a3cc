package io.boxline.jdbc.internal;

import io.boxline.spi.LeaseStatus;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.SequencePlan;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The sequencer of the dialects without NOTIFY (MariaDB / MySQL, H2): it keeps a connection of its
 * own (READ COMMITTED, auto-commit off) and runs every batch in the steps of {@link SqlSequencer},
 * each step's statements coming from the {@link PollingDialect}. Nothing wakes anyone in the
 * transaction: pollers see the lease row's new version once it commits.
 */
final class PollingSequencing implements SqlSequencing {
  private final SqlContext ctx;
  private final PollingDialect dialect;
  private final Object lock = new Object();
  private final Steps steps;
  private Connection connection;

  PollingSequencing(SqlContext ctx, PollingDialect dialect) {
    this.ctx = ctx;
    this.dialect = dialect;
    this.steps = new Steps();
  }

  @Override
  public LeaseStatus acquire(String owner, Duration ttl) {
    Step step = new Step("try_sequencer");
    return onConnection(
        ttl,
        step,
        c -> {
          boolean work;
          try (PreparedStatement ps = c.prepareStatement(ctx.db().sql("try_sequencer"))) {
            ps.setString(1, owner);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return LeaseStatus.NOT_HELD;
              }
              work = rs.getBoolean(2);
            }
          }
          step.at("take_sequencer");
          try (PreparedStatement ps = c.prepareStatement(ctx.db().sql("take_sequencer"))) {
            ps.setString(1, owner);
            ps.setString(2, owner);
            ps.setLong(3, EpochMicros.micros(ttl));
            ps.executeUpdate();
          }
          return work ? LeaseStatus.HELD_WITH_WORK : LeaseStatus.HELD_IDLE;
        });
  }

  @Override
  public void release(String owner) {
    synchronized (lock) {
      closeConnection();
    }
    ctx.db().update("release_sequencer", ps -> ps.setString(1, owner));
  }

  /**
   * With {@code returnEvents} the batch reads the whole outbox rows it moves (one read, on the
   * connection it holds anyway) and returns them with their sequences, so that consumers in this
   * process take them from memory; they settle such events naming them ({@link
   * io.boxline.spi.Settlement#held}), so that the cursor passes them only if the log holds them.
   */
  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    Step step = new Step("lock_sequencer");
    return onConnection(
        ttl, step, c -> steps.sequenceIn(c, step, owner, ttl, maxEvents, assigner, returnEvents));
  }

  @Override
  public void close() {
    synchronized (lock) {
      closeConnection();
    }
  }

  private Connection connection(Duration ttl) throws SQLException {
    if (connection != null && !dialect.sequencerConnectionFits(ttl)) {
      closeConnection();
    }
    if (connection == null) {
      Connection c = ctx.dataSource().getConnection();
      try {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        dialect.prepareSequencerSession(c, ttl);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        JdbcSql.closeQuietly(c);
        throw e;
      }
      connection = c;
    }
    return connection;
  }

  private void closeConnection() {
    if (connection != null) {
      Connection c = connection;
      try {
        c.rollback();
        dialect.resetSequencerSession(c);
      } catch (SQLException e) {
        try {
          c.abort(Runnable::run); // cannot reset it: make sure nobody reuses it
        } catch (SQLException | RuntimeException ignored) {
          // closing anyway
        }
      }
      JdbcSql.closeQuietly(c);
      connection = null;
    }
  }

  /** Runs sequencer work on its connection; any failure discards the connection. */
  private <T> T onConnection(Duration ttl, Step step, JdbcSql.Work<T> work) {
    synchronized (lock) {
      try {
        Connection c = connection(ttl);
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          closeConnection();
          throw e;
        }
      } catch (SQLException e) {
        closeConnection();
        throw ctx.db().fail(step.name(), e);
      }
    }
  }

  /**
   * The steps: a plain read of the outbox rows (with their events, when they are handed over),
   * partitions locked and read, then advanced at the lease's version, the log rows copied inside
   * the database from {@code [outbox id, partition, sequence]} rows, the outbox rows deleted.
   */
  private final class Steps extends SqlSequencer<StoredEvent> {
    Steps() {
      super(ctx.db());
    }

    @Override
    Long lockSequencer(Connection c, Step step, String owner, Duration ttl) throws SQLException {
      return dialect.lockSequencer(c, db, step, owner, ttl);
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
                  dialect.uuid(rs, 5),
                  0,
                  rs.getString(4),
                  rs.getString(6),
                  rs.getString(7),
                  rs.getString(8),
                  rs.getBytes(9),
                  rs.getString(10),
                  dialect.instant(rs, 11),
                  dialect.instant(rs, 12))
              : null);
    }

    @Override
    void advancePartitions(Connection c, Step step, SequencePlan plan, long version)
        throws SQLException {
      plan.numberAfter(dialect.lockPartitions(c, db, step, plan.partitions()));
      dialect.advancePartitions(c, db, step, plan.heads(), version);
    }

    @Override
    int appendLog(Connection c, List<Taken<StoredEvent>> taken, SequencePlan plan)
        throws SQLException {
      List<LogRow> rows = new ArrayList<>(taken.size());
      for (int i = 0; i < taken.size(); i++) {
        rows.add(
            new LogRow(taken.get(i).outboxId(), plan.partition(i).partition(), plan.sequence(i)));
      }
      return dialect.appendLog(c, db, rows);
    }

    @Override
    void deleteOutbox(Connection c, Step step, List<Taken<StoredEvent>> taken) throws SQLException {
      step.at("delete_outbox");
      List<Long> ids = new ArrayList<>(taken.size());
      for (Taken<StoredEvent> t : taken) {
        ids.add(t.outboxId());
      }
      dialect.deleteOutbox(c, db, ids);
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
}
