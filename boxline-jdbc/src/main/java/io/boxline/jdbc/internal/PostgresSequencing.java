package io.boxline.jdbc.internal;

import io.boxline.spi.LeaseStatus;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoreStats;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * PostgreSQL's sequencer: the lease poll on the store's held connection, batches through {@link
 * PostgresSequencer}, and a vacuum of the outbox after every so many events ({@link
 * PostgresOutboxVacuum}), whose counts are the store's stats.
 */
final class PostgresSequencing implements SqlSequencing {
  private final SqlContext ctx;
  private final PostgresSequencer sequencer;
  private final PostgresOutboxVacuum outboxVacuum;

  PostgresSequencing(
      SqlContext ctx, String logChannel, int outboxVacuumEvery, Duration longTransactionWarning) {
    this.ctx = ctx;
    this.sequencer = new PostgresSequencer(ctx.db(), logChannel);
    this.outboxVacuum =
        new PostgresOutboxVacuum(
            ctx.db(), ctx.schema(), ctx.prefix(), outboxVacuumEvery, longTransactionWarning);
  }

  @Override
  public LeaseStatus acquire(String owner, Duration ttl) {
    try (Connection c = ctx.idle().borrow();
        PreparedStatement ps = c.prepareStatement(ctx.db().sql("acquire_sequencer"))) {
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
      throw ctx.db().fail("acquire_sequencer", e);
    }
  }

  @Override
  public void release(String owner) {
    ctx.db().update("release_sequencer", ps -> ps.setString(1, owner));
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

  @Override
  public void close() {
    outboxVacuum.close();
  }
}
