package io.boxline;

/**
 * Handles one event. Return normally when done; throw to have the event retried (the partition
 * waits; events are never skipped). Called from one thread per partition at a time, so a
 * partition's events arrive in order.
 */
@FunctionalInterface
public interface EventHandler {
  void handle(Event event);
}
