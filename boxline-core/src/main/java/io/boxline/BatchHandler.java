package io.boxline;

import java.util.List;

/**
 * Handles a batch of consecutive events of one partition, in sequence order. Return normally when
 * all are done; throw to have the whole batch retried.
 */
@FunctionalInterface
public interface BatchHandler {
  void handle(List<Event> batch);
}
