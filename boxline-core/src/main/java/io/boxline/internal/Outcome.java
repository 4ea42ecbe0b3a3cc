package io.boxline.internal;

import io.boxline.spi.ParkState;
import java.time.Instant;

/** What became of one event: handled (no park), or parked in some state. */
record Outcome(ParkState park, int attempts, Instant nextAttemptAt, String error) {
  static final Outcome DONE = new Outcome(null, 0, null, null);

  /** A handler's "ignore" under a transactional handler: nothing committed, nothing parked. */
  static final Outcome IGNORED = new Outcome(null, 0, null, "ignored");
}
