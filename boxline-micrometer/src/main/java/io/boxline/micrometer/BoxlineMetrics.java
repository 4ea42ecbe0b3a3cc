package io.boxline.micrometer;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.Event;
import io.boxline.FailureCounts;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer metrics of one {@link Boxline} instance. Register it as an observer; it binds itself
 * when Boxline starts and stops its collector when Boxline closes:
 *
 * <pre>{@code
 * Boxline boxline = Boxline.builder()
 *     .store(JdbcStore.builder(dataSource).build())
 *     .observer(BoxlineMetrics.builder(meterRegistry).build())
 *     .build()
 *     .start();
 * }</pre>
 *
 * <p>Counters and timers (published, handled, failed, retried, dead-lettered events, handler and
 * sequencer durations, partition changes) count what this instance does, on every instance. Gauges
 * that need a query (backlog and lag per subscription and partition, outbox backlog) are collected
 * by one instance only, the current sequencer leader, every {@link Builder#statsInterval
 * statsInterval} on a {@code boxline-metrics-<instance>} thread; the other instances do not run the
 * query and do not register those gauges (an instance that loses the lead removes them), so summing
 * a gauge over instances never counts a partition twice. Every metric is listed in {@code
 * docs/metrics.md}.
 *
 * <p>One {@code BoxlineMetrics} per Boxline instance. Relays report sink latency through {@link
 * #sinkDelivered}.
 */
public final class BoxlineMetrics implements BoxlineObserver {
  private static final System.Logger LOG = System.getLogger(BoxlineMetrics.class.getName());

  /** Default time between two collections of the query-based gauges. */
  public static final Duration DEFAULT_STATS_INTERVAL = Duration.ofSeconds(15);

  /** Longest wait for the collector thread when Boxline closes. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

  private final MeterRegistry registry;
  private final Duration statsInterval;
  private final boolean partitionGauges;

  private final Map<TopicName, Counter> published = new ConcurrentHashMap<>();
  private final Counter sequencedEvents;
  private final Timer sequencerBatches;
  private final Map<String, SubscriptionMeters> subscriptions = new ConcurrentHashMap<>();
  private final Map<String, Map<TopicName, SinkMeters>> sinks = new ConcurrentHashMap<>();

  private final Object lock = new Object();
  private Boxline boxline;
  private Thread collector;
  private Gauge leaderGauge;
  private final List<Meter> statsMeters = new java.util.ArrayList<>();
  private volatile boolean running;

  /** Query-based gauges this instance registered, by (subscription, topic, partition). */
  private final Map<GaugeKey, LagGauges> lagGauges = new HashMap<>();

  private LagGauges outboxGauges;

  /** Per subscription: events set aside (retrying, waiting behind their key, dead). */
  private final Map<String, FailureGauges> failureGauges = new HashMap<>();

  private boolean lagUnsupported;
  private boolean outboxUnsupported;
  private boolean lastTickFailed;
  private final AtomicLong ticks = new AtomicLong();
  private final AtomicLong collections = new AtomicLong();

  private BoxlineMetrics(Builder b) {
    this.registry = b.registry;
    this.statsInterval = b.statsInterval;
    this.partitionGauges = b.partitionGauges;
    this.sequencedEvents =
        Counter.builder("boxline.sequencer.events")
            .description("Committed events this instance's sequencer moved from outbox to log")
            .baseUnit("events")
            .register(registry);
    this.sequencerBatches =
        Timer.builder("boxline.sequencer.batch.duration")
            .description("Duration of sequencer transactions that moved at least one event")
            .register(registry);
  }

  /** Starts configuring metrics that register on {@code registry}. */
  public static Builder builder(MeterRegistry registry) {
    return new Builder(registry);
  }

  // ------------------------------------------------------------------ lifecycle

  @Override
  public void started(Boxline boxline) {
    synchronized (lock) {
      if (this.boxline != null) {
        throw new IllegalStateException(
            "this BoxlineMetrics is already bound to Boxline "
                + this.boxline.instanceId()
                + "; build one BoxlineMetrics per Boxline instance");
      }
      this.boxline = boxline;
      leaderGauge =
          Gauge.builder(
                  "boxline.sequencer.leader", boxline, b -> b.stats().sequencerLeader() ? 1 : 0)
              .description("1 while this instance holds the sequencer lease (and collects gauges)")
              .strongReference(true)
              .register(registry);
      for (boolean hit : new boolean[] {true, false}) {
        statsMeters.add(
            FunctionCounter.builder(
                    "boxline.handover",
                    boxline,
                    b -> hit ? b.stats().handOverHits() : b.stats().handOverMisses())
                .tag("result", hit ? "hit" : "miss")
                .description(
                    "consumer batches taken from the sequencer's in-memory hand-over (hit) or read"
                        + " from the log because the hand-over did not hold them (miss)")
                .register(registry));
      }
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.cursor.commit.calls", boxline, b -> b.stats().cursorCommitCalls())
              .description(
                  "store calls of the consumers' group commit of cursor moves; the moves per call"
                      + " are boxline.cursor.commit.moves divided by this")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.cursor.commit.moves", boxline, b -> b.stats().cursorMovesCommitted())
              .description("cursor moves carried by those calls (moved or refused)")
              .register(registry));
      for (boolean ok : new boolean[] {true, false}) {
        statsMeters.add(
            FunctionCounter.builder(
                    "boxline.outbox.vacuums",
                    boxline,
                    b -> ok ? b.stats().outboxVacuums() : b.stats().outboxVacuumFailures())
                .tag("result", ok ? "ok" : "failed")
                .description(
                    "vacuums of the outbox started by this instance's sequencer (PostgreSQL); a"
                        + " failed one is logged and sequencing slows until one succeeds")
                .register(registry));
      }
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.long.transaction.warnings",
                  boxline,
                  b -> b.stats().longTransactionWarnings())
              .description(
                  "warnings about a transaction open so long that the outbox cannot be vacuumed"
                      + " and sequencing slows (PostgreSQL, at most one per 5 minutes)")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder("boxline.retention.runs", boxline, b -> b.stats().retentionRuns())
              .description("retention runs made by this instance (while it leads the sequencer)")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.retention.deleted", boxline, b -> b.stats().retentionDeleted())
              .description(
                  "rows those runs deleted: events past retention, old inbox keys, dead letters and"
                      + " idempotency keys")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.retention.log.segments.dropped",
                  boxline,
                  b -> b.stats().logSegmentsDropped())
              .description(
                  "whole time segments of the log those runs dropped instead of deleting their"
                      + " events row by row (PostgreSQL)")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.announcer.announcements", boxline, b -> b.stats().announcements())
              .description(
                  "announcements to other processes of events published here to IN_TRANSACTION"
                      + " topics (a NOTIFY, or a wake-all where the store polls)")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.announcer.looks", boxline, b -> b.stats().announcerLooks())
              .description(
                  "reads of partition heads for IN_TRANSACTION events whose commit Boxline could"
                      + " not see (plain publish(connection, ...))")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.announcer.errors", boxline, b -> b.stats().announcerErrors())
              .description("announcer steps that failed (logged and retried)")
              .register(registry));
      statsMeters.add(
          FunctionCounter.builder(
                  "boxline.sequencer.set.aside", boxline, b -> b.stats().outboxRowsSetAside())
              .description(
                  "outbox rows moved to outbox_rejected because their topic or partition does not"
                      + " exist (written by hand; logged)")
              .register(registry));
      running = true;
      collector = new Thread(this::collect, "boxline-metrics-" + boxline.instanceId());
      collector.setDaemon(true);
      collector.start();
    }
  }

  @Override
  public void closing(Boxline boxline) {
    Thread t;
    synchronized (lock) {
      running = false;
      lock.notifyAll();
      t = collector;
    }
    if (t != null) {
      try {
        t.join(STOP_TIMEOUT.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        t.interrupt();
        LOG.log(Level.WARNING, "{0} did not stop within {1}", t.getName(), STOP_TIMEOUT);
      }
    }
    synchronized (lock) {
      removeQueryGauges();
      if (leaderGauge != null) {
        registry.remove(leaderGauge);
        leaderGauge = null;
      }
      statsMeters.forEach(registry::remove);
      statsMeters.clear();
    }
  }

  private void collect() {
    while (running) {
      ticks.incrementAndGet();
      try {
        tick();
        lastTickFailed = false;
      } catch (RuntimeException e) {
        if (!running) {
          return;
        }
        // Logged once per run of failures, so a database outage does not flood the log.
        if (!lastTickFailed) {
          LOG.log(Level.WARNING, "could not collect Boxline gauges; retrying every interval", e);
        }
        lastTickFailed = true;
      }
      synchronized (lock) {
        if (!running) {
          return;
        }
        try {
          lock.wait(Math.max(1, statsInterval.toMillis()));
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /** One collection: the leader reads and publishes the gauges, anyone else drops them. */
  private void tick() {
    Boxline b = boxline;
    if (!b.stats().sequencerLeader()) {
      synchronized (lock) {
        removeQueryGauges();
      }
      return;
    }
    Map<String, List<PartitionLag>> lag = null;
    OutboxBacklog outbox = null;
    if (!lagUnsupported) {
      try {
        lag = b.admin().lagBySubscription();
      } catch (UnsupportedOperationException e) {
        lagUnsupported = true;
        LOG.log(Level.WARNING, "no backlog or lag gauges: " + e.getMessage());
      }
    }
    if (!outboxUnsupported) {
      try {
        outbox = b.admin().outboxBacklog();
      } catch (UnsupportedOperationException e) {
        outboxUnsupported = true;
        LOG.log(Level.WARNING, "no outbox gauges: " + e.getMessage());
      }
    }
    List<FailureCounts> failures = b.admin().failures();
    Map<String, Long> inboxes = b.admin().inboxSizes();
    collections.incrementAndGet();
    Instant now = Instant.now();
    synchronized (lock) {
      if (!running || !b.stats().sequencerLeader()) {
        removeQueryGauges(); // lost the lead during the query: its figures may already be stale
        return;
      }
      if (lag != null) {
        publishLag(lag, now);
        publishFailures(lag.keySet(), failures, inboxes);
      }
      if (outbox != null) {
        if (outboxGauges == null) {
          outboxGauges = new LagGauges();
          outboxGauges.backlogGauge =
              Gauge.builder("boxline.outbox.backlog", outboxGauges, g -> g.backlog)
                  .description("Committed events waiting for the sequencer")
                  .baseUnit("events")
                  .strongReference(true)
                  .register(registry);
          outboxGauges.lagGauge =
              Gauge.builder("boxline.outbox.lag", outboxGauges, g -> g.lagSeconds)
                  .description("Age of the oldest event waiting for the sequencer")
                  .baseUnit("seconds")
                  .strongReference(true)
                  .register(registry);
        }
        outboxGauges.backlog = outbox.events();
        outboxGauges.lagSeconds = seconds(outbox.age(now));
      }
    }
  }

  private void publishLag(Map<String, List<PartitionLag>> lag, Instant now) {
    Map<GaugeKey, double[]> values = new HashMap<>();
    lag.forEach(
        (subscription, partitions) -> {
          for (PartitionLag l : partitions) {
            GaugeKey k =
                new GaugeKey(subscription, l.topic(), partitionGauges ? l.partition() : -1);
            double[] v = values.computeIfAbsent(k, x -> new double[2]);
            v[0] += l.backlog();
            v[1] = Math.max(v[1], seconds(l.age(now)));
          }
        });
    for (Map.Entry<GaugeKey, double[]> e : values.entrySet()) {
      LagGauges g = lagGauges.computeIfAbsent(e.getKey(), this::registerLag);
      g.backlog = e.getValue()[0];
      g.lagSeconds = e.getValue()[1];
    }
    // Subscriptions and partitions that went away.
    for (var it = lagGauges.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (!values.containsKey(e.getKey())) {
        e.getValue().remove(registry);
        it.remove();
      }
    }
  }

  /** Every subscription gets its failure gauges, at zero when it has nothing set aside. */
  private void publishFailures(
      java.util.Set<String> subscriptions,
      List<FailureCounts> failures,
      Map<String, Long> inboxes) {
    Map<String, FailureCounts> bySubscription = new HashMap<>();
    subscriptions.forEach(name -> bySubscription.put(name, FailureCounts.none(name)));
    inboxes.keySet().forEach(name -> bySubscription.putIfAbsent(name, FailureCounts.none(name)));
    failures.forEach(f -> bySubscription.put(f.subscription(), f));
    bySubscription.forEach(
        (name, f) -> {
          FailureGauges g = failureGauges.computeIfAbsent(name, this::registerFailures);
          g.retrying = f.retrying();
          g.waiting = f.waiting();
          g.dead = f.deadLetters();
          g.inbox = inboxes.getOrDefault(name, 0L);
        });
    for (var it = failureGauges.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (!bySubscription.containsKey(e.getKey())) {
        e.getValue().remove(registry);
        it.remove();
      }
    }
  }

  private FailureGauges registerFailures(String subscription) {
    FailureGauges g = new FailureGauges();
    g.gauges.add(
        Gauge.builder("boxline.subscription.retrying", g, x -> x.retrying)
            .tag("subscription", subscription)
            .description("Events whose next attempt is scheduled")
            .baseUnit("events")
            .strongReference(true)
            .register(registry));
    g.gauges.add(
        Gauge.builder("boxline.subscription.waiting", g, x -> x.waiting)
            .tag("subscription", subscription)
            .description("Events parked behind an earlier event of their key")
            .baseUnit("events")
            .strongReference(true)
            .register(registry));
    g.gauges.add(
        Gauge.builder("boxline.subscription.dead.letters", g, x -> x.dead)
            .tag("subscription", subscription)
            .description("Dead letters waiting to be redriven or discarded")
            .baseUnit("events")
            .strongReference(true)
            .register(registry));
    g.gauges.add(
        Gauge.builder("boxline.subscription.inbox", g, x -> x.inbox)
            .tag("subscription", subscription)
            .description("Message keys the subscription's inbox remembers")
            .baseUnit("keys")
            .strongReference(true)
            .register(registry));
    return g;
  }

  private LagGauges registerLag(GaugeKey k) {
    Tags tags = Tags.of("subscription", k.subscription(), "topic", k.topic().toString());
    if (k.partition() >= 0) {
      tags = tags.and("partition", Integer.toString(k.partition()));
    }
    LagGauges g = new LagGauges();
    g.backlogGauge =
        Gauge.builder("boxline.subscription.backlog", g, x -> x.backlog)
            .tags(tags)
            .description("Events sequenced but not yet handled by the subscription")
            .baseUnit("events")
            .strongReference(true)
            .register(registry);
    g.lagGauge =
        Gauge.builder("boxline.subscription.lag", g, x -> x.lagSeconds)
            .tags(tags)
            .description("Age of the oldest event the subscription has not handled yet")
            .baseUnit("seconds")
            .strongReference(true)
            .register(registry);
    return g;
  }

  private void removeQueryGauges() {
    for (LagGauges g : lagGauges.values()) {
      g.remove(registry);
    }
    lagGauges.clear();
    failureGauges.values().forEach(g -> g.remove(registry));
    failureGauges.clear();
    if (outboxGauges != null) {
      outboxGauges.remove(registry);
      outboxGauges = null;
    }
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }

  /** Times the collector woke up (leader or not); for tests. */
  long ticks() {
    return ticks.get();
  }

  /** Times this instance ran the gauge queries; for tests. */
  long collections() {
    return collections.get();
  }

  // ------------------------------------------------------------------ observations

  @Override
  public void published(TopicName topic, int events) {
    published
        .computeIfAbsent(
            topic,
            t ->
                Counter.builder("boxline.events.published")
                    .tag("topic", t.toString())
                    .description(
                        "Events written to the outbox by this instance (before the caller's commit)")
                    .baseUnit("events")
                    .register(registry))
        .increment(events);
  }

  @Override
  public void sequenced(int events, Duration took) {
    sequencedEvents.increment(events);
    sequencerBatches.record(took);
  }

  @Override
  public void handled(String subscription, Event event, Duration took) {
    EventMeters m = eventMeters(subscription, event);
    m.handled.increment();
    m.duration.record(took);
  }

  @Override
  public void failed(String subscription, Event event, Throwable error, int attempt) {
    eventMeters(subscription, event).failed.increment();
  }

  @Override
  public void retrying(String subscription, Event event, int attempt, Instant nextAttemptAt) {
    eventMeters(subscription, event).retried.increment();
  }

  @Override
  public void deadLettered(String subscription, Event event, String reason) {
    eventMeters(subscription, event).deadLettered.increment();
  }

  @Override
  public void malformed(String subscription, Event event, String reason) {
    eventMeters(subscription, event).malformed.increment();
  }

  @Override
  public void partitionsAssigned(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    SubscriptionMeters m = subscription(subscription);
    m.assigned.increment(partitions.size());
    m.held.addAndGet(partitions.size());
  }

  @Override
  public void partitionsRevoked(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    SubscriptionMeters m = subscription(subscription);
    m.revoked.increment(partitions.size());
    m.held.addAndGet(-partitions.size());
  }

  @Override
  public void partitionsLost(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    SubscriptionMeters m = subscription(subscription);
    m.lost.increment(partitions.size());
    m.held.addAndGet(-partitions.size());
  }

  /**
   * Records that {@code events} events of {@code topic} were handed to {@code sink} in {@code
   * took}; {@code error} is null on success. For relays and other forwarders (the engine does not
   * call it): timer {@code boxline.sink.duration} and counter {@code boxline.sink.events}, tagged
   * with sink, topic and outcome.
   */
  @Override
  public void sinkDelivered(
      String sink, TopicName topic, int events, Duration took, Throwable error) {
    SinkMeters m =
        sinks
            .computeIfAbsent(sink, s -> new ConcurrentHashMap<>())
            .computeIfAbsent(topic, t -> new SinkMeters(registry, sink, t));
    if (error == null) {
      m.success.record(took);
      m.successEvents.increment(events);
    } else {
      m.failure.record(took);
      m.failureEvents.increment(events);
    }
  }

  private SubscriptionMeters subscription(String subscription) {
    return subscriptions.computeIfAbsent(subscription, s -> new SubscriptionMeters(registry, s));
  }

  private EventMeters eventMeters(String subscription, Event event) {
    return subscription(subscription)
        .events
        .computeIfAbsent(event.topic(), t -> new ConcurrentHashMap<>())
        .computeIfAbsent(
            event.type(), type -> new EventMeters(registry, subscription, event.topic(), type));
  }

  // ------------------------------------------------------------------ meter holders

  private record GaugeKey(String subscription, TopicName topic, int partition) {}

  /** Values of one pair of backlog/lag gauges, written by the collector, read on scrape. */
  private static final class LagGauges {
    volatile double backlog;
    volatile double lagSeconds;
    Gauge backlogGauge;
    Gauge lagGauge;

    void remove(MeterRegistry registry) {
      registry.remove(backlogGauge);
      registry.remove(lagGauge);
    }
  }

  private static final class FailureGauges {
    volatile double retrying;
    volatile double waiting;
    volatile double dead;
    volatile double inbox;
    final List<Gauge> gauges = new java.util.ArrayList<>();

    void remove(MeterRegistry registry) {
      gauges.forEach(registry::remove);
    }
  }

  private static final class SubscriptionMeters {
    final Map<TopicName, Map<String, EventMeters>> events = new ConcurrentHashMap<>();
    final AtomicLong held = new AtomicLong();
    final Counter assigned;
    final Counter revoked;
    final Counter lost;

    SubscriptionMeters(MeterRegistry registry, String subscription) {
      assigned = partitions(registry, "assigned", subscription, "Partitions this instance took");
      revoked =
          partitions(
              registry, "revoked", subscription, "Partitions this instance handed back gracefully");
      lost =
          partitions(
              registry,
              "lost",
              subscription,
              "Partitions this instance lost without a hand-over (missed heartbeat, fenced commit)");
      Gauge.builder("boxline.partitions.held", held, AtomicLong::get)
          .tag("subscription", subscription)
          .description("Partitions this instance's consumers hold now")
          .baseUnit("partitions")
          .strongReference(true)
          .register(registry);
    }

    private static Counter partitions(
        MeterRegistry registry, String what, String subscription, String description) {
      return Counter.builder("boxline.partitions." + what)
          .tag("subscription", subscription)
          .description(description)
          .baseUnit("partitions")
          .register(registry);
    }
  }

  private static final class EventMeters {
    final Counter handled;
    final Counter failed;
    final Counter retried;
    final Counter deadLettered;
    final Counter malformed;
    final Timer duration;

    EventMeters(MeterRegistry registry, String subscription, TopicName topic, String type) {
      Tags tags = Tags.of("subscription", subscription, "topic", topic.toString(), "type", type);
      handled = counter(registry, "handled", tags, "Handler invocations that returned normally");
      failed = counter(registry, "failed", tags, "Handler invocations that threw");
      retried = counter(registry, "retried", tags, "Failed events scheduled for another attempt");
      deadLettered = counter(registry, "dead.lettered", tags, "Events that became dead letters");
      malformed =
          counter(
              registry,
              "malformed",
              tags,
              "Events read from rows that cannot be delivered as stored (see the log line)");
      duration =
          Timer.builder("boxline.handler.duration")
              .tags(tags)
              .description("Time the handler took for events it handled")
              .register(registry);
    }

    private static Counter counter(
        MeterRegistry registry, String what, Tags tags, String description) {
      return Counter.builder("boxline.events." + what)
          .tags(tags)
          .description(description)
          .baseUnit("events")
          .register(registry);
    }
  }

  private static final class SinkMeters {
    final Timer success;
    final Timer failure;
    final Counter successEvents;
    final Counter failureEvents;

    SinkMeters(MeterRegistry registry, String sink, TopicName topic) {
      Tags tags = Tags.of("sink", sink, "topic", topic.toString());
      success = timer(registry, tags.and("outcome", "success"));
      failure = timer(registry, tags.and("outcome", "failure"));
      successEvents = events(registry, tags.and("outcome", "success"));
      failureEvents = events(registry, tags.and("outcome", "failure"));
    }

    private static Timer timer(MeterRegistry registry, Tags tags) {
      return Timer.builder("boxline.sink.duration")
          .tags(tags)
          .description("Time a relay took to hand events to a sink")
          .register(registry);
    }

    private static Counter events(MeterRegistry registry, Tags tags) {
      return Counter.builder("boxline.sink.events")
          .tags(tags)
          .description("Events a relay handed to a sink")
          .baseUnit("events")
          .register(registry);
    }
  }

  /** Settings for {@link BoxlineMetrics}; {@link #build()} validates. */
  public static final class Builder {
    private final MeterRegistry registry;
    private Duration statsInterval = DEFAULT_STATS_INTERVAL;
    private boolean partitionGauges = true;

    private Builder(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Time between two collections of the query-based gauges (backlog, lag, outbox) by the
     * sequencer leader, 100 ms to 1 hour (default 15 s). Each collection is two statements.
     */
    public Builder statsInterval(Duration interval) {
      this.statsInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /**
     * Whether backlog and lag gauges are per partition (default true, tags subscription, topic,
     * partition) or per topic of a subscription (tags subscription, topic: backlog summed, lag the
     * largest), for topics with many partitions.
     */
    public Builder partitionGauges(boolean perPartition) {
      this.partitionGauges = perPartition;
      return this;
    }

    public BoxlineMetrics build() {
      if (statsInterval.compareTo(Duration.ofMillis(100)) < 0
          || statsInterval.compareTo(Duration.ofHours(1)) > 0) {
        throw new ValidationException(
            "statsInterval must be between PT0.1S and PT1H, got " + statsInterval);
      }
      return new BoxlineMetrics(this);
    }
  }
}
