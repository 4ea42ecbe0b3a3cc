package io.boxline;

/**
 * Runs one task. Return normally when done. Throw {@link HandlerDecision#retryAt} to run it again
 * later, {@link HandlerDecision#deadLetter} to block it (later tasks of its ordering key wait until
 * it is unblocked), {@link HandlerDecision#ignore} to drop it; any other exception follows the
 * retry policy and blocks the task once attempts run out.
 *
 * @param <T> the payload type
 */
@FunctionalInterface
public interface TaskHandler<T> {
  void run(T payload, Event task);
}
