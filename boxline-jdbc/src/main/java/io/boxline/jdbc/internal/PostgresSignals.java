package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * LISTEN/NOTIFY on two channels per store: the outbox channel wakes the sequencer's process, the
 * log channel carries the partitions' new heads to consumers. The sequencer notifies once per batch
 * (in {@code sequence_batch}); producers never notify per transaction.
 */
final class PostgresSignals implements SqlSignals {
  private final SqlContext ctx;
  private final String outboxChannel;
  private final String logChannel;
  private PostgresListener listener;

  PostgresSignals(SqlContext ctx, String outboxChannel, String logChannel) {
    this.ctx = ctx;
    this.outboxChannel = outboxChannel;
    this.logChannel = logChannel;
  }

  @Override
  public void notifyOutbox(Connection tx) {
    try (PreparedStatement ps = tx.prepareStatement(ctx.db().sql("notify"))) {
      ps.setString(1, outboxChannel);
      ps.setString(2, "");
      ps.execute();
    } catch (SQLException e) {
      throw ctx.db().fail("notify", e);
    }
  }

  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    try (PreparedStatement ps = tx.prepareStatement(ctx.db().sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
      return true;
    } catch (SQLException e) {
      throw ctx.db().fail("notify", e);
    }
  }

  @Override
  public void announce(List<PartitionHead> heads) {
    try (Connection c = ctx.idle().borrow();
        PreparedStatement ps = c.prepareStatement(ctx.db().sql("announce"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    } catch (SQLException e) {
      throw ctx.db().fail("announce", e);
    }
  }

  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (listener == null) {
      listener = new PostgresListener(ctx.dataSource(), outboxChannel, logChannel, wakeups);
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
  }
}
