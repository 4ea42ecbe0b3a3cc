package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * Wake-ups without NOTIFY: in-process signals, and for other processes an adaptive poll of one
 * primary-key row ({@link PollingWakeups}). A producer's transaction adds nothing: the sequencer's
 * process finds the rows at its next poll.
 */
final class PollingSignals implements SqlSignals {
  private final SqlContext ctx;
  private final Duration fastestPoll;
  private final Duration slowestPoll;
  private PollingWakeups poller;

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   */
  PollingSignals(SqlContext ctx, Duration fastestPoll, Duration slowestPoll) {
    this.ctx = ctx;
    this.fastestPoll = fastestPoll;
    this.slowestPoll = slowestPoll;
  }

  @Override
  public void notifyOutbox(Connection tx) {}

  /** A wake-up in the caller's transaction would need NOTIFY: the caller announces after it. */
  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    return false;
  }

  /** Other processes re-check every partition at their next poll. */
  @Override
  public void announce(List<PartitionHead> heads) {
    try (Connection c = ctx.db().connect();
        PreparedStatement ps = c.prepareStatement(ctx.db().sql("wake_all"))) {
      ps.executeUpdate();
    } catch (SQLException e) {
      throw ctx.db().fail("wake_all", e);
    }
  }

  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (poller == null) {
      poller =
          new PollingWakeups(
              ctx.db(),
              "boxline-listener-" + ctx.schema() + ctx.prefix(),
              wakeups,
              fastestPoll,
              slowestPoll);
      poller.start();
    }
    return true;
  }

  /** Other processes see {@code wake_all} at their next poll; this one is told now. */
  @Override
  public void redriven() {
    PollingWakeups local;
    synchronized (this) {
      local = poller;
    }
    if (local != null) {
      local.wakeAllLocally();
    }
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.stop();
      poller = null;
    }
  }
}
