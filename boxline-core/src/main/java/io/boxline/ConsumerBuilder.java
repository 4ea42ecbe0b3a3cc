package io.boxline;

import java.time.Duration;

/**
 * Configures a {@link Consumer}. Exactly one of {@link #handler}, {@link #batchHandler} and {@link
 * #transactionalHandler} must be set.
 */
public interface ConsumerBuilder {
  /** Default events fetched and handled per batch. */
  int DEFAULT_BATCH_SIZE = 100;

  /** Default number of partitions handled at once. */
  int DEFAULT_CONCURRENCY = 4;

  /** Default time {@link Consumer#close()} waits for in-flight batches. */
  Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Default time {@link Consumer#close()} waits, once {@link #shutdownTimeout} has passed, for the
   * handlers it interrupted.
   */
  Duration DEFAULT_HARD_SHUTDOWN_TIMEOUT = Duration.ofSeconds(1);

  /**
   * Per-event handler; events of a batch are handled one by one, progress committed after the
   * batch.
   */
  ConsumerBuilder handler(EventHandler handler);

  /** Whole-batch handler. */
  ConsumerBuilder batchHandler(BatchHandler handler);

  /**
   * Handler that writes in Boxline's transaction: its writes and the cursor advance commit together
   * (exactly-once effects).
   */
  ConsumerBuilder transactionalHandler(TransactionalHandler handler);

  /**
   * Like {@link #transactionalHandler(TransactionalHandler)}, in transactions {@code runner} runs
   * (an application framework's) instead of Boxline's own: Boxline locks the cursor, calls the
   * handler and moves the cursor on the runner's connection, and the runner commits. Writes the
   * framework makes in that transaction (JPA, say) commit with the cursor, exactly once.
   */
  ConsumerBuilder transactionalHandler(TransactionalHandler handler, TransactionRunner runner);

  /** Events per batch, 1 to 10,000 (default {@value #DEFAULT_BATCH_SIZE}). */
  ConsumerBuilder batchSize(int batchSize);

  /** Partitions handled in parallel, 1 to 256 (default {@value #DEFAULT_CONCURRENCY}). */
  ConsumerBuilder concurrency(int threads);

  /**
   * How long one handler call may run on a worker (default: no limit). A call still running then is
   * interrupted, and the attempt fails with {@link HandlerTimeoutException} under the retry policy.
   * A handler that ignores the interrupt for another {@code timeout} keeps its thread, but its
   * partition goes back to the group (released at its epoch, so the stuck thread's commit is fenced
   * and its events are delivered again) and its worker slot to the consumer's other partitions.
   * Handlers run on the committing thread ({@link #handleOnCommittingThread}) are not interrupted.
   */
  ConsumerBuilder handlerTimeout(Duration timeout);

  /**
   * Handles different keys of one partition at once, on up to {@code threads} threads of this
   * consumer (2 to 256; default: off, one event of a partition at a time). A key's events keep
   * their order, and a key that fails holds its later events behind it as always; the cursor moves
   * only up to the first event not yet finished. With it a topic of few partitions is no ceiling on
   * parallelism; keyless events run in parallel with everything. Only with {@link
   * #handler(EventHandler)}.
   */
  ConsumerBuilder parallelByKey(int threads);

  /**
   * How long {@link Consumer#close()} lets in-flight batches finish on their own (default 10 s).
   * Then it interrupts their handlers and waits {@link #hardShutdownTimeout} more.
   */
  ConsumerBuilder shutdownTimeout(Duration timeout);

  /**
   * How long {@link Consumer#close()} waits for the handlers it interrupted once {@link
   * #shutdownTimeout} has passed (default 1 s). Batches still in flight at the shutdown timeout are
   * abandoned: their cursors move no further, and their events are delivered again to whoever holds
   * the partitions next. A handler that ignores the interrupt keeps its thread past this time.
   */
  ConsumerBuilder hardShutdownTimeout(Duration timeout);

  /**
   * Runs the consumer's partitions on {@code executor} instead of on threads of its own (default: a
   * pool of the consumer's, {@code boxline-worker-<id>-<n>}). The consumer hands it at most {@link
   * #concurrency} tasks at once, each draining one partition; on JDK 21 and newer, {@code
   * Executors.newVirtualThreadPerTaskExecutor()} runs each on a virtual thread. The consumer never
   * shuts the executor down: it belongs to the application. A task the executor refuses leaves the
   * partition for the next round.
   */
  ConsumerBuilder executor(java.util.concurrent.Executor executor);

  /**
   * How failing events are retried and when they are dead-lettered (default {@link
   * RetryPolicy#DEFAULT}).
   */
  ConsumerBuilder retryPolicy(RetryPolicy policy);

  /** A retry policy for one event type, overriding the consumer's. */
  ConsumerBuilder retryPolicy(String eventType, RetryPolicy policy);

  /**
   * Whether a dead-lettered event keeps blocking later events of its key until it is redriven or
   * discarded (default false: they go on once it is dead-lettered).
   */
  ConsumerBuilder deadLetterBlocksKey(boolean blocks);

  /**
   * De-duplicates by event id: an event whose id this subscription handled before is skipped. With
   * a transactional handler the record is written in the handler's transaction (exact); otherwise
   * right after the handler returns (a crash in between can still repeat one event).
   */
  ConsumerBuilder inbox();

  /**
   * De-duplicates by a key taken from each event (e.g. a message id header set by an upstream
   * system).
   */
  ConsumerBuilder inbox(java.util.function.Function<Event, String> dedupKey);

  /** Hooks around each handler call. */
  ConsumerBuilder hooks(ConsumerHooks hooks);

  /**
   * Member id in the consumer group, unique per subscription (default: instance id + a counter). 1
   * to 128 characters.
   */
  ConsumerBuilder id(String id);

  /**
   * Share of the subscription's active partitions relative to the other members' weights (default
   * 1; above 0 and at most 1,000). A consumer of weight 2 gets twice the partitions of one of
   * weight 1.
   */
  ConsumerBuilder weight(double weight);

  /** Told when partitions are assigned, revoked (gracefully) or lost. */
  ConsumerBuilder listener(PartitionListener listener);

  /**
   * Runs the handler on the thread that committed the events, right after the commit (default
   * false: a worker of this consumer runs it).
   *
   * <p>Applies to events of {@link Sequencing#IN_TRANSACTION} topics published through {@link
   * Boxline#inTransaction} in this process, for partitions this consumer holds and has caught up
   * on, while one of its {@link #concurrency} slots is free; everything else still goes to the
   * workers. {@code inTransaction} then returns only after the handler, its in-place retries
   * ({@link RetryPolicy}) and the cursor commit; its transaction's connection is already back in
   * the pool by then. Order per partition, at-least-once, retries and dead letters are as on a
   * worker. What it buys: no thread hand-off between the commit and the handler, so the handler
   * starts within microseconds. Transactions that a handler itself runs through {@code
   * inTransaction} hand their events to the workers (no nesting).
   */
  ConsumerBuilder handleOnCommittingThread(boolean enabled);

  /**
   * Builds and starts the consumer: it joins the subscription's group with one check-in (waiting
   * for it up to ten seconds; a database that does not answer by then is retried in the
   * background).
   *
   * @throws GroupFullException when the group policy's {@link GroupPolicy#maxMembers} consumers are
   *     in the group already
   */
  Consumer start();
}
