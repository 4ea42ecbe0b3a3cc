package io.boxline.spi;

/** What one retention run deleted. */
public record PurgeResult(long events, long inboxEntries, long deadLetters, long idempotencyKeys) {
  public long total() {
    return events + inboxEntries + deadLetters + idempotencyKeys;
  }
}
