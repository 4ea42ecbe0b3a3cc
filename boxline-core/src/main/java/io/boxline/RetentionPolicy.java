package io.boxline;

import java.time.Duration;

/**
 * How long a topic keeps its events. By default events are kept forever. With a maximum age, events
 * older than that are deleted by the retention loop (run by one instance, the sequencer leader) —
 * except events some subscription's cursor has not passed yet, unless {@link #deleteUnconsumed()}
 * says otherwise, and events a subscription still has parked for a retry or as a dead letter.
 *
 * @param maxAge age after which events may go, or null to keep forever
 * @param keepUnconsumed whether events a cursor has not passed are kept past their age (default
 *     true: no subscription loses an event to retention)
 */
public record RetentionPolicy(Duration maxAge, boolean keepUnconsumed) {
  public RetentionPolicy {
    if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
      throw new ValidationException("retention maxAge must be positive, got " + maxAge);
    }
  }

  public static RetentionPolicy forever() {
    return new RetentionPolicy(null, true);
  }

  public static RetentionPolicy byAge(Duration maxAge) {
    return new RetentionPolicy(java.util.Objects.requireNonNull(maxAge, "maxAge"), true);
  }

  /**
   * Deletes events past their age even when a slow subscription has not read them (they are lost to
   * it).
   */
  public RetentionPolicy deleteUnconsumed() {
    return new RetentionPolicy(maxAge, false);
  }
}
