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
 * @param codec how this task's payload is encoded, or null for {@link TaskSettings#codec} (the
 *     worker that runs it must decode it: see {@link Tasks.Worker#codec})
 */
public record TaskOptions(
    String idempotencyKey, String orderingKey, Instant runAt, PayloadCodec codec) {
  public static final TaskOptions NONE = new TaskOptions(null, null, null, null);

  /** Options with the instance's codec (the form before per-task codecs existed). */
  public TaskOptions(String idempotencyKey, String orderingKey, Instant runAt) {
    this(idempotencyKey, orderingKey, runAt, null);
  }

  public static TaskOptions options() {
    return NONE;
  }

  public TaskOptions idempotencyKey(String key) {
    return new TaskOptions(key, orderingKey, runAt, codec);
  }

  public TaskOptions orderingKey(String key) {
    return new TaskOptions(idempotencyKey, key, runAt, codec);
  }

  public TaskOptions runAt(Instant time) {
    return new TaskOptions(idempotencyKey, orderingKey, time, codec);
  }

  public TaskOptions codec(PayloadCodec c) {
    return new TaskOptions(idempotencyKey, orderingKey, runAt, c);
  }
}
