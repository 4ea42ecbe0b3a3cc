package io.boxline.spi;

import java.time.Duration;

/** The store's role in housekeeping: deleting what is past its retention. */
public interface RetentionStore {

  /**
   * Deletes, in batches of {@code batch} rows (each its own short transaction), events past their
   * topic's retention, inbox entries, dead letters and idempotency keys older than the given ages.
   */
  PurgeResult purge(Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch);

  /**
   * Records that these subscriptions have a live consumer now (their {@code lastActive}); the
   * retention run calls it before {@link #purge}, so that subscriptions nobody consumes for their
   * topic's {@code abandonAfter} stop holding events back.
   */
  void markActive(java.util.Collection<Long> subscriptionIds);
}
