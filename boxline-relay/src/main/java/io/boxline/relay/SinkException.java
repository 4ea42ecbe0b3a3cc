package io.boxline.relay;

import io.boxline.BoxlineException;
import io.boxline.Event;
import io.boxline.ValidationException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Thrown by {@link Sink#send} when some events were not confirmed: names each of them with the kind
 * of failure and a reason. Unchecked, like every Boxline exception.
 *
 * <ul>
 *   <li>{@link Kind#RETRYABLE} — the destination may take the event later (broker down, timeout,
 *       HTTP 5xx, 408, 429). The relay sends it again, after a backoff, until it is confirmed; its
 *       partition waits meanwhile and nothing is lost.
 *   <li>{@link Kind#PERMANENT} — sending it again cannot help (HTTP 4xx, a message the broker
 *       refuses as too large). The relay makes it a dead letter of its subscription, to be
 *       inspected and redriven or discarded with {@link io.boxline.Boxline#deadLetters()}.
 * </ul>
 *
 * <pre>{@code
 * throw SinkException.builder()
 *     .permanent(rejected, "HTTP 400: missing field amount")
 *     .retryable(remaining, "not sent after the rejection")
 *     .build();
 * }</pre>
 */
public class SinkException extends BoxlineException {
  /** Whether trying again can help. */
  public enum Kind {
    /** Try again later: the destination was unreachable, overloaded or too slow. */
    RETRYABLE,
    /** Never confirmed, however often it is sent: dead-letter it. */
    PERMANENT
  }

  /**
   * One event that was not confirmed.
   *
   * @param event the event
   * @param kind whether to retry it
   * @param reason what went wrong, for logs and the dead letter's error text
   */
  public record Failure(Event event, Kind kind, String reason) {
    public Failure {
      Objects.requireNonNull(event, "event");
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(reason, "reason");
    }
  }

  private final List<Failure> failures;

  /**
   * A sink failure naming at least one event.
   *
   * @throws ValidationException when {@code failures} is empty
   */
  public SinkException(String message, Throwable cause, List<Failure> failures) {
    super(message, cause);
    if (failures == null || failures.isEmpty()) {
      throw new ValidationException("a SinkException must name at least one failed event");
    }
    this.failures = List.copyOf(failures);
  }

  /** Every event in {@code events} failed and may be retried. */
  public static SinkException retryable(List<Event> events, String reason, Throwable cause) {
    return builder().retryable(events, reason).cause(cause).build();
  }

  /** Every event in {@code events} failed for good. */
  public static SinkException permanent(List<Event> events, String reason, Throwable cause) {
    return builder().permanent(events, reason).cause(cause).build();
  }

  /** Starts a report that names failed events one by one. */
  public static Builder builder() {
    return new Builder();
  }

  /** The failed events in the order they were reported. */
  public List<Failure> failures() {
    return failures;
  }

  /** The failed events of {@code kind}, in the order reported. */
  public List<Failure> failures(Kind kind) {
    List<Failure> out = new ArrayList<>();
    for (Failure f : failures) {
      if (f.kind() == kind) {
        out.add(f);
      }
    }
    return out;
  }

  /** True when at least one failure is retryable. */
  public boolean isRetryable() {
    for (Failure f : failures) {
      if (f.kind() == Kind.RETRYABLE) {
        return true;
      }
    }
    return false;
  }

  /** Collects failed events; the same event named twice keeps its last report. */
  public static final class Builder {
    private final Map<UUID, Failure> failures = new LinkedHashMap<>();
    private Throwable cause;
    private String message;

    private Builder() {}

    public Builder failed(Event event, Kind kind, String reason) {
      Objects.requireNonNull(event, "event");
      failures.remove(event.id());
      failures.put(event.id(), new Failure(event, kind, reason == null ? "failed" : reason));
      return this;
    }

    public Builder retryable(Event event, String reason) {
      return failed(event, Kind.RETRYABLE, reason);
    }

    public Builder permanent(Event event, String reason) {
      return failed(event, Kind.PERMANENT, reason);
    }

    public Builder retryable(Collection<Event> events, String reason) {
      events.forEach(e -> retryable(e, reason));
      return this;
    }

    public Builder permanent(Collection<Event> events, String reason) {
      events.forEach(e -> permanent(e, reason));
      return this;
    }

    /** The underlying exception (client error, I/O failure), kept as the cause. */
    public Builder cause(Throwable cause) {
      this.cause = cause;
      return this;
    }

    /** Overrides the summary message (default: counts and the first reason of each kind). */
    public Builder message(String message) {
      this.message = message;
      return this;
    }

    public boolean isEmpty() {
      return failures.isEmpty();
    }

    /**
     * @throws ValidationException when no event was named
     */
    public SinkException build() {
      List<Failure> list = List.copyOf(failures.values());
      return new SinkException(message != null ? message : summary(list), cause, list);
    }

    private static String summary(List<Failure> list) {
      StringBuilder sb = new StringBuilder();
      for (Kind kind : Kind.values()) {
        int n = 0;
        String first = null;
        for (Failure f : list) {
          if (f.kind() == kind) {
            n++;
            first = first == null ? f.reason() : first;
          }
        }
        if (n > 0) {
          sb.append(sb.length() == 0 ? "" : "; ")
              .append(n)
              .append(n == 1 ? " event " : " events ")
              .append(kind == Kind.RETRYABLE ? "not confirmed (retryable): " : "rejected: ")
              .append(first);
        }
      }
      return sb.toString();
    }
  }
}
