package io.boxline;

import java.time.Duration;
import java.time.Instant;

/**
 * Events published but not sequenced yet: the sequencer's backlog.
 *
 * @param events committed rows waiting in the outbox (rows of transactions still open are not
 *     visible, to this count as to the sequencer)
 * @param oldestCreatedAt when the oldest waiting row was written (database clock), or null when the
 *     outbox is empty
 */
public record OutboxBacklog(long events, Instant oldestCreatedAt) {
  /** How long the oldest waiting row has waited at {@code now}; zero when none (never negative). */
  public Duration age(Instant now) {
    if (oldestCreatedAt == null || !now.isAfter(oldestCreatedAt)) {
      return Duration.ZERO;
    }
    return Duration.between(oldestCreatedAt, now);
  }
}
