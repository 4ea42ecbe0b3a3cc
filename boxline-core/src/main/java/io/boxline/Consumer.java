package io.boxline;

import java.time.Duration;

/**
 * A running member of a subscription that delivers events to its handler. Created by {@link
 * Boxline#consumer(String)}; {@link #close()} stops it gracefully.
 */
public interface Consumer extends AutoCloseable {
  /** Starts delivery; calling it again does nothing. Returns this. */
  Consumer start();

  /** The subscription this consumer reads. */
  String subscription();

  /** Events handled successfully since start. */
  long handledCount();

  /** Partitions this consumer lost to another consumer (its cursor commit was fenced). */
  long fencedCount();

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
