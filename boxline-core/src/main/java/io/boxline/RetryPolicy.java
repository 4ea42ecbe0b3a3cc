package io.boxline;

import java.time.Duration;
import java.util.Objects;
import java.util.Random;

/**
 * How a failing event is retried: a few attempts in place (the partition waits), then parked in the
 * subscription's retry store while the partition moves on (later events of the same key wait behind
 * it), retried with exponential backoff and jitter, and dead-lettered after {@link #maxAttempts()}
 * attempts in all.
 *
 * <p>Defaults: 3 attempts in place within at most 5 s, backoff 1 s doubling to 10 min with 20 %
 * jitter, 10 attempts in all. Each duration is positive and at most 10 years.
 */
public final class RetryPolicy {
  /** The longest backoff or in-place time (declared before DEFAULT, which is checked with it). */
  private static final Duration LONGEST = Duration.ofDays(3653);

  public static final RetryPolicy DEFAULT =
      new RetryPolicy(
          3, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofMinutes(10), 2.0, 0.2, 10);

  private final int inPlaceAttempts;
  private final Duration inPlaceTime;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final double multiplier;
  private final double jitter;
  private final int maxAttempts;

  private RetryPolicy(
      int inPlaceAttempts,
      Duration inPlaceTime,
      Duration initialBackoff,
      Duration maxBackoff,
      double multiplier,
      double jitter,
      int maxAttempts) {
    if (inPlaceAttempts < 1 || inPlaceAttempts > 1000) {
      throw new ValidationException(
          "inPlaceAttempts must be between 1 and 1000, got " + inPlaceAttempts);
    }
    requirePositive("inPlaceTime", inPlaceTime);
    requirePositive("initialBackoff", initialBackoff);
    requirePositive("maxBackoff", maxBackoff);
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw new ValidationException(
          "maxBackoff ("
              + maxBackoff
              + ") must not be shorter than initialBackoff ("
              + initialBackoff
              + ")");
    }
    if (!(multiplier >= 1 && multiplier <= 100)) {
      throw new ValidationException("multiplier must be between 1 and 100, got " + multiplier);
    }
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new ValidationException("jitter must be between 0 and 1, got " + jitter);
    }
    if (maxAttempts < inPlaceAttempts) {
      throw new ValidationException(
          "maxAttempts ("
              + maxAttempts
              + ") must be at least inPlaceAttempts ("
              + inPlaceAttempts
              + ")");
    }
    this.inPlaceAttempts = inPlaceAttempts;
    this.inPlaceTime = inPlaceTime;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
    this.multiplier = multiplier;
    this.jitter = jitter;
    this.maxAttempts = maxAttempts;
  }

  private static void requirePositive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new ValidationException(name + " must be positive, got " + d);
    }
    // A retry time beyond the databases' range (or a delay whose milliseconds overflow a long)
    // would fail every park of the event; ten years is the cap Boxline's other ages have.
    if (d.compareTo(LONGEST) > 0) {
      throw new ValidationException(name + " must be at most 10 years (3653 days), got " + d);
    }
  }

  /**
   * Exponential backoff from {@code initial} to {@code max}; other settings as {@link #DEFAULT}.
   */
  public static RetryPolicy exponential(Duration initial, Duration max) {
    return DEFAULT.backoff(initial, max);
  }

  public RetryPolicy backoff(Duration initial, Duration max) {
    return new RetryPolicy(
        inPlaceAttempts, inPlaceTime, initial, max, multiplier, jitter, maxAttempts);
  }

  /**
   * Attempts made in place, the partition waiting, before the event is parked (1 = park at once).
   */
  public RetryPolicy inPlaceAttempts(int n) {
    return new RetryPolicy(
        n, inPlaceTime, initialBackoff, maxBackoff, multiplier, jitter, Math.max(n, maxAttempts));
  }

  /**
   * Longest time spent retrying in place before the event is parked, whatever the attempt count.
   */
  public RetryPolicy inPlaceTime(Duration d) {
    return new RetryPolicy(
        inPlaceAttempts, d, initialBackoff, maxBackoff, multiplier, jitter, maxAttempts);
  }

  public RetryPolicy multiplier(double m) {
    return new RetryPolicy(
        inPlaceAttempts, inPlaceTime, initialBackoff, maxBackoff, m, jitter, maxAttempts);
  }

  /** Random spread of each delay, as a fraction (0.2 = ±20 %). */
  public RetryPolicy jitter(double j) {
    return new RetryPolicy(
        inPlaceAttempts, inPlaceTime, initialBackoff, maxBackoff, multiplier, j, maxAttempts);
  }

  /** Attempts in all (in place and parked) before the event is dead-lettered. */
  public RetryPolicy maxAttempts(int n) {
    return new RetryPolicy(
        inPlaceAttempts, inPlaceTime, initialBackoff, maxBackoff, multiplier, jitter, n);
  }

  public int inPlaceAttempts() {
    return inPlaceAttempts;
  }

  public Duration inPlaceTime() {
    return inPlaceTime;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  /** Delay before attempt {@code failedAttempts + 1}, after {@code failedAttempts} failures. */
  public Duration delayAfter(int failedAttempts, Random random) {
    double base = initialBackoff.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempts - 1));
    base = Math.min(base, maxBackoff.toMillis());
    double spread = base * jitter * (random.nextDouble() * 2 - 1);
    return Duration.ofMillis(Math.max(1, Math.round(base + spread)));
  }

  @Override
  public String toString() {
    return "RetryPolicy[inPlace="
        + inPlaceAttempts
        + " within "
        + inPlaceTime
        + ", backoff "
        + initialBackoff
        + " x"
        + multiplier
        + " up to "
        + maxBackoff
        + " ±"
        + (int) (jitter * 100)
        + "%, max "
        + maxAttempts
        + " attempts]";
  }
}
