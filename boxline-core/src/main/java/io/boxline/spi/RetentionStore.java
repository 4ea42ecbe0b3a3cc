package io.boxline.spi;

import java.time.Duration;

/** The store's role in housekeeping: deleting what is past its retention. */
public interface RetentionStore {

  /**
   * Deletes, in batches of {@code batch} rows (each its own short transaction), events past their
   * topic's retention, inbox entries, dead letters and idempotency keys older than the given ages.
   */
  PurgeResult purge(Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch);
}
