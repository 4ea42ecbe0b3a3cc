package io.boxline.micrometer;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.Event;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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
  private GaugeCollector collector;
  private Gauge leaderGauge;
  private final List<Meter> statsMeters = new ArrayList<>();

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
      for (boolean replica : new boolean[] {true, false}) {
        statsMeters.add(
            FunctionCounter.builder(
                    "boxline.log.reads",
                    boxline,
                    b -> replica ? b.stats().replicaReads() : b.stats().primaryFallbacks())
                .tag("source", replica ? "replica" : "primary-fallback")
                .description(
                    "partition reads of the log answered by a read replica, or by the primary"
                        + " because no replica had caught up in time or none answered (only with"
                        + " read replicas)")
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
      collector = new GaugeCollector(registry, boxline, statsInterval, partitionGauges);
      collector.start();
    }
  }

  @Override
  public void closing(Boxline boxline) {
    GaugeCollector c;
    synchronized (lock) {
      c = collector;
    }
    if (c != null) {
      c.stop(STOP_TIMEOUT);
    }
    synchronized (lock) {
      if (leaderGauge != null) {
        registry.remove(leaderGauge);
        leaderGauge = null;
      }
      statsMeters.forEach(registry::remove);
      statsMeters.clear();
    }
  }

  /** Times the collector woke up (leader or not); for tests. */
  long ticks() {
    GaugeCollector c = collector();
    return c == null ? 0 : c.ticks();
  }

  /** Times this instance ran the gauge queries; for tests. */
  long collections() {
    GaugeCollector c = collector();
    return c == null ? 0 : c.collections();
  }

  private GaugeCollector collector() {
    synchronized (lock) {
      return collector;
    }
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
