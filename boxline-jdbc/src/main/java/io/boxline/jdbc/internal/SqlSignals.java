package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.util.List;

/**
 * How processes learn that the outbox or a log grew: PostgreSQL's LISTEN/NOTIFY ({@link
 * PostgresSignals}), or an adaptive poll of one row elsewhere ({@link PollingSignals}).
 */
interface SqlSignals extends AutoCloseable {
  /** In the producer's transaction: tells the sequencer's process that the outbox grew. */
  void notifyOutbox(Connection tx);

  /**
   * In {@code tx}: tells every process that {@code heads} grew once it commits; false where that
   * cannot travel in a transaction (the caller announces after the commit).
   */
  boolean announceIn(Connection tx, List<PartitionHead> heads);

  /** Tells every process that {@code heads} grew. */
  void announce(List<PartitionHead> heads);

  /** Starts delivering wake-ups to {@code wakeups}; idempotent. */
  boolean listen(WakeupListener wakeups);

  /** Dead letters went back to their partitions: wake this process's consumers now. */
  default void redriven() {}

  /** Stops listening; safe to call twice. */
  @Override
  void close();
}
