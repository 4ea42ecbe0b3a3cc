package io.boxline;

import java.time.Duration;
import java.time.Instant;

/**
 * One partition of a subscription: how far it has read and how much is left.
 *
 * @param topic the topic
 * @param partition the partition
 * @param position sequence of the last handled event (0 when none)
 * @param lastSequence sequence of the newest event in the partition
 * @param oldestUnhandledAt when the first event past the cursor was published (database clock), or
 *     null when nothing is past the cursor or the store does not report it. Parked events (retries,
 *     delayed deliveries, dead letters) are behind the cursor and do not count.
 */
public record PartitionLag(
    TopicName topic, int partition, long position, long lastSequence, Instant oldestUnhandledAt) {

  /** A lag without the age of the oldest unhandled event. */
  public PartitionLag(TopicName topic, int partition, long position, long lastSequence) {
    this(topic, partition, position, lastSequence, null);
  }

  /** Events sequenced but not yet handled. */
  public long backlog() {
    return Math.max(0, lastSequence - position);
  }

  /**
   * How long the first event past the cursor has waited at {@code now}: the subscription's lag in
   * time. Zero when nothing waits or the age is unknown; never negative.
   */
  public Duration age(Instant now) {
    if (oldestUnhandledAt == null || backlog() == 0 || !now.isAfter(oldestUnhandledAt)) {
      return Duration.ZERO;
    }
    return Duration.between(oldestUnhandledAt, now);
  }
}
