package io.boxline;

/**
 * What a task worker does with a task of a type it has no handler for (for instance a task
 * scheduled by a newer version of the application, during a rolling deploy).
 *
 * <p>A policy is called like a handler: returning normally marks the task done, and it may throw
 * {@link HandlerDecision#deadLetter} (block), {@link HandlerDecision#ignore} (drop), {@link
 * HandlerDecision#retryAt} or any other exception (under the worker's retry policy for that type).
 * Write your own to log, forward the task elsewhere, or decide by type.
 */
@FunctionalInterface
public interface UnknownTaskPolicy {
  /** Blocks the task (it holds back its ordering key) until it is unblocked. The default. */
  UnknownTaskPolicy BLOCK =
      task -> {
        throw HandlerDecision.deadLetter(
            "no handler for task type '" + task.type() + "' in this worker");
      };

  /**
   * Fails the attempt, so the retry policy (of the type, else the worker's) tries again later and
   * blocks the task once attempts run out: room for a worker that knows the type to come up.
   */
  UnknownTaskPolicy RETRY =
      task -> {
        throw new BoxlineException(
            "no handler for task type '" + task.type() + "' in this worker (retrying)");
      };

  /** Drops the task (logged at WARNING and counted in {@link TaskStats#unknownIgnored()}). */
  UnknownTaskPolicy IGNORE =
      task -> {
        throw HandlerDecision.ignore(
            "no handler for task type '" + task.type() + "' in this worker (ignored)");
      };

  /** Handles a task no handler of the worker matches; see the class comment for outcomes. */
  void onUnknown(Event task);
}
