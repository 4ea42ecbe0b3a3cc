package io.boxline.server.internal;

import io.boxline.BoxlineObserver;
import java.time.Duration;

/**
 * Wakes tail streams when this instance's sequencer has placed events, so a stream does not wait
 * for its next poll. Streams still poll (when another instance leads the sequencer, or for
 * in-transaction topics), at most {@code idle} apart.
 */
final class TailWakeups implements BoxlineObserver {
  private long generation;

  @Override
  public synchronized void sequenced(int events, Duration took) {
    generation++;
    notifyAll();
  }

  synchronized long generation() {
    return generation;
  }

  /** Waits until a wake-up after {@code seen} or {@code idle} passed. */
  synchronized void await(long seen, long idleMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + idleMillis;
    while (generation == seen) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return;
      }
      wait(left);
    }
  }
}
