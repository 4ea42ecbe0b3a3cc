package io.boxline.spi;

import java.time.Instant;

/** Outcome of another attempt at a parked event. */
public record Resolution(Kind kind, int attempts, Instant nextAttemptAt, String error) {
  /** What became of the event. */
  public enum Kind {
    /** Handled (or ignored): removed from the store. */
    DONE,
    /** Failed again: try at {@code nextAttemptAt}. */
    RETRY,
    /** Gave up: dead-lettered. */
    DEAD
  }

  public static Resolution done() {
    return new Resolution(Kind.DONE, 0, null, null);
  }
}
