package io.boxline.jdbc.internal;

/**
 * Retention by whole time segments of the log, where the dialect stores the log partitioned by the
 * time each event was sequenced (PostgreSQL, MariaDB). One {@link #maintain} per retention run
 * drops the closed segments whose events may all go and opens the segments the next events will
 * need; the row-by-row purge then leaves alone what the segments take care of.
 */
interface LogSegments {
  /**
   * What one run did.
   *
   * @param events events in the dropped segments
   * @param segments segments dropped
   * @param segmentedFromMs topics with a retention by age at least this long are cleaned by
   *     dropping segments; the row-by-row purge takes their events only from segments that ended
   *     {@code graceMs} past their retention and that something still holds on to. {@link
   *     Long#MAX_VALUE}: no topic is, every retention is row by row.
   * @param graceMs see {@code segmentedFromMs}
   * @param rowsByAge whether the row-by-row purge by age may have anything to do (false: every
   *     topic with a retention by age is served by segments, and none is held back)
   */
  record Run(long events, int segments, long segmentedFromMs, long graceMs, boolean rowsByAge) {
    static final Run ROWS_ONLY = new Run(0, 0, Long.MAX_VALUE, 0, true);
  }

  Run maintain();
}
