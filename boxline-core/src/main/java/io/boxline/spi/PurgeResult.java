package io.boxline.spi;

/**
 * What one retention run deleted.
 *
 * @param events events removed from the log, row by row or in dropped segments
 * @param logSegments whole segments of the log dropped (where the store keeps the log in time
 *     segments: PostgreSQL)
 * @param logSegmentEvents the events of those segments (counted in {@code events} too)
 */
public record PurgeResult(
    long events,
    long inboxEntries,
    long deadLetters,
    long idempotencyKeys,
    int logSegments,
    long logSegmentEvents) {
  public PurgeResult(long events, long inboxEntries, long deadLetters, long idempotencyKeys) {
    this(events, inboxEntries, deadLetters, idempotencyKeys, 0, 0);
  }

  public long total() {
    return events + inboxEntries + deadLetters + idempotencyKeys;
  }
}
