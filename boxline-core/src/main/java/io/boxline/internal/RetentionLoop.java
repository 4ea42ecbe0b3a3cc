package io.boxline.internal;

import io.boxline.spi.PurgeResult;
import io.boxline.spi.Store;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The {@code boxline-retention} thread: every interval, if this instance leads the sequencer (so
 * exactly one instance of a deployment does it), deletes events past their topic's retention and
 * old inbox entries, dead letters and idempotency keys, in bounded batches.
 */
final class RetentionLoop {
  private static final System.Logger LOG = System.getLogger(RetentionLoop.class.getName());
  private static final int BATCH = 5_000;

  private final Store store;
  private final BooleanSupplier leading;
  private final Duration interval;
  private final Duration inboxAge;
  private final Duration deadLetterAge;
  private final Duration idempotencyAge;
  private final Thread thread;
  private final CountDownLatch stop = new CountDownLatch(1);
  final AtomicLong runs = new AtomicLong();
  final AtomicLong deleted = new AtomicLong();

  RetentionLoop(
      Store store,
      BooleanSupplier leading,
      String owner,
      Duration interval,
      Duration inboxAge,
      Duration deadLetterAge,
      Duration idempotencyAge) {
    this.store = store;
    this.leading = leading;
    this.interval = interval;
    this.inboxAge = inboxAge;
    this.deadLetterAge = deadLetterAge;
    this.idempotencyAge = idempotencyAge;
    this.thread = new Thread(this::run, "boxline-retention-" + owner);
    thread.setDaemon(true);
  }

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
          PurgeResult r = store.purge(inboxAge, deadLetterAge, idempotencyAge, BATCH);
          runs.incrementAndGet();
          deleted.addAndGet(r.total());
          if (r.total() > 0) {
            LOG.log(Level.INFO, "retention deleted {0}", r);
          }
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "retention run failed; trying again next interval", e);
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
