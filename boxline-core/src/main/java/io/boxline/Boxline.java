package io.boxline;

import io.boxline.internal.BoxlineSettings;
import io.boxline.internal.DefaultJsonCodec;
import io.boxline.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One Boxline instance per application and database: publishes, sequences, and runs consumers.
 *
 * <pre>{@code
 * Boxline boxline = Boxline.builder()
 *     .store(JdbcStore.builder(dataSource).build())
 *     .eventTypes(types)
 *     .build()
 *     .start();
 * }</pre>
 *
 * <p>{@link #start()} applies schema migrations (under a database lock) and starts the background
 * loops: the sequencer candidate ({@code boxline-sequencer}) and the wake-up listener ({@code
 * boxline-listener}). {@link #close()} stops consumers first, then the loops, each with a bounded
 * wait.
 */
public interface Boxline extends AutoCloseable {

  static Builder builder() {
    return new Builder();
  }

  /** Migrates the schema and starts background loops. Idempotent. Returns this. */
  Boxline start();

  Publisher publisher();

  Admin admin();

  /** Starts configuring a consumer of an existing subscription. */
  ConsumerBuilder consumer(String subscription);

  /**
   * Runs {@code work} in a new transaction on the store's data source and commits it; rolls back
   * and rethrows on failure. Events published inside are handed to the sequencer the moment the
   * commit returns, which is the lowest-latency path when producer and sequencer share a JVM.
   */
  <T> T inTransaction(TransactionWork<T> work);

  /**
   * Joins a transaction that the application's framework runs on {@code tx} (auto-commit off), so
   * that publishing on it behaves as inside {@link #inTransaction}; the framework reports the
   * transaction's course to the returned object. Framework integrations (boxline-spring) call this;
   * applications publish through them.
   *
   * @throws ConnectionStateException when {@code tx} is closed, in auto-commit mode, or joined
   *     already
   */
  JoinedTransaction join(java.sql.Connection tx);

  /**
   * Group members that fetch and settle events through an API instead of running a Java handler
   * (the server's HTTP consumers).
   */
  RemoteConsumers remoteConsumers();

  /** Find, inspect, redrive and discard events that subscriptions gave up on. */
  DeadLetters deadLetters();

  /** Tasks scheduled in a transaction and run by typed handlers (the task-queue model). */
  Tasks tasks();

  BoxlineStats stats();

  /** This instance's id (sequencer lease owner, default consumer id prefix). */
  String instanceId();

  /**
   * The observers registered with {@link Builder#observer}, as one: each call goes to every one of
   * them in registration order, and what an observer throws is logged and dropped. With none
   * registered the calls do nothing. Meant for modules that report what the engine cannot see
   * itself, such as relays calling {@link BoxlineObserver#sinkDelivered}; the engine makes the
   * other calls on its own.
   */
  default BoxlineObserver observer() {
    return new BoxlineObserver() {};
  }

  /** Stops consumers, then the sequencer and listener. Safe to call twice. */
  @Override
  void close();

  /**
   * Settings for a {@link Boxline}. Each setter documents its default; {@link #build()} validates.
   */
  final class Builder {
    /** Default largest payload accepted by publish. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

    /** Default events moved from outbox to log per sequencer transaction. */
    public static final int DEFAULT_SEQUENCER_BATCH_SIZE = 2000;

    /**
     * Default sequencer lease time-to-live: a dead sequencer is replaced within about 1⅓ of this.
     */
    public static final Duration DEFAULT_SEQUENCER_LEASE = Duration.ofSeconds(9);

    /**
     * Default longest time the sequencer sleeps without a wake-up before looking at the outbox (one
     * statement that also renews its lease).
     */
    public static final Duration DEFAULT_SEQUENCER_IDLE_POLL = Duration.ofSeconds(3);

    /**
     * Default shortest time from the end of one sequencer batch to the start of the next, unless a
     * batch came back full (then it drains at once).
     */
    public static final Duration DEFAULT_SEQUENCER_BATCH_SPACING = Duration.ofMillis(10);

    /** Default shortest gap between two cross-process wake-ups (NOTIFY) sent by one publisher. */
    public static final Duration DEFAULT_PRODUCER_NOTIFY_INTERVAL = Duration.ofMillis(2);

    /** Default time between two retention runs (run by the sequencer leader only). */
    public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofMinutes(1);

    /** Default age after which inbox entries are forgotten. */
    public static final Duration DEFAULT_INBOX_RETENTION = Duration.ofDays(7);

    /** Default age after which dead letters are deleted. */
    public static final Duration DEFAULT_DEAD_LETTER_RETENTION = Duration.ofDays(30);

    /** Default age after which idempotency keys of published events are forgotten. */
    public static final Duration DEFAULT_IDEMPOTENCY_RETENTION = Duration.ofDays(7);

    private Store store;
    private io.boxline.spi.CoordinationStore coordination;
    private EventTypes eventTypes = EventTypes.empty();
    private Partitioner partitioner = Partitioner.kafkaCompatible();
    private String instanceId;
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
    private boolean sequencer = true;
    private int sequencerBatchSize = DEFAULT_SEQUENCER_BATCH_SIZE;
    private Duration sequencerLease = DEFAULT_SEQUENCER_LEASE;
    private Duration sequencerIdlePoll = DEFAULT_SEQUENCER_IDLE_POLL;
    private Duration sequencerBatchSpacing = DEFAULT_SEQUENCER_BATCH_SPACING;
    private Duration producerNotifyInterval = DEFAULT_PRODUCER_NOTIFY_INTERVAL;
    private boolean migrate = true;
    private Clock clock = Clock.systemUTC();
    private Duration retentionInterval = DEFAULT_RETENTION_INTERVAL;
    private Duration inboxRetention = DEFAULT_INBOX_RETENTION;
    private Duration deadLetterRetention = DEFAULT_DEAD_LETTER_RETENTION;
    private Duration idempotencyRetention = DEFAULT_IDEMPOTENCY_RETENTION;
    private TaskSettings tasks = TaskSettings.defaults();
    private final java.util.List<BoxlineObserver> observers = new java.util.ArrayList<>();
    private final java.util.List<PublishInterceptor> interceptors = new java.util.ArrayList<>();
    private final Map<String, MemberPolicy> memberPolicies = new java.util.HashMap<>();

    private Builder() {}

    /** Where events live (required), e.g. {@code JdbcStore.builder(dataSource).build()}. */
    public Builder store(Store store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * Where consumer groups keep membership and leases (default: the store's own database). {@link
     * Coordination#inMemory()} for one JVM; {@code EtcdCoordination} from {@code boxline-etcd};
     * {@code RedisCoordination} from {@code boxline-redis}. Cursors always stay in the database.
     * Closed with Boxline.
     */
    public Builder coordination(io.boxline.spi.CoordinationStore coordination) {
      this.coordination = Objects.requireNonNull(coordination, "coordination");
      return this;
    }

    /** Registry of typed events (default: empty, only raw events can be published). */
    public Builder eventTypes(EventTypes eventTypes) {
      this.eventTypes = Objects.requireNonNull(eventTypes, "eventTypes");
      return this;
    }

    /** Key → partition mapping (default: Kafka-compatible murmur2). */
    public Builder partitioner(Partitioner partitioner) {
      this.partitioner = Objects.requireNonNull(partitioner, "partitioner");
      return this;
    }

    /** Instance id (default: host name, process id and a random suffix). 1 to 128 characters. */
    public Builder instanceId(String instanceId) {
      this.instanceId = instanceId;
      return this;
    }

    /** Largest payload accepted, in bytes, 1 to 64 MiB (default 1 MiB). */
    public Builder maxPayloadBytes(int maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
      return this;
    }

    /**
     * Whether this instance competes for the sequencer lease (default true). Turn it off in
     * producer-only processes when other instances run the sequencer; exactly one instance
     * sequences at any time.
     */
    public Builder sequencer(boolean enabled) {
      this.sequencer = enabled;
      return this;
    }

    /** Events per sequencer transaction, 1 to 50,000 (default 2,000). */
    public Builder sequencerBatchSize(int size) {
      this.sequencerBatchSize = size;
      return this;
    }

    /** Sequencer lease time-to-live, 1 s to 10 min (default 9 s). */
    public Builder sequencerLease(Duration ttl) {
      this.sequencerLease = Objects.requireNonNull(ttl, "ttl");
      return this;
    }

    /**
     * Safety poll of the outbox when no wake-up arrives, 10 ms to 1 min (default 3 s; never longer
     * than a third of the lease TTL, since the same statement renews the lease).
     */
    public Builder sequencerIdlePoll(Duration interval) {
      this.sequencerIdlePoll = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /**
     * The longest pause between two sequencer batches under load, 0 to 100 ms (default 10 ms).
     * After a batch of n events that was not full, the next batch waits (n - 1) twentieths of this
     * (0.5 ms per event by default; all of it from 21 events on) after the end of the last; a full
     * batch drains again at once. The commits of that pause travel in one batch: one statement, one
     * wake-up and one group commit of cursors instead of one each, so heavy load costs less per
     * event. After a batch of one event (commits coming one at a time, a quiet system) nothing is
     * held back, and a publish that finds the sequencer idle is sequenced at once: the spacing
     * costs latency only under load, and at most this much.
     */
    public Builder sequencerBatchSpacing(Duration spacing) {
      this.sequencerBatchSpacing = Objects.requireNonNull(spacing, "spacing");
      return this;
    }

    /**
     * Shortest gap between two NOTIFYs a publisher adds to its transactions when the sequencer runs
     * in another process (default 2 ms). Bounds the commit serialisation that a NOTIFY in every
     * transaction would cause.
     */
    public Builder producerNotifyInterval(Duration interval) {
      this.producerNotifyInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /**
     * Whether {@link Boxline#start()} applies migrations (default true); false expects the schema
     * in place.
     */
    public Builder migrate(boolean migrate) {
      this.migrate = migrate;
      return this;
    }

    /**
     * Time between two retention runs, 100 ms to 1 day (default 1 min); only the sequencer leader
     * runs them.
     */
    public Builder retentionInterval(Duration interval) {
      this.retentionInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** Age after which inbox entries are forgotten, 1 s to 10 years (default 7 days). */
    public Builder inboxRetention(Duration age) {
      this.inboxRetention = Objects.requireNonNull(age, "age");
      return this;
    }

    /** Age after which dead letters are deleted, 1 s to 10 years (default 30 days). */
    public Builder deadLetterRetention(Duration age) {
      this.deadLetterRetention = Objects.requireNonNull(age, "age");
      return this;
    }

    /**
     * Age after which a publish idempotency key is forgotten (a later publish with it stores a new
     * event), 1 s to 10 years (default 7 days).
     */
    public Builder idempotencyRetention(Duration age) {
      this.idempotencyRetention = Objects.requireNonNull(age, "age");
      return this;
    }

    /**
     * How the remote members of {@code subscription} (the server's HTTP consumers) are retried and
     * dead-lettered: retry policies, per-type policies, key blocking and hooks, decided by the same
     * policy code as a Java consumer's (default {@link MemberPolicy#DEFAULT}). May be called once
     * per subscription.
     */
    public Builder memberPolicy(String subscription, MemberPolicy policy) {
      Names.requireSubscriptionName(subscription);
      if (memberPolicies.putIfAbsent(subscription, Objects.requireNonNull(policy, "policy"))
          != null) {
        throw new ValidationException(
            "the member policy of subscription '" + subscription + "' is set twice");
      }
      return this;
    }

    /**
     * Settings of {@link Boxline#tasks()}: the tasks topic's partitions and retention, the payload
     * codec, automatic unblocking (default {@link TaskSettings#defaults()}).
     */
    public Builder tasks(TaskSettings settings) {
      this.tasks = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Adds an observer of this instance's publishes, deliveries, failures, partition changes and
     * sequencer batches, e.g. {@code BoxlineMetrics} from {@code boxline-micrometer} (default:
     * none; with none, Boxline makes no observer calls). May be called several times; every
     * observer sees every call, in registration order.
     */
    public Builder observer(BoxlineObserver observer) {
      observers.add(Objects.requireNonNull(observer, "observer"));
      return this;
    }

    /**
     * Adds an interceptor that adds headers to every event before it is written, in the publishing
     * thread, e.g. the trace context ({@code BoxlineTracing} from {@code boxline-opentelemetry})
     * (default: none). May be called several times; interceptors run in registration order.
     */
    public Builder publishInterceptor(PublishInterceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /**
     * The clock consumers read for wall-clock decisions: when a retry is due (the next attempt
     * times recorded on parked events are computed and compared with it), when a delayed event is
     * due (default: the UTC system clock). Intervals use {@code System.nanoTime()}; events, and the
     * failure and dead-letter times of parked events ({@link DeadLetter#firstFailedAt}, {@link
     * DeadLetter#deadAt}), are stamped by the database's clock.
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Boxline build() {
      if (store == null) {
        throw new ValidationException(
            "Boxline.builder() needs a store: .store(JdbcStore.builder(dataSource).build())");
      }
      requireRange("maxPayloadBytes", maxPayloadBytes, 1, 64 * 1024 * 1024);
      requireRange("sequencerBatchSize", sequencerBatchSize, 1, 50_000);
      requireRange("sequencerLease", sequencerLease, Duration.ofSeconds(1), Duration.ofMinutes(10));
      requireRange(
          "sequencerIdlePoll", sequencerIdlePoll, Duration.ofMillis(10), Duration.ofMinutes(1));
      requireRange(
          "sequencerBatchSpacing", sequencerBatchSpacing, Duration.ZERO, Duration.ofMillis(100));
      requireRange(
          "producerNotifyInterval", producerNotifyInterval, Duration.ZERO, Duration.ofSeconds(10));
      requireRange(
          "retentionInterval", retentionInterval, Duration.ofMillis(100), Duration.ofDays(1));
      Duration tenYears = Duration.ofDays(3653);
      requireRange("inboxRetention", inboxRetention, Duration.ofSeconds(1), tenYears);
      requireRange("deadLetterRetention", deadLetterRetention, Duration.ofSeconds(1), tenYears);
      requireRange("idempotencyRetention", idempotencyRetention, Duration.ofSeconds(1), tenYears);
      String id = instanceId;
      if (id == null) {
        id = defaultInstanceId();
      } else if (id.isBlank() || id.length() > 128) {
        throw new ValidationException(
            "instanceId must be 1 to 128 non-blank characters, got '" + id + "'");
      }
      Names.requireStorable("instanceId", id, 128);
      java.util.List<String> jsonTypes = eventTypes.typeNamesWithCodec(PayloadCodec.json());
      if (!jsonTypes.isEmpty()) {
        // Fail at start-up, not at the first publish, when no JSON codec can be found.
        DefaultJsonCodec.INSTANCE.require(
            "encode the event types registered without a codec of their own " + jsonTypes);
      }
      return new BoxlineSettings(
              store,
              coordination != null ? coordination : store.coordination(),
              eventTypes,
              partitioner,
              id,
              maxPayloadBytes,
              sequencer,
              sequencerBatchSize,
              sequencerLease,
              sequencerIdlePoll,
              sequencerBatchSpacing,
              producerNotifyInterval,
              retentionInterval,
              inboxRetention,
              deadLetterRetention,
              idempotencyRetention,
              migrate,
              clock,
              java.util.List.copyOf(observers),
              java.util.List.copyOf(interceptors),
              tasks,
              Map.copyOf(memberPolicies))
          .newInstance();
    }

    private static void requireRange(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new ValidationException(
            name + " must be between " + min + " and " + max + ", got " + value);
      }
    }

    private static void requireRange(String name, Duration value, Duration min, Duration max) {
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new ValidationException(
            name + " must be between " + min + " and " + max + ", got " + value);
      }
    }

    private static String defaultInstanceId() {
      return io.boxline.internal.ProcessInfo.HOST
          + "-"
          + ProcessHandle.current().pid()
          + "-"
          + UUID.randomUUID().toString().substring(0, 8);
    }
  }
}
