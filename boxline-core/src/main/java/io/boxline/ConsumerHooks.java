package io.boxline;

import java.time.Duration;

/**
 * Called around every handler invocation, for logging, tracing and error trackers. Called on the
 * worker thread; keep them quick. An exception thrown by a hook is logged and otherwise ignored.
 */
public interface ConsumerHooks {
  ConsumerHooks NONE = new ConsumerHooks() {};

  /** Before the handler sees the event (each attempt). */
  default void beforeEvent(Event event, int attempt) {}

  /** After the handler returned normally. */
  default void afterEvent(Event event, Duration took) {}

  /**
   * After the handler failed; {@code attempt} counts from 1 across in-place and parked attempts.
   */
  default void onError(Event event, RuntimeException error, int attempt) {}

  /** The event was dead-lettered. */
  default void onDeadLetter(Event event, String reason) {}

  /** A worker failed outside the handler (database unreachable, …); it retries on its own. */
  default void onWorkerError(Throwable error) {}
}
