package io.boxline;

import java.util.UUID;

/**
 * What a {@link Tasks.ContextTaskHandler} knows about the task it runs.
 *
 * @param task the task as stored (id, type, ordering key as event key, headers, …)
 * @param attempt which attempt this is, from 1: counts in-place retries and later (parked) ones,
 *     and starts again at 1 after the task is unblocked
 */
public record TaskContext(Event task, int attempt) {
  public UUID id() {
    return task.id();
  }

  public String type() {
    return task.type();
  }
}
