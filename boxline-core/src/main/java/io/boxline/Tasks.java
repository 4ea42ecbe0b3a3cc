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
  /**
   * The topic that holds tasks (created on first use with {@link TaskSettings#partitions}, by
   * default {@value #PARTITIONS} partitions, and {@link TaskSettings#retention}).
   */
  String TOPIC = "boxline/tasks";

  /** The subscription task workers share. */
  String SUBSCRIPTION = "boxline-tasks";

  /** Default partition count of the tasks topic. */
  int PARTITIONS = 16;

  /**
   * Schedules a task in {@code tx}; the payload is encoded with the options' codec, else {@link
   * TaskSettings#codec} (JSON by default).
   */
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

  /** Counters of unknown task types and automatic unblocking on this instance. */
  default TaskStats stats() {
    return TaskStats.NONE;
  }

  /**
   * Runs one task and sees its {@link TaskContext} (attempt number and the stored task). Given to
   * {@link Worker#handleWithContext}.
   */
  @FunctionalInterface
  interface ContextTaskHandler<T> {
    void run(T payload, TaskContext context);
  }

  /** Configures a task worker (a consumer of {@value #SUBSCRIPTION}). */
  interface Worker {
    <T> Worker handle(String taskType, Class<T> payloadType, TaskHandler<? super T> handler);

    /** Like {@link #handle}, with the attempt number and the task in a {@link TaskContext}. */
    <T> Worker handleWithContext(
        String taskType, Class<T> payloadType, ContextTaskHandler<? super T> handler);

    /**
     * How this worker decodes payloads (default {@link TaskSettings#codec}, JSON unless changed).
     * Tasks must have been scheduled with a codec of the same content type (a task whose content
     * type differs fails with {@link SerializationException} under the retry policy, and is then
     * blocked).
     */
    Worker codec(PayloadCodec codec);

    /**
     * What happens to tasks of a type this worker has no handler for (default {@link
     * UnknownTaskPolicy#BLOCK}).
     */
    Worker unknownType(UnknownTaskPolicy policy);

    /**
     * How failing tasks are retried before they are blocked (default {@link RetryPolicy#DEFAULT}).
     */
    Worker retryPolicy(RetryPolicy policy);

    /** A retry policy for one task type, overriding the worker's. */
    Worker retryPolicy(String taskType, RetryPolicy policy);

    /** Partitions (ordering keys) run at once, 1 to 256 (default 4). */
    Worker concurrency(int threads);

    /**
     * Runs handlers on threads of {@code executor} instead of the worker's own (default: the
     * worker's). The worker still waits for each task, so ordering, retries and {@link
     * #concurrency} bound are unchanged; use it to run tasks on virtual threads or on a pool that
     * carries your context. A task the executor rejects fails under the retry policy. The worker
     * does not shut the executor down.
     */
    Worker executor(java.util.concurrent.Executor executor);

    /** Tasks fetched per partition per batch, 1 to 10,000 (default 100). */
    Worker batchSize(int batchSize);

    /** How long {@link Consumer#close()} waits for running tasks (default 10 s). */
    Worker shutdownTimeout(java.time.Duration timeout);

    /**
     * How long one task may run (see {@link ConsumerBuilder#handlerTimeout}); no limit by default.
     */
    Worker handlerTimeout(java.time.Duration timeout);

    /**
     * Runs up to {@code threads} tasks at once however few partitions the tasks topic has: tasks
     * without an ordering key all in parallel, those of one ordering key still one after another
     * (see {@link ConsumerBuilder#parallelByKey}); off by default.
     */
    Worker parallelism(int threads);

    Worker id(String id);

    /**
     * Starts the worker. Tasks of a type with no handler here follow {@link #unknownType} (blocked
     * by default, never silently dropped).
     */
    Consumer start();
  }
}
