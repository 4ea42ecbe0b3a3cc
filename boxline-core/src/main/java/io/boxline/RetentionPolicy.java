package io.boxline;

import java.time.Duration;

/**
 * How long a topic keeps its events. By default events are kept forever. With a maximum age, events
 * older than that are deleted by the retention loop (run by one instance, the sequencer leader) —
 * except events some subscription's cursor has not passed yet, unless {@link #deleteUnconsumed()}
 * says otherwise, and events a subscription still has parked for a retry or as a dead letter.
 *
 * @param maxAge age after which events may go, or null to keep forever
 * @param keepUnconsumed whether events a cursor has not passed are kept past their age or count
 *     (default true: no subscription loses an event to retention)
 * @param maxEventsPerPartition how many of the newest events each partition keeps (a bound on the
 *     topic's size), or 0 for no such bound; an event goes when it is past its age OR this many
 *     events behind its partition's newest
 * @param abandonAfter how long {@code keepUnconsumed} keeps waiting for a subscription that has no
 *     live consumer (default {@link #DEFAULT_ABANDON_AFTER}, 7 days): past it the subscription
 *     counts as abandoned and no longer holds events back, so a forgotten subscription cannot stop
 *     retention forever. A subscription with a live consumer, however slow, is never abandoned.
 */
public record RetentionPolicy(
    Duration maxAge, boolean keepUnconsumed, long maxEventsPerPartition, Duration abandonAfter) {
  /** How long a subscription without a live consumer holds events back by default. */
  public static final Duration DEFAULT_ABANDON_AFTER = Duration.ofDays(7);

  public RetentionPolicy {
    // Stores keep milliseconds: a finer value would not read back as given (and one under a
    // millisecond would read back as zero), so the policy holds what is kept.
    maxAge = maxAge == null ? null : maxAge.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    abandonAfter =
        abandonAfter == null
            ? null
            : abandonAfter.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
      throw new ValidationException(
          "retention maxAge must be at least 1 ms (kept in whole milliseconds), got " + maxAge);
    }
    Names.requireStorable("retention maxAge (leave it out to keep events forever)", maxAge);
    Names.requireStorable("retention abandonAfter", abandonAfter);
    if (maxEventsPerPartition < 0) {
      throw new ValidationException(
          "retention maxEventsPerPartition must be positive (or 0 for no bound), got "
              + maxEventsPerPartition);
    }
    java.util.Objects.requireNonNull(abandonAfter, "abandonAfter");
    if (abandonAfter.isNegative() || abandonAfter.isZero()) {
      throw new ValidationException(
          "retention abandonAfter must be positive (how long a subscription without a live consumer"
              + " holds events back), got "
              + abandonAfter);
    }
  }

  /** A policy by age only. */
  public RetentionPolicy(Duration maxAge, boolean keepUnconsumed) {
    this(maxAge, keepUnconsumed, 0);
  }

  /** A policy with the default {@link #abandonAfter()}. */
  public RetentionPolicy(Duration maxAge, boolean keepUnconsumed, long maxEventsPerPartition) {
    this(maxAge, keepUnconsumed, maxEventsPerPartition, DEFAULT_ABANDON_AFTER);
  }

  public static RetentionPolicy forever() {
    return new RetentionPolicy(null, true, 0);
  }

  public static RetentionPolicy byAge(Duration maxAge) {
    return new RetentionPolicy(java.util.Objects.requireNonNull(maxAge, "maxAge"), true, 0);
  }

  /** Keeps the newest {@code maxEvents} events of each partition (at least 1). */
  public static RetentionPolicy bySize(long maxEventsPerPartition) {
    return forever().maxEventsPerPartition(maxEventsPerPartition);
  }

  /** Also bounds each partition to its newest {@code maxEvents} events (at least 1). */
  public RetentionPolicy maxEventsPerPartition(long maxEvents) {
    if (maxEvents < 1) {
      throw new ValidationException(
          "retention maxEventsPerPartition must be at least 1, got " + maxEvents);
    }
    return new RetentionPolicy(maxAge, keepUnconsumed, maxEvents, abandonAfter);
  }

  /**
   * Deletes events past their age or count even when a slow subscription has not read them (they
   * are lost to it).
   */
  public RetentionPolicy deleteUnconsumed() {
    return new RetentionPolicy(maxAge, false, maxEventsPerPartition, abandonAfter);
  }

  /**
   * How long a subscription without a live consumer still holds events back (with {@code
   * keepUnconsumed}); whether a subscription has a live consumer is checked at every retention run.
   */
  public RetentionPolicy abandonAfter(Duration after) {
    return new RetentionPolicy(maxAge, keepUnconsumed, maxEventsPerPartition, after);
  }
}
