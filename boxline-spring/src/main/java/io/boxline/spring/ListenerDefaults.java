package io.boxline.spring;

import io.boxline.ConsumerBuilder;
import io.boxline.Tasks;
import java.time.Duration;

/**
 * Settings every {@link BoxlineListener} consumer and the {@link BoxlineTask} worker start with; a
 * listener's own attributes override them. Zero or null keeps Boxline's default.
 *
 * @param batchSize events per batch
 * @param concurrency worker threads per consumer
 * @param shutdownTimeout how long stopping waits for the in-flight batch
 * @param handlerTimeout a batch running longer is interrupted and fails
 * @param maxAttempts attempts before an event is dead-lettered
 * @param taskConcurrency worker threads of the task worker
 */
public record ListenerDefaults(
    int batchSize,
    int concurrency,
    Duration shutdownTimeout,
    Duration handlerTimeout,
    int maxAttempts,
    int taskConcurrency) {

  /** Boxline's own defaults throughout. */
  public static final ListenerDefaults NONE = new ListenerDefaults(0, 0, null, null, 0, 0);

  void apply(ConsumerBuilder b) {
    if (batchSize > 0) {
      b.batchSize(batchSize);
    }
    if (concurrency > 0) {
      b.concurrency(concurrency);
    }
    if (shutdownTimeout != null) {
      b.shutdownTimeout(shutdownTimeout);
    }
    if (handlerTimeout != null) {
      b.handlerTimeout(handlerTimeout);
    }
  }

  void apply(Tasks.Worker w) {
    if (batchSize > 0) {
      w.batchSize(batchSize);
    }
    if (taskConcurrency > 0) {
      w.concurrency(taskConcurrency);
    }
    if (shutdownTimeout != null) {
      w.shutdownTimeout(shutdownTimeout);
    }
    if (handlerTimeout != null) {
      w.handlerTimeout(handlerTimeout);
    }
  }
}
