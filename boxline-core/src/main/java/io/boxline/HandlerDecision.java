package io.boxline;

import java.time.Clock;
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

  /** For {@link #retryAt(Instant, String)}; null otherwise. */
  private final Instant retryAt;

  /**
   * For {@link #retryIn}; null otherwise. Kept as a delay so that the consumer counts it from its
   * own clock ({@code Boxline.Builder.clock}), not from the system clock at the throw.
   */
  private final Duration retryIn;

  private HandlerDecision(Kind kind, Instant retryAt, Duration retryIn, String reason) {
    super(reason, null);
    this.kind = kind;
    this.retryAt = retryAt;
    this.retryIn = retryIn;
  }

  /**
   * Park the event and try again at {@code time}; later events of its key wait. Counts as an
   * attempt.
   */
  public static HandlerDecision retryAt(Instant time, String reason) {
    return new HandlerDecision(Kind.RETRY_AT, Objects.requireNonNull(time, "time"), null, reason);
  }

  /**
   * Park the event and try again {@code delay} from now on the consumer's clock ({@code
   * Boxline.Builder.clock}); later events of its key wait. Counts as an attempt.
   */
  public static HandlerDecision retryIn(Duration delay, String reason) {
    return new HandlerDecision(Kind.RETRY_AT, null, Objects.requireNonNull(delay, "delay"), reason);
  }

  /** Dead-letter the event now, whatever attempts are left. */
  public static HandlerDecision deadLetter(String reason) {
    return new HandlerDecision(Kind.DEAD_LETTER, null, null, reason);
  }

  /** Treat the event as handled; the cursor moves past it. */
  public static HandlerDecision ignore(String reason) {
    return new HandlerDecision(Kind.IGNORE, null, null, reason);
  }

  public Kind kind() {
    return kind;
  }

  /**
   * For {@link Kind#RETRY_AT}: when to retry, reading {@code clock} for a {@link #retryIn}
   * decision. The consumer passes its own clock.
   */
  public Instant retryAt(Clock clock) {
    if (kind != Kind.RETRY_AT) {
      return null;
    }
    return retryAt != null ? retryAt : clock.instant().plus(retryIn);
  }

  /**
   * For {@link Kind#RETRY_AT}: when to retry; a {@link #retryIn} decision is counted from the
   * system clock now (the consumer uses {@link #retryAt(Clock)} with its own clock instead).
   */
  public Instant retryAt() {
    return retryAt(Clock.systemUTC());
  }

  /** For a {@link #retryIn} decision: the delay; null for any other decision. */
  public Duration retryIn() {
    return retryIn;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this; // a decision, not an error: no stack trace needed
  }
}
