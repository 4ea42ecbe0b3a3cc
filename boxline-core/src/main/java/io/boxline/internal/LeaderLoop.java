package io.boxline.internal;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * A named background thread that runs a step every interval while this instance leads the
 * sequencer, so that one instance of a deployment does the work: retention, automatic unblocking of
 * tasks. A failed step is logged and counted, and tried again next interval; {@link #stop} waits a
 * bounded time.
 */
abstract class LeaderLoop {
  private final System.Logger log = System.getLogger(getClass().getName());
  private final BooleanSupplier leading;
  private final Duration interval;
  private final String what;
  private final Thread thread;
  private final CountDownLatch stop = new CountDownLatch(1);
  final AtomicLong runs = new AtomicLong();
  final AtomicLong errors = new AtomicLong();

  /**
   * @param threadName the thread's name, {@code boxline-<job>-<instance>}
   * @param what the job in a sentence's words, for the log
   */
  LeaderLoop(BooleanSupplier leading, Duration interval, String threadName, String what) {
    this.leading = leading;
    this.interval = interval;
    this.what = what;
    this.thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
  }

  /** One run; the loop counts it once it returns. */
  abstract void step();

  void start() {
    thread.start();
  }

  private void run() {
    try {
      while (!stop.await(interval.toNanos(), TimeUnit.NANOSECONDS)) {
        if (!leading.getAsBoolean()) {
          continue;
        }
        try {
          step();
          runs.incrementAndGet();
        } catch (RuntimeException e) {
          errors.incrementAndGet();
          log.log(Level.WARNING, what + " failed; trying again next interval", e);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void stop(Duration timeout) {
    stop.countDown();
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
