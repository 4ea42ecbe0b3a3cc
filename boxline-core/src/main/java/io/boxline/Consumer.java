package io.boxline;

import java.time.Duration;
import java.util.Set;

/**
 * A running member of a subscription that delivers events to its handler. Created by {@link
 * Boxline#consumer(String)}; {@link #close()} stops it gracefully.
 */
public interface Consumer extends AutoCloseable {
  /** Starts delivery; calling it again does nothing. Returns this. */
  Consumer start();

  /** The subscription this consumer reads (its consumer group). */
  String subscription();

  /** This consumer's member id in the group. */
  String id();

  /** Partitions this consumer currently holds a lease on and delivers. */
  Set<TopicPartition> assignedPartitions();

  /** Check-ins with the coordination store so far. */
  long checkInCount();

  /** Events handled successfully since start. */
  long handledCount();

  /**
   * Cursor commits rejected because another consumer had taken the partition (fencing, contract
   * point 5).
   */
  long fencedCount();

  /** Partitions lost without a graceful release (fenced, or the lease was taken over). */
  long lostCount();

  /**
   * Batches delivered on the thread that committed them ({@link
   * ConsumerBuilder#handleOnCommittingThread}) rather than on a worker.
   */
  long committingThreadBatches();

  /**
   * Stops fetching, lets in-flight batches finish for up to {@code timeout}, commits what was
   * handled, and abandons (interrupts) what is still running after that. Never commits past an
   * event that was not handled. Safe to call twice.
   *
   * @return true when every in-flight batch finished within the timeout
   */
  boolean stop(Duration timeout);

  /** {@link #stop(Duration)} with the consumer's configured shutdown timeout. */
  @Override
  void close();
}
