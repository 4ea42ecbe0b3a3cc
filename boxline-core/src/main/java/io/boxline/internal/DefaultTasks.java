package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadCodec;
import io.boxline.PublishResult;
import io.boxline.RetryPolicy;
import io.boxline.SerializationException;
import io.boxline.SubscriptionSpec;
import io.boxline.TaskContext;
import io.boxline.TaskHandler;
import io.boxline.TaskOptions;
import io.boxline.TaskSettings;
import io.boxline.TaskStats;
import io.boxline.Tasks;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.UnknownTaskPolicy;
import io.boxline.ValidationException;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/** Tasks over the log: a topic, a subscription, typed dispatch, blocking dead letters. */
final class DefaultTasks implements Tasks {
  private static final System.Logger LOG = System.getLogger(DefaultTasks.class.getName());
  private static final TopicName TOPIC_NAME = TopicName.parse(TOPIC);

  private final Boxline boxline;
  private final TaskSettings settings;
  private final TaskUnblockLoop unblockLoop;
  private final AtomicLong unknownTasks = new AtomicLong();
  private final AtomicLong unknownIgnored = new AtomicLong();
  private volatile boolean ready;

  DefaultTasks(
      Boxline boxline,
      TaskSettings settings,
      BooleanSupplier leading,
      Clock clock,
      String instanceId) {
    this.boxline = boxline;
    this.settings = settings;
    this.unblockLoop =
        settings.autoUnblockAfter() == null
            ? null
            : new TaskUnblockLoop(this::unblockOlderThan, leading, clock, instanceId, settings);
  }

  void startLoops() {
    if (unblockLoop != null) {
      unblockLoop.start();
    }
  }

  void stopLoops(Duration timeout) {
    if (unblockLoop != null) {
      unblockLoop.stop(timeout);
    }
  }

  /**
   * Creates the task topic and subscription once (idempotent, so several instances may race). The
   * retention is set only by the instance that found the topic missing, so an operator's later
   * {@code setRetention} is not undone by a restart.
   */
  private void ensure() {
    if (!ready) {
      synchronized (this) {
        if (!ready) {
          boxline.admin().createNamespace(TOPIC_NAME.namespace());
          Optional<TopicInfo> existing = boxline.admin().topic(TOPIC_NAME);
          if (existing.isPresent()) {
            int has = existing.get().partitions();
            if (has != settings.partitions()) {
              throw new ValidationException(
                  "the tasks topic '"
                      + TOPIC
                      + "' exists with "
                      + has
                      + " partitions but TaskSettings.partitions is "
                      + settings.partitions()
                      + "; a partition count cannot change (ordering keys would move):"
                      + " set TaskSettings.partitions("
                      + has
                      + ")");
            }
          } else {
            boxline.admin().createTopic(TOPIC_NAME, settings.partitions());
            boxline.admin().setRetention(TOPIC_NAME, settings.retention());
          }
          boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, TOPIC_NAME));
          ready = true;
        }
      }
    }
  }

  @Override
  public PublishResult schedule(
      Connection tx, String taskType, Object payload, TaskOptions options) {
    if (taskType == null || taskType.isBlank()) {
      throw new ValidationException("taskType must not be blank");
    }
    Objects.requireNonNull(options, "options");
    ensure();
    PayloadCodec codec = options.codec() != null ? options.codec() : settings.codec();
    return boxline
        .publisher()
        .publish(
            tx,
            OutgoingEvent.builder(TOPIC_NAME)
                .type(taskType)
                .key(options.orderingKey())
                .contentType(codec.contentType())
                .payload(codec.encode(payload))
                .idempotencyKey(options.idempotencyKey())
                .deliverAt(options.runAt())
                .build());
  }

  @Override
  public Worker worker() {
    ensure();
    return new WorkerBuilder();
  }

  @Override
  public List<DeadLetter> blocked() {
    ensure();
    return boxline.deadLetters().list(DeadLetterQuery.of(SUBSCRIPTION));
  }

  @Override
  public boolean unblock(UUID taskId) {
    ensure();
    return boxline.deadLetters().redrive(DeadLetterQuery.of(SUBSCRIPTION).eventId(taskId)) > 0;
  }

  /** The unblock loop's step: redrives up to {@code limit} tasks blocked before {@code cutoff}. */
  private int unblockOlderThan(java.time.Instant cutoff, int limit) {
    ensure();
    return boxline
        .deadLetters()
        .redrive(DeadLetterQuery.of(SUBSCRIPTION).deadBefore(cutoff).limit(limit));
  }

  @Override
  public TaskStats stats() {
    TaskUnblockLoop l = unblockLoop;
    return new TaskStats(
        unknownTasks.get(),
        unknownIgnored.get(),
        l == null ? 0 : l.runs.get(),
        l == null ? 0 : l.unblocked.get(),
        l == null ? 0 : l.errors.get());
  }

  /** One task type's handler: decodes with the worker's codec and runs with the context. */
  private interface Runner {
    void run(PayloadCodec codec, Event task, int attempt);
  }

  private final class WorkerBuilder implements Worker {
    private final Map<String, Runner> handlers = new HashMap<>();
    private final ConsumerBuilder consumer =
        boxline.consumer(SUBSCRIPTION).deadLetterBlocksKey(true).retryPolicy(RetryPolicy.DEFAULT);
    private PayloadCodec codec = settings.codec();
    private UnknownTaskPolicy unknown = UnknownTaskPolicy.BLOCK;
    private Executor executor;

    private void put(String taskType, Runner runner) {
      if (taskType == null || taskType.isBlank()) {
        throw new ValidationException("taskType must not be blank");
      }
      if (handlers.putIfAbsent(taskType, runner) != null) {
        throw new ValidationException("a handler for task type '" + taskType + "' is already set");
      }
    }

    @Override
    public <T> Worker handle(
        String taskType, Class<T> payloadType, TaskHandler<? super T> handler) {
      Objects.requireNonNull(payloadType, "payloadType");
      Objects.requireNonNull(handler, "handler");
      put(taskType, (c, task, attempt) -> handler.run(decode(c, task, payloadType), task));
      return this;
    }

    @Override
    public <T> Worker handleWithContext(
        String taskType, Class<T> payloadType, ContextTaskHandler<? super T> handler) {
      Objects.requireNonNull(payloadType, "payloadType");
      Objects.requireNonNull(handler, "handler");
      put(
          taskType,
          (c, task, attempt) ->
              handler.run(decode(c, task, payloadType), new TaskContext(task, attempt)));
      return this;
    }

    @Override
    public Worker codec(PayloadCodec c) {
      this.codec = Objects.requireNonNull(c, "codec");
      return this;
    }

    @Override
    public Worker unknownType(UnknownTaskPolicy policy) {
      this.unknown =
          Objects.requireNonNull(
              policy, "policy: use UnknownTaskPolicy.BLOCK, RETRY, IGNORE or your own");
      return this;
    }

    @Override
    public Worker retryPolicy(RetryPolicy policy) {
      consumer.retryPolicy(policy);
      return this;
    }

    @Override
    public Worker retryPolicy(String taskType, RetryPolicy policy) {
      consumer.retryPolicy(taskType, policy);
      return this;
    }

    @Override
    public Worker concurrency(int threads) {
      consumer.concurrency(threads);
      return this;
    }

    @Override
    public Worker executor(Executor e) {
      this.executor = Objects.requireNonNull(e, "executor");
      return this;
    }

    @Override
    public Worker batchSize(int batchSize) {
      consumer.batchSize(batchSize);
      return this;
    }

    @Override
    public Worker shutdownTimeout(Duration timeout) {
      consumer.shutdownTimeout(timeout);
      return this;
    }

    @Override
    public Worker parallelism(int threads) {
      consumer.parallelByKey(threads);
      return this;
    }

    @Override
    public Worker handlerTimeout(Duration timeout) {
      consumer.handlerTimeout(timeout);
      return this;
    }

    @Override
    public Worker id(String id) {
      consumer.id(id);
      return this;
    }

    @Override
    public Consumer start() {
      Map<String, Runner> byType = Map.copyOf(handlers);
      PayloadCodec c = codec;
      UnknownTaskPolicy onUnknown = unknown;
      Executor ex = executor;
      // The consumer tells the attempt number to hooks only; beforeEvent runs on the thread that
      // then calls the handler, right before it, so a thread-local carries it across.
      ThreadLocal<Integer> attempts = new ThreadLocal<>();
      return consumer
          .hooks(
              new ConsumerHooks() {
                @Override
                public void beforeEvent(Event event, int attempt) {
                  attempts.set(attempt);
                }
              })
          .handler(
              task -> {
                Integer a = attempts.get();
                // Cleared so a path that skipped the hook can never see the previous task's count.
                attempts.remove();
                int attempt = a == null ? 1 : a;
                Runner r = byType.get(task.type());
                if (r == null) {
                  onUnknown(onUnknown, task);
                } else if (ex == null) {
                  r.run(c, task, attempt);
                } else {
                  runOn(ex, () -> r.run(c, task, attempt));
                }
              })
          .start();
    }
  }

  private void onUnknown(UnknownTaskPolicy policy, Event task) {
    unknownTasks.incrementAndGet();
    try {
      policy.onUnknown(task);
    } catch (HandlerDecision d) {
      if (d.kind() == HandlerDecision.Kind.IGNORE) {
        unknownIgnored.incrementAndGet();
        LOG.log(
            Level.WARNING,
            "task {0} of type ''{1}'' dropped: no handler in this worker ({2})",
            task.id(),
            task.type(),
            d.getMessage());
      }
      throw d;
    }
  }

  private static <T> T decode(PayloadCodec codec, Event task, Class<T> type) {
    String stored = task.contentType();
    if (stored != null && !stored.equals(codec.contentType())) {
      throw new SerializationException(
          "task "
              + task.id()
              + " was encoded as '"
              + stored
              + "' but this worker decodes '"
              + codec.contentType()
              + "': give the worker the codec the task was scheduled with (Worker.codec)",
          null);
    }
    return codec.decode(task.payload(), type);
  }

  /**
   * Runs a handler on the user's executor and waits for it, so ordering and the retry decision stay
   * with the worker thread. An interrupt of the worker (handler timeout, shutdown) is passed on to
   * the executor's thread by cancelling.
   */
  private static void runOn(Executor executor, Runnable call) {
    FutureTask<Void> f = new FutureTask<>(call, null);
    executor.execute(f);
    try {
      f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new io.boxline.BoxlineException("interrupted while the task ran on the executor", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new io.boxline.BoxlineException("task failed", cause);
    }
  }
}
