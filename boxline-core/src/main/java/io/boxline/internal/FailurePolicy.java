package io.boxline.internal;

import io.boxline.ConsumerHooks;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.RemoteConsumers;
import io.boxline.RetryPolicy;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.Resolution;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Random;

/**
 * The one path from a failed attempt to its outcome (retry, park, dead letter), for every kind of
 * member: a Java consumer's handler that threw or decided, and a remote member that settled an
 * event as RETRY or DEAD. It applies the retry policy (per event type where one is set), tells the
 * observers about retries, calls the dead-letter hook and keeps error texts storable.
 */
final class FailurePolicy {
  private static final System.Logger LOG = System.getLogger(FailurePolicy.class.getName());

  /** The longest error text kept with a parked event. */
  static final int MAX_ERROR_LENGTH = 2000;

  private final String group;
  private final String member;
  private final RetryPolicy retryPolicy;
  private final Map<String, RetryPolicy> typePolicies;
  private final boolean deadLetterBlocksKey;
  private final ConsumerHooks hooks;
  private final Observers observers;
  private final Clock clock;
  private final Random random = new Random();

  /**
   * @param member who decides, for the log (a consumer id, or "remote members")
   * @param hooks the hooks with the observers behind them ({@link Observers#hooks})
   */
  FailurePolicy(
      String group,
      String member,
      RetryPolicy retryPolicy,
      Map<String, RetryPolicy> typePolicies,
      boolean deadLetterBlocksKey,
      ConsumerHooks hooks,
      Observers observers,
      Clock clock) {
    this.group = group;
    this.member = member;
    this.retryPolicy = retryPolicy;
    this.typePolicies = Map.copyOf(typePolicies);
    this.deadLetterBlocksKey = deadLetterBlocksKey;
    this.hooks = hooks;
    this.observers = observers;
    this.clock = clock;
  }

  /** The policy of a consumer's settings. */
  static FailurePolicy of(ConsumerSettings s, String group) {
    return new FailurePolicy(
        group,
        "consumer " + s.id(),
        s.retryPolicy(),
        s.typePolicies(),
        s.deadLetterBlocksKey(),
        s.hooks(),
        s.observers(),
        s.clock());
  }

  /** The policy for the remote members of {@code group}. */
  static FailurePolicy remote(
      io.boxline.MemberPolicy p, String group, Observers observers, Clock clock) {
    return new FailurePolicy(
        group,
        "the remote members of " + group,
        p.retryPolicy(),
        p.typePolicies(),
        p.deadLetterBlocksKey(),
        observers.hooks(group, p.hooks()),
        observers,
        clock);
  }

  boolean deadLetterBlocksKey() {
    return deadLetterBlocksKey;
  }

  Clock clock() {
    return clock;
  }

  RetryPolicy policyFor(Event e) {
    RetryPolicy p = typePolicies.get(e.type());
    return p != null ? p : retryPolicy;
  }

  /** The outcome of a failed attempt: the handler's decision, or the retry policy's. */
  Outcome decide(Event e, RuntimeException failure, int attempt, RetryPolicy policy) {
    if (failure instanceof HandlerDecision) {
      HandlerDecision d = (HandlerDecision) failure;
      switch (d.kind()) {
        case IGNORE:
          return Outcome.DONE;
        case DEAD_LETTER:
          return dead(e, attempt, "dead-lettered by the handler: " + d.getMessage());
        case RETRY_AT:
          Instant at = d.retryAt(clock); // retryIn counts from the injected clock
          retrying(e, attempt, at);
          return new Outcome(ParkState.RETRY, attempt, at, "retry requested: " + d.getMessage());
        default:
          throw new IllegalStateException(d.kind().name());
      }
    }
    return retryOrDead(e, attempt, describe(failure), null, policy);
  }

  /**
   * The outcome of a remote member's settlement of attempt {@code attempt}: DONE, a dead letter
   * with its reason, or a retry after {@code retryIn} (the policy's backoff when null) unless the
   * attempts are used up.
   */
  Outcome settled(
      Event e, RemoteConsumers.Outcome outcome, Duration retryIn, String reason, int attempt) {
    switch (outcome) {
      case DONE:
        return Outcome.DONE;
      case DEAD:
        return dead(e, attempt, text(reason, "dead-lettered by the member"));
      default:
        String error = text(reason, "retry requested by the member");
        hook(() -> hooks.onError(e, new RemoteFailure(error), attempt));
        return retryOrDead(e, attempt, error, retryIn, policyFor(e));
    }
  }

  private Outcome retryOrDead(
      Event e, int attempt, String error, Duration delay, RetryPolicy policy) {
    if (attempt >= policy.maxAttempts()) {
      return dead(e, attempt, error);
    }
    Instant next = clock.instant().plus(delay != null ? delay : policy.delayAfter(attempt, random));
    retrying(e, attempt, next);
    return new Outcome(ParkState.RETRY, attempt, next, error);
  }

  private void retrying(Event e, int attempt, Instant next) {
    if (observers.active()) {
      observers.retrying(group, e, attempt, next);
    }
  }

  Outcome dead(Event e, int attempts, String reason) {
    LOG.log(
        Level.WARNING,
        "{0}: dead-lettered {1} after {2} attempts: {3}",
        member,
        e,
        attempts,
        reason);
    hook(() -> hooks.onDeadLetter(e, reason));
    return new Outcome(ParkState.DEAD, attempts, clock.instant(), reason);
  }

  /** The outcome of an event that waits behind an earlier one of its key. */
  Outcome waiting() {
    return new Outcome(ParkState.WAITING, 0, clock.instant(), null);
  }

  /** The parked row for event {@code e} with parked outcome {@code o}. */
  static Park park(Event e, Outcome o) {
    return new Park(
        e.sequence(),
        e.id(),
        e.key(),
        e.type(),
        o.park(),
        o.attempts(),
        o.nextAttemptAt(),
        o.error());
  }

  /** Whether a parked outcome holds the later events of its key. */
  boolean holdsKey(ParkState park) {
    return park != ParkState.DEAD || deadLetterBlocksKey;
  }

  static Resolution toResolution(Outcome o) {
    return o.park() == null
        ? Resolution.done()
        : new Resolution(
            o.park() == ParkState.DEAD ? Resolution.Kind.DEAD : Resolution.Kind.RETRY,
            o.attempts(),
            o.nextAttemptAt(),
            o.error());
  }

  void hook(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a hook of " + member + " failed", e);
    }
  }

  private static String text(String reason, String otherwise) {
    return reason == null || reason.isBlank() ? otherwise : storable(reason);
  }

  /**
   * A failure as the error text kept with a parked event: at most 2,000 characters, storable on
   * every database (a NUL, which PostgreSQL refuses, and a lone surrogate, which has no UTF-8 form,
   * become U+FFFD).
   */
  static String describe(Throwable t) {
    return storable(t.getClass().getName() + (t.getMessage() == null ? "" : ": " + t.getMessage()));
  }

  private static String storable(String text) {
    String m = text.length() > MAX_ERROR_LENGTH ? text.substring(0, MAX_ERROR_LENGTH) : text;
    StringBuilder out = new StringBuilder(m.length());
    for (int i = 0; i < m.length(); i++) {
      char c = m.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < m.length()
          && Character.isLowSurrogate(m.charAt(i + 1))) {
        out.append(c).append(m.charAt(++i));
      } else if (c == '\0' || Character.isSurrogate(c)) {
        out.append('\uFFFD');
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** A remote member's failed attempt as the hooks see it: the reason it gave. */
  static final class RemoteFailure extends io.boxline.BoxlineException {
    RemoteFailure(String reason) {
      super(reason);
    }
  }
}
