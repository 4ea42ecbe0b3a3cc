package io.boxline;

import java.sql.Connection;
import java.util.List;
import java.util.UUID;

/**
 * Tasks scheduled in a transaction and run by typed handlers: a task exists only if the transaction
 * that scheduled it commits. Built on the log: tasks are events of the topic {@value #TOPIC} read
 * by the subscription {@value #SUBSCRIPTION}, so they get the same ordering, retries, dead letters
 * and fencing.
 */
public interface Tasks {
  /** The topic that holds tasks (created on first use, {@value #PARTITIONS} partitions). */
  String TOPIC = "boxline/tasks";

  /** The subscription task workers share. */
  String SUBSCRIPTION = "boxline-tasks";

  int PARTITIONS = 16;

  /** Schedules a task in {@code tx}; the payload is encoded as JSON. */
  PublishResult schedule(Connection tx, String taskType, Object payload, TaskOptions options);

  default PublishResult schedule(Connection tx, String taskType, Object payload) {
    return schedule(tx, taskType, payload, TaskOptions.NONE);
  }

  /** Starts configuring a worker that runs tasks by type. */
  Worker worker();

  /** Blocked tasks (dead-lettered), oldest first. */
  List<DeadLetter> blocked();

  /**
   * Lets a blocked task run again (and the tasks of its ordering key behind it); true when one was
   * found.
   */
  boolean unblock(UUID taskId);

  /** Configures a task worker (a consumer of {@value #SUBSCRIPTION}). */
  interface Worker {
    <T> Worker handle(String taskType, Class<T> payloadType, TaskHandler<? super T> handler);

    Worker retryPolicy(RetryPolicy policy);

    Worker concurrency(int threads);

    Worker id(String id);

    /** Starts the worker. Tasks of a type with no handler here are blocked, never dropped. */
    Consumer start();
  }
}
