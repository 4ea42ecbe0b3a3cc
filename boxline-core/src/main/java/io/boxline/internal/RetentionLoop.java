package io.boxline.internal;

import io.boxline.spi.PurgeResult;
import io.boxline.spi.RetentionStore;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The {@code boxline-retention} thread: every interval, if this instance leads the sequencer (so
 * exactly one instance of a deployment does it), deletes events past their topic's retention and
 * old inbox entries, dead letters and idempotency keys, in bounded batches.
 */
final class RetentionLoop extends LeaderLoop {
  private static final System.Logger LOG = System.getLogger(RetentionLoop.class.getName());
  private static final int BATCH = 5_000;

  private final RetentionStore store;
  private final Duration inboxAge;
  private final Duration deadLetterAge;
  private final Duration idempotencyAge;
  final AtomicLong deleted = new AtomicLong();

  RetentionLoop(
      RetentionStore store,
      BooleanSupplier leading,
      String owner,
      Duration interval,
      Duration inboxAge,
      Duration deadLetterAge,
      Duration idempotencyAge) {
    super(leading, interval, "boxline-retention-" + owner, "retention run");
    this.store = store;
    this.inboxAge = inboxAge;
    this.deadLetterAge = deadLetterAge;
    this.idempotencyAge = idempotencyAge;
  }

  @Override
  void step() {
    PurgeResult r = store.purge(inboxAge, deadLetterAge, idempotencyAge, BATCH);
    deleted.addAndGet(r.total());
    if (r.total() > 0) {
      LOG.log(Level.INFO, "retention deleted {0}", r);
    }
  }
}
