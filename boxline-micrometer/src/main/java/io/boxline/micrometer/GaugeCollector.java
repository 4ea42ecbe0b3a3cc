package io.boxline.micrometer;

import io.boxline.Boxline;
import io.boxline.FailureCounts;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.TopicName;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gauges that need a query (backlog and lag per subscription and partition, failures, outbox
 * backlog) and the {@code boxline-metrics-<instance>} thread that collects them every interval
 * while this instance leads the sequencer, and removes them when it does not. Apart from {@link
 * BoxlineMetrics} because it is the one part with a thread, a lock and registered-gauge state.
 */
final class GaugeCollector {
  /** Logs under BoxlineMetrics' name, as before this class was split out of it. */
  private static final System.Logger LOG = System.getLogger(BoxlineMetrics.class.getName());

  private final MeterRegistry registry;
  private final Boxline boxline;
  private final Duration statsInterval;
  private final boolean partitionGauges;

  private final Object lock = new Object();
  private Thread thread;
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

  GaugeCollector(
      MeterRegistry registry, Boxline boxline, Duration statsInterval, boolean partitionGauges) {
    this.registry = registry;
    this.boxline = boxline;
    this.statsInterval = statsInterval;
    this.partitionGauges = partitionGauges;
  }

  void start() {
    synchronized (lock) {
      running = true;
      thread = new Thread(this::collect, "boxline-metrics-" + boxline.instanceId());
      thread.setDaemon(true);
      thread.start();
    }
  }

  /** Stops the thread (waiting up to {@code timeout}) and removes the gauges it registered. */
  void stop(Duration timeout) {
    Thread t;
    synchronized (lock) {
      running = false;
      lock.notifyAll();
      t = thread;
    }
    if (t != null) {
      try {
        t.join(timeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        t.interrupt();
        LOG.log(Level.WARNING, "{0} did not stop within {1}", t.getName(), timeout);
      }
    }
    synchronized (lock) {
      removeQueryGauges();
    }
  }

  /** Times the collector woke up (leader or not); for tests. */
  long ticks() {
    return ticks.get();
  }

  /** Times this instance ran the gauge queries; for tests. */
  long collections() {
    return collections.get();
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
      Set<String> subscriptions, List<FailureCounts> failures, Map<String, Long> inboxes) {
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
    final List<Gauge> gauges = new ArrayList<>();

    void remove(MeterRegistry registry) {
      gauges.forEach(registry::remove);
    }
  }
}
