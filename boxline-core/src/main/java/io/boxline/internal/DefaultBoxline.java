package io.boxline.internal;

import io.boxline.Admin;
import io.boxline.BatchHandler;
import io.boxline.Boxline;
import io.boxline.BoxlineException;
import io.boxline.BoxlineObserver;
import io.boxline.BoxlineStats;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.DeadLetters;
import io.boxline.EventHandler;
import io.boxline.JoinedTransaction;
import io.boxline.Names;
import io.boxline.NotFoundException;
import io.boxline.PartitionListener;
import io.boxline.Publisher;
import io.boxline.RemoteConsumers;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.Tasks;
import io.boxline.TransactionWork;
import io.boxline.TransactionalHandler;
import io.boxline.ValidationException;
import io.boxline.spi.Store;
import io.boxline.spi.StoreStats;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine behind {@link Boxline}. Not public: {@link Boxline#builder()} makes one through {@link
 * BoxlineSettings#newInstance()}.
 */
final class DefaultBoxline implements Boxline {
  private static final System.Logger LOG = System.getLogger(DefaultBoxline.class.getName());
  private static final Duration LOOP_STOP_TIMEOUT = Duration.ofSeconds(5);

  private final BoxlineSettings settings;
  private final Observers observers;
  private final Store store;
  private final TopicCache topics;
  private final WakeupBus bus = new WakeupBus();
  private final EventWaiters eventWaiters = new EventWaiters();
  private final RecentEvents recent = new RecentEvents();
  private final SequencerLoop sequencer;
  private final Announcer announcer;
  private final DefaultPublisher publisher;
  private final Admin admin;
  private final RemoteConsumers remoteConsumers;
  private final DeadLetters deadLetters = new DeadLettersImpl();
  private final DefaultTasks tasks;
  private final RetentionLoop retention;
  private final Set<Consumer> consumers = ConcurrentHashMap.newKeySet();

  /** The consumers' group commits of cursors: store calls, and the moves they carried. */
  private final AtomicLong cursorCommitCalls = new AtomicLong();

  private final AtomicLong cursorMovesCommitted = new AtomicLong();

  /**
   * One group commit for every consumer of this instance: one statement per moment, not per
   * subscription.
   */
  private final CursorCommitter cursorCommits;

  private final AtomicInteger consumerCounter = new AtomicInteger();
  private final Object lifecycle = new Object();
  private boolean started;
  private boolean closed;

  DefaultBoxline(BoxlineSettings settings) {
    this.settings = settings;
    this.observers = Observers.of(settings.observers());
    this.store = settings.store();
    this.cursorCommits =
        CursorCommitter.across(store::settleAcross, cursorCommitCalls, cursorMovesCommitted);
    this.topics = new TopicCache(store);
    this.admin = new DefaultAdmin(store, topics, settings.coordination());
    this.remoteConsumers =
        new RemoteMembers(
            store,
            settings.coordination(),
            topics,
            settings.clock(),
            observers,
            name -> settings.memberPolicies().getOrDefault(name, io.boxline.MemberPolicy.DEFAULT),
            eventWaiters);
    this.sequencer =
        settings.sequencer()
            ? new SequencerLoop(
                store,
                settings.instanceId(),
                settings.sequencerLease(),
                settings.sequencerBatchSize(),
                settings.sequencerIdlePoll(),
                settings.sequencerBatchSpacing(),
                bus,
                topics,
                settings.partitioner(),
                observers,
                recent)
            : null;
    this.retention =
        sequencer == null
            ? null
            : new RetentionLoop(
                store,
                settings.coordination(),
                recent::clear,
                sequencer::isLeader,
                settings.instanceId(),
                settings.retentionInterval(),
                settings.inboxRetention(),
                settings.deadLetterRetention(),
                settings.idempotencyRetention());
    this.tasks =
        new DefaultTasks(
            this,
            settings.tasks(),
            sequencer == null ? () -> false : sequencer::isLeader,
            settings.clock(),
            settings.instanceId());
    this.announcer =
        new Announcer(store, bus, recent, settings.instanceId(), settings.producerNotifyInterval());
    this.publisher =
        new DefaultPublisher(
            store,
            topics,
            settings.eventTypes(),
            settings.partitioner(),
            settings.maxPayloadBytes(),
            sequencer,
            settings.producerNotifyInterval().toNanos(),
            observers,
            settings.interceptors(),
            announcer);
  }

  @Override
  public Boxline start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new BoxlineException("this Boxline instance is closed; build a new one");
      }
      if (started) {
        return this;
      }
      if (settings.migrate()) {
        store.migrate();
      }
      if (sequencer != null) {
        bus.add(sequencer);
      }
      bus.add(eventWaiters);
      boolean listening = store.listen(bus.remote());
      eventWaiters.hearsOtherProcesses(listening);
      announcer.start();
      if (sequencer != null) {
        sequencer.start();
        retention.start();
      }
      started = true;
      // After started = true: the loop's first run may call tasks(), which requires a started
      // instance.
      tasks.startLoops();
      LOG.log(
          Level.INFO,
          "Boxline {0} started on {1} (sequencer candidate: {2}, database wake-ups: {3})",
          settings.instanceId(),
          store.describe(),
          sequencer != null,
          listening);
      observers.started(this);
      return this;
    }
  }

  private void requireStarted() {
    synchronized (lifecycle) {
      if (!started || closed) {
        throw new BoxlineException(
            closed ? "this Boxline instance is closed" : "call start() on Boxline before using it");
      }
    }
  }

  @Override
  public Publisher publisher() {
    requireStarted();
    return publisher;
  }

  @Override
  public Admin admin() {
    requireStarted();
    return admin;
  }

  /** Looks a subscription up by name; a name that could not exist is refused with its rule. */
  private Optional<SubscriptionInfo> findSubscription(String name) {
    return store.findSubscription(Names.requireSubscriptionName(name));
  }

  @Override
  public ConsumerBuilder consumer(String subscription) {
    requireStarted();
    SubscriptionInfo info =
        findSubscription(subscription)
            .orElseThrow(
                () ->
                    new NotFoundException(
                        "subscription '"
                            + subscription
                            + "' does not exist; create it with admin().createSubscription(...)"));
    return new Builder(info);
  }

  @Override
  public <T> T inTransaction(TransactionWork<T> work) {
    requireStarted();
    return TransactionScope.run(store::openTransaction, publisher, work);
  }

  @Override
  public JoinedTransaction join(Connection tx) {
    requireStarted();
    DefaultPublisher.checkConnection(tx);
    return new JoinedScope(TransactionScope.join(tx), publisher);
  }

  @Override
  public Tasks tasks() {
    requireStarted();
    return tasks;
  }

  @Override
  public RemoteConsumers remoteConsumers() {
    requireStarted();
    return remoteConsumers;
  }

  @Override
  public DeadLetters deadLetters() {
    requireStarted();
    return deadLetters;
  }

  @Override
  public BoxlineStats stats() {
    StoreStats storeStats = store.stats();
    return new BoxlineStats(
        sequencer != null && sequencer.isLeader(),
        sequencer == null ? 0 : sequencer.batches.get(),
        sequencer == null ? 0 : sequencer.events.get(),
        sequencer == null ? 0 : sequencer.errors.get(),
        bus.received.get(),
        retention == null ? 0 : retention.runs.get(),
        retention == null ? 0 : retention.deleted.get(),
        recent.hits.get(),
        recent.misses.get(),
        cursorCommitCalls.get(),
        cursorMovesCommitted.get(),
        storeStats.outboxVacuums(),
        storeStats.outboxVacuumFailures(),
        storeStats.longTransactionWarnings(),
        announcer.announcements.get(),
        announcer.looks.get(),
        announcer.errors.get(),
        sequencer == null ? 0 : sequencer.setAside.get(),
        retention == null ? 0 : retention.segmentsDropped.get(),
        retention == null ? 0 : retention.segmentEvents.get(),
        storeStats.replicaReads(),
        storeStats.primaryFallbacks());
  }

  @Override
  public BoxlineObserver observer() {
    return observers;
  }

  @Override
  public String instanceId() {
    return settings.instanceId();
  }

  @Override
  public void close() {
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
    }
    // Every step runs even when one before it fails: a consumer that cannot stop must not leave
    // the loops running or the store open.
    Closer closer = new Closer("Boxline " + settings.instanceId());
    closer.step("observers", () -> observers.closing(this));
    closer.step("waiting fetches", eventWaiters::resynchronize); // they fetch once more and answer
    for (Consumer c : List.copyOf(consumers)) {
      closer.step("consumer " + c.subscription(), c::close);
    }
    closer.step("task loops", () -> tasks.stopLoops(LOOP_STOP_TIMEOUT));
    if (sequencer != null) {
      closer.step("retention", () -> retention.stop(LOOP_STOP_TIMEOUT));
      closer.step("sequencer", () -> sequencer.stop(LOOP_STOP_TIMEOUT));
    }
    closer.step("announcer", () -> announcer.stop(LOOP_STOP_TIMEOUT));
    closer.step("coordination", () -> settings.coordination().close());
    closer.step("store", store::close);
    LOG.log(Level.INFO, "Boxline {0} closed", settings.instanceId());
    closer.finish();
  }

  private final class DeadLettersImpl implements DeadLetters {
    private long subscriptionId(DeadLetterQuery q) {
      return findSubscription(q.subscription())
          .orElseThrow(
              () -> new NotFoundException("subscription '" + q.subscription() + "' does not exist"))
          .id();
    }

    @Override
    public List<DeadLetter> list(DeadLetterQuery query) {
      return store.deadLetters(subscriptionId(query), query);
    }

    @Override
    public List<io.boxline.DeadLetterReason> reasons(String subscription, int limit) {
      if (limit < 1 || limit > 1000) {
        throw new io.boxline.ValidationException("limit must be between 1 and 1000, got " + limit);
      }
      return store.deadLetterReasons(subscriptionId(DeadLetterQuery.of(subscription)), limit);
    }

    @Override
    public int redrive(DeadLetterQuery query) {
      int n = store.redriveDeadLetters(subscriptionId(query), query);
      if (n > 0) {
        bus.resynchronize(); // local consumers look for due retries at once
      }
      return n;
    }

    @Override
    public int discard(DeadLetterQuery query) {
      int n = store.discardDeadLetters(subscriptionId(query), query);
      if (n > 0) {
        bus.resynchronize(); // a discarded blocking dead letter unblocks its key
      }
      return n;
    }
  }

  private final class Builder implements ConsumerBuilder {
    private final SubscriptionInfo subscription;
    private EventHandler handler;
    private BatchHandler batchHandler;
    private TransactionalHandler txHandler;
    private io.boxline.TransactionRunner txRunner;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private int concurrency = DEFAULT_CONCURRENCY;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private final Map<String, RetryPolicy> typePolicies = new HashMap<>();
    private boolean deadLetterBlocksKey;
    private ConsumerHooks hooks = ConsumerHooks.NONE;
    private java.util.function.Function<io.boxline.Event, String> inboxKey;
    private String id;
    private double weight = 1;
    private PartitionListener listener = new PartitionListener() {};
    private boolean onCommittingThread;
    private Duration handlerTimeout;
    private Duration hardShutdownTimeout = DEFAULT_HARD_SHUTDOWN_TIMEOUT;
    private java.util.concurrent.Executor executor;
    private int keyConcurrency;

    Builder(SubscriptionInfo subscription) {
      this.subscription = subscription;
    }

    @Override
    public ConsumerBuilder handler(EventHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    @Override
    public ConsumerBuilder batchHandler(BatchHandler handler) {
      this.batchHandler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    @Override
    public ConsumerBuilder transactionalHandler(TransactionalHandler handler) {
      this.txHandler = Objects.requireNonNull(handler, "handler");
      this.txRunner = null;
      return this;
    }

    @Override
    public ConsumerBuilder transactionalHandler(
        TransactionalHandler handler, io.boxline.TransactionRunner runner) {
      this.txHandler = Objects.requireNonNull(handler, "handler");
      this.txRunner = Objects.requireNonNull(runner, "runner");
      return this;
    }

    @Override
    public ConsumerBuilder parallelByKey(int threads) {
      if (threads < 2 || threads > 256) {
        throw new ValidationException("parallelByKey needs 2 to 256 threads, got " + threads);
      }
      this.keyConcurrency = threads;
      return this;
    }

    @Override
    public ConsumerBuilder handlerTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.compareTo(Duration.ofMillis(10)) < 0
          || timeout.compareTo(Duration.ofDays(1)) > 0) {
        throw new ValidationException(
            "handlerTimeout must be between 10 ms and 1 day, got " + timeout);
      }
      this.handlerTimeout = timeout;
      return this;
    }

    @Override
    public ConsumerBuilder batchSize(int batchSize) {
      if (batchSize < 1 || batchSize > 10_000) {
        throw new ValidationException("batchSize must be between 1 and 10000, got " + batchSize);
      }
      this.batchSize = batchSize;
      return this;
    }

    @Override
    public ConsumerBuilder concurrency(int threads) {
      if (threads < 1 || threads > 256) {
        throw new ValidationException("concurrency must be between 1 and 256, got " + threads);
      }
      this.concurrency = threads;
      return this;
    }

    @Override
    public ConsumerBuilder shutdownTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative()) {
        throw new ValidationException("shutdownTimeout must be zero or positive, got " + timeout);
      }
      this.shutdownTimeout = timeout;
      return this;
    }

    @Override
    public ConsumerBuilder hardShutdownTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative()) {
        throw new ValidationException(
            "hardShutdownTimeout must be zero or positive, got " + timeout);
      }
      this.hardShutdownTimeout = timeout;
      return this;
    }

    @Override
    public ConsumerBuilder executor(java.util.concurrent.Executor executor) {
      if (executor == null) {
        throw new ValidationException(
            "executor must not be null; leave it out for the consumer's own threads");
      }
      this.executor = executor;
      return this;
    }

    @Override
    public ConsumerBuilder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    @Override
    public ConsumerBuilder retryPolicy(String eventType, RetryPolicy policy) {
      if (eventType == null || eventType.isBlank()) {
        throw new ValidationException("eventType must not be blank");
      }
      typePolicies.put(eventType, Objects.requireNonNull(policy, "policy"));
      return this;
    }

    @Override
    public ConsumerBuilder deadLetterBlocksKey(boolean blocks) {
      this.deadLetterBlocksKey = blocks;
      return this;
    }

    @Override
    public ConsumerBuilder inbox() {
      return inbox(e -> e.id().toString());
    }

    @Override
    public ConsumerBuilder inbox(java.util.function.Function<io.boxline.Event, String> dedupKey) {
      this.inboxKey = Objects.requireNonNull(dedupKey, "dedupKey");
      return this;
    }

    @Override
    public ConsumerBuilder hooks(ConsumerHooks hooks) {
      this.hooks = Objects.requireNonNull(hooks, "hooks");
      return this;
    }

    @Override
    public ConsumerBuilder id(String id) {
      if (id == null || id.isBlank() || id.length() > 128) {
        throw new ValidationException(
            "consumer id must be 1 to 128 non-blank characters, got '" + id + "'");
      }
      Names.requireStorable("consumer id", id, 128);
      this.id = id;
      return this;
    }

    @Override
    public ConsumerBuilder weight(double weight) {
      if (!(weight > 0 && weight <= 1000)) {
        throw new ValidationException("weight must be above 0 and at most 1000, got " + weight);
      }
      this.weight = weight;
      return this;
    }

    @Override
    public ConsumerBuilder listener(PartitionListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    @Override
    public ConsumerBuilder handleOnCommittingThread(boolean enabled) {
      this.onCommittingThread = enabled;
      return this;
    }

    @Override
    public Consumer start() {
      int handlers =
          (handler != null ? 1 : 0) + (batchHandler != null ? 1 : 0) + (txHandler != null ? 1 : 0);
      if (handlers != 1) {
        throw new ValidationException(
            "consumer of '"
                + subscription.name()
                + "' needs exactly one of handler(...), batchHandler(...) and transactionalHandler(...)");
      }
      if (keyConcurrency > 1 && handler == null) {
        throw new ValidationException(
            "consumer of '"
                + subscription.name()
                + "': parallelByKey(...) works with handler(...) only, not with batchHandler(...) or"
                + " transactionalHandler(...)");
      }
      String consumerId =
          id != null ? id : settings.instanceId() + "-c" + consumerCounter.incrementAndGet();
      DefaultConsumer[] self = new DefaultConsumer[1];
      DefaultConsumer c =
          new DefaultConsumer(
              store,
              settings.coordination(),
              topics,
              bus,
              recent,
              subscription,
              new ConsumerSettings(
                  consumerId,
                  weight,
                  handler,
                  batchHandler,
                  txHandler,
                  txRunner,
                  observers.listener(subscription.name(), consumerId, listener),
                  batchSize,
                  concurrency,
                  shutdownTimeout,
                  retryPolicy,
                  Map.copyOf(typePolicies),
                  deadLetterBlocksKey,
                  observers.hooks(subscription.name(), hooks),
                  inboxKey,
                  onCommittingThread,
                  observers,
                  settings.clock(),
                  handlerTimeout,
                  keyConcurrency,
                  hardShutdownTimeout,
                  executor),
              cursorCommits,
              () -> consumers.remove(self[0]));
      self[0] = c;
      consumers.add(c);
      return c.start();
    }
  }
}
