package io.boxline;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Thrown by a handler to decide what happens to the event instead of the retry policy: retry at a
 * given time, dead-letter now, or ignore (count as handled). Any other exception means "failed,
 * follow the retry policy".
 */
public final class HandlerDecision extends BoxlineException {
  /** The kinds of decision. */
  public enum Kind {
    RETRY_AT,
    DEAD_LETTER,
    IGNORE
  }

  private final Kind kind;
  private final Instant retryAt;

  private HandlerDecision(Kind kind, Instant retryAt, String reason) {
    super(reason, null);
    this.kind = kind;
    this.retryAt = retryAt;
  }

  /**
   * Park the event and try again at {@code time}; later events of its key wait. Counts as an
   * attempt.
   */
  public static HandlerDecision retryAt(Instant time, String reason) {
    return new HandlerDecision(Kind.RETRY_AT, Objects.requireNonNull(time, "time"), reason);
  }

  public static HandlerDecision retryIn(Duration delay, String reason) {
    return retryAt(Instant.now().plus(delay), reason);
  }

  /** Dead-letter the event now, whatever attempts are left. */
  public static HandlerDecision deadLetter(String reason) {
    return new HandlerDecision(Kind.DEAD_LETTER, null, reason);
  }

  /** Treat the event as handled; the cursor moves past it. */
  public static HandlerDecision ignore(String reason) {
    return new HandlerDecision(Kind.IGNORE, null, reason);
  }

  public Kind kind() {
    return kind;
  }

  /** For {@link Kind#RETRY_AT}: when to retry. */
  public Instant retryAt() {
    return retryAt;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this; // a decision, not an error: no stack trace needed
  }
}
