package io.boxline;

import java.time.Instant;

/**
 * How a task is scheduled.
 *
 * @param idempotencyKey scheduling twice with the same key stores one task (the second call reports
 *     a duplicate)
 * @param orderingKey tasks with the same ordering key run one after another in scheduling order; a
 *     blocked task holds back the later ones of its key until it is unblocked. Tasks without one
 *     run in parallel.
 * @param runAt earliest time to run, or null for now
 */
public record TaskOptions(String idempotencyKey, String orderingKey, Instant runAt) {
  public static final TaskOptions NONE = new TaskOptions(null, null, null);

  public static TaskOptions options() {
    return NONE;
  }

  public TaskOptions idempotencyKey(String key) {
    return new TaskOptions(key, orderingKey, runAt);
  }

  public TaskOptions orderingKey(String key) {
    return new TaskOptions(idempotencyKey, key, runAt);
  }

  public TaskOptions runAt(Instant time) {
    return new TaskOptions(idempotencyKey, orderingKey, time);
  }
}
