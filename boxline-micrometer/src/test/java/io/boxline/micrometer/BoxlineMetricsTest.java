package io.boxline.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutboxBacklog;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.RetryPolicy;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class BoxlineMetricsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TopicName TOPIC = TopicName.of("acme", "orders");
  private static final String SUB = "billing";
  private static final String T = TOPIC.toString();

  /** An observer that fails on every call it gets: the metrics behind it must not notice. */
  private static final BoxlineObserver THROWING =
      new BoxlineObserver() {
        @Override
        public void published(TopicName topic, int events) {
          throw new IllegalStateException("observer failure (expected by the test)");
        }

        @Override
        public void handled(String subscription, Event event, Duration took) {
          throw new IllegalStateException("observer failure (expected by the test)");
        }

        @Override
        public void retrying(String subscription, Event event, int attempt, Instant next) {
          throw new IllegalStateException("observer failure (expected by the test)");
        }
      };

  /** The gauges read the store's lag and outbox queries, which each dialect has its own of. */
  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Dialect.class,
      names = {"POSTGRESQL", "MARIADB", "H2"})
  void countsExactlyAndTheGaugesFollowAStoppedAndACatchingUpConsumer(TestDatabase.Dialect dialect) {
    try (TestDatabase db = TestDatabase.create(dialect, "metrics", 16)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      BoxlineMetrics metrics =
          BoxlineMetrics.builder(registry).statsInterval(Duration.ofMillis(100)).build();
      Boxline boxline = db.boxline(b -> b.observer(THROWING).observer(metrics));
      setUp(boxline);

      // 20 events, 3 of them poison (0, 7, 14); nobody consumes yet.
      publish(boxline, 0, 20, i -> i % 7 == 0 ? "poison" : "order.placed");
      Await.until(WAIT, "backlog gauges add up to 20", () -> backlog(registry), v -> v == 20);
      Await.until(WAIT, "lag gauge over 0.2 s", () -> maxLag(registry), v -> v >= 0.2);
      assertThat(registry.find("boxline.subscription.backlog").tag("subscription", SUB).gauges())
          .hasSize(2); // one per partition
      assertThat(gauge(registry, "boxline.outbox.backlog")).isZero();
      assertThat(gauge(registry, "boxline.sequencer.leader")).isEqualTo(1);
      List<PartitionLag> lag = boxline.admin().lag(SUB);
      assertThat(lag).allSatisfy(l -> assertThat(l.oldestUnhandledAt()).isNotNull());
      assertThat(lag.stream().mapToLong(PartitionLag::backlog).sum()).isEqualTo(20);

      Consumer consumer = consume(boxline);
      Await.until(
          WAIT,
          "17 handled and 3 dead letters",
          () ->
              count(registry, "boxline.events.handled", "order.placed") == 17
                  && count(registry, "boxline.events.dead.lettered", "poison") == 3);
      assertThat(count(registry, "boxline.events.published")).isEqualTo(20);
      Await.until(
          WAIT,
          "the dead-letter gauge shows the 3",
          () -> gauge(registry, "boxline.subscription.dead.letters"),
          v -> v == 3);
      assertThat(gauge(registry, "boxline.subscription.retrying")).isZero();
      assertThat(registry.get("boxline.sequencer.events").counter().count()).isEqualTo(20);
      assertThat(registry.get("boxline.sequencer.batch.duration").timer().count()).isPositive();
      assertThat(registry.get("boxline.handover").tag("result", "hit").functionCounter().count())
          .isEqualTo(boxline.stats().handOverHits());
      assertThat(registry.get("boxline.handover").tag("result", "miss").functionCounter().count())
          .isEqualTo(boxline.stats().handOverMisses());
      assertThat(
              registry.get("boxline.outbox.vacuums").tag("result", "ok").functionCounter().count())
          .isEqualTo(boxline.stats().outboxVacuums());
      assertThat(
              registry
                  .get("boxline.outbox.vacuums")
                  .tag("result", "failed")
                  .functionCounter()
                  .count())
          .isZero();
      assertThat(registry.get("boxline.long.transaction.warnings").functionCounter().count())
          .isEqualTo(boxline.stats().longTransactionWarnings());
      // Each poison event: 3 attempts, each failing; the first two are followed by a retry.
      assertThat(count(registry, "boxline.events.failed", "poison")).isEqualTo(9);
      assertThat(count(registry, "boxline.events.retried", "poison")).isEqualTo(6);
      assertThat(count(registry, "boxline.events.failed", "order.placed")).isZero();
      assertThat(count(registry, "boxline.events.handled", "poison")).isZero();
      assertThat(
              registry
                  .get("boxline.handler.duration")
                  .tags("subscription", SUB, "topic", T, "type", "order.placed")
                  .timer()
                  .count())
          .isEqualTo(17);
      Await.until(WAIT, "backlog back to 0", () -> backlog(registry), v -> v == 0);
      Await.until(WAIT, "lag back to 0", () -> maxLag(registry), v -> v == 0);
      assertThat(gauge(registry, "boxline.partitions.held")).isEqualTo(2);
      assertThat(count(registry, "boxline.partitions.assigned")).isEqualTo(2);

      consumer.close();
      assertThat(gauge(registry, "boxline.partitions.held")).isZero();
      assertThat(count(registry, "boxline.partitions.revoked")).isEqualTo(2);
      assertThat(count(registry, "boxline.partitions.lost")).isZero();

      // The consumer is stopped: 5 more wait, and the gauges say so.
      publish(boxline, 20, 5, i -> "order.placed");
      Await.until(WAIT, "backlog 5 while stopped", () -> backlog(registry), v -> v == 5);
      Await.until(WAIT, "lag over 0.2 s while stopped", () -> maxLag(registry), v -> v >= 0.2);

      consume(boxline);
      Await.until(
          WAIT,
          "22 handled",
          () -> count(registry, "boxline.events.handled", "order.placed"),
          v -> v == 22);
      Await.until(
          WAIT, "backlog back to 0 after catching up", () -> backlog(registry), v -> v == 0);
      Await.until(WAIT, "lag back to 0 after catching up", () -> maxLag(registry), v -> v == 0);
      assertThat(count(registry, "boxline.events.published")).isEqualTo(25);
      assertThat(count(registry, "boxline.events.dead.lettered", "poison")).isEqualTo(3);
      // Batches with dead letters commit with their parks; the last five came through the group
      // commit of cursors.
      Await.until(WAIT, "group commits counted", () -> boxline.stats().cursorCommitCalls() > 0);
      assertThat(registry.get("boxline.cursor.commit.calls").functionCounter().count())
          .isEqualTo(boxline.stats().cursorCommitCalls());
      assertThat(registry.get("boxline.cursor.commit.moves").functionCounter().count())
          .isEqualTo(boxline.stats().cursorMovesCommitted())
          .isGreaterThanOrEqualTo(boxline.stats().cursorCommitCalls());

      boxline.close();
      assertThat(registry.find("boxline.subscription.backlog").gauges()).isEmpty();
      assertThat(registry.find("boxline.subscription.dead.letters").gauges()).isEmpty();
      assertThat(registry.find("boxline.sequencer.leader").gauges()).isEmpty();
      assertThat(registry.find("boxline.handover").functionCounters()).isEmpty();
      assertThat(registry.find("boxline.cursor.commit.calls").functionCounters()).isEmpty();
      assertThat(registry.find("boxline.outbox.vacuums").functionCounters()).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Dialect.class,
      names = {"POSTGRESQL", "MARIADB", "H2"})
  void onlyTheSequencerLeaderRunsTheGaugeQueries(TestDatabase.Dialect dialect) {
    try (TestDatabase db = TestDatabase.create(dialect, "metricsleader", 16)) {
      Map<String, AtomicInteger> callsA = new ConcurrentHashMap<>();
      Map<String, AtomicInteger> callsB = new ConcurrentHashMap<>();
      SimpleMeterRegistry registryA = new SimpleMeterRegistry();
      SimpleMeterRegistry registryB = new SimpleMeterRegistry();
      BoxlineMetrics metricsA =
          BoxlineMetrics.builder(registryA).statsInterval(Duration.ofMillis(100)).build();
      BoxlineMetrics metricsB =
          BoxlineMetrics.builder(registryB).statsInterval(Duration.ofMillis(100)).build();

      Boxline a =
          db.boxline(b -> b.store(counting(db, callsA)).instanceId("metrics-a").observer(metricsA));
      Await.until(WAIT, "a leads the sequencer", () -> a.stats().sequencerLeader());
      setUp(a);
      publish(a, 0, 3, i -> "order.placed");
      Boxline b =
          db.boxline(x -> x.store(counting(db, callsB)).instanceId("metrics-b").observer(metricsB));

      long ticksB = metricsB.ticks();
      long collectionsA = metricsA.collections();
      Await.until(
          WAIT,
          "b's collector woke 5 times while a collected twice more",
          () -> metricsB.ticks() >= ticksB + 5 && metricsA.collections() >= collectionsA + 2);
      assertThat(b.stats().sequencerLeader()).isFalse();
      assertThat(metricsB.collections()).isZero();
      assertThat(calls(callsB, "lagBySubscription") + calls(callsB, "outboxBacklog")).isZero();
      assertThat(registryB.find("boxline.subscription.backlog").gauges()).isEmpty();
      assertThat(registryB.find("boxline.outbox.backlog").gauges()).isEmpty();
      assertThat(calls(callsA, "lagBySubscription")).isGreaterThanOrEqualTo(2);
      Await.until(WAIT, "a's backlog gauges show 3", () -> backlog(registryA), v -> v == 3);

      // a goes away: b takes over the sequencer and with it the gauges.
      a.close();
      assertThat(registryA.find("boxline.subscription.backlog").gauges()).isEmpty();
      Await.until(WAIT, "b leads the sequencer", () -> b.stats().sequencerLeader());
      Await.until(WAIT, "b's backlog gauges show 3", () -> backlog(registryB), v -> v == 3);
      assertThat(calls(callsB, "lagBySubscription")).isPositive();
    }
  }

  /**
   * Through {@code inTransaction} Boxline sees the commit, so only committed events count as
   * published; a plain transaction's events count when they are published.
   */
  @Test
  void publishedCountsWhatInTransactionCommittedAndNotWhatItRolledBack() throws Exception {
    try (TestDatabase db = TestDatabase.create("metricspublished")) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Boxline boxline = db.boxline(b -> b.observer(BoxlineMetrics.builder(registry).build()));
      setUp(boxline);
      publish(boxline, 0, 3, i -> "order.placed");
      assertThat(count(registry, "boxline.events.published")).isEqualTo(3);

      assertThatThrownBy(
              () ->
                  boxline.inTransaction(
                      tx -> {
                        boxline.publisher().publish(tx, event(10));
                        throw new IllegalStateException("roll back (expected by the test)");
                      }))
          .hasMessageContaining("roll back");
      assertThat(count(registry, "boxline.events.published")).as("rolled back").isEqualTo(3);

      try (java.sql.Connection c = db.dataSource().getConnection()) {
        c.setAutoCommit(false);
        boxline.publisher().publish(c, event(11));
        assertThat(count(registry, "boxline.events.published"))
            .as("plain, at publish")
            .isEqualTo(4);
        c.commit();
      }
    }
  }

  /**
   * An event whose stored headers were overwritten with something that is not a JSON object of
   * strings is counted as malformed (once), fails every attempt and becomes a dead letter.
   */
  @Test
  void aMalformedRowIsCountedAndDeadLettered() throws Exception {
    try (TestDatabase db = TestDatabase.create("malformed")) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Boxline boxline = db.boxline(b -> b.observer(BoxlineMetrics.builder(registry).build()));
      setUp(boxline);
      publish(boxline, 0, 1, i -> "mangled");
      Await.until(
          WAIT,
          "sequenced",
          () -> boxline.admin().lag(SUB),
          l -> l.stream().mapToLong(PartitionLag::lastSequence).sum() == 1);
      try (java.sql.Connection c = db.dataSource().getConnection();
          java.sql.Statement st = c.createStatement()) {
        st.executeUpdate(
            "UPDATE " + db.table("log") + " SET headers = '{\"tenant\": {\"id\": 7}}'::jsonb");
      }
      publish(boxline, 1, 4, i -> "order.placed");
      consume(boxline);
      Await.until(
          WAIT,
          "4 handled, the mangled one dead",
          () ->
              count(registry, "boxline.events.handled", "order.placed") == 4
                  && count(registry, "boxline.events.dead.lettered", "mangled") == 1);
      assertThat(count(registry, "boxline.events.malformed", "mangled")).isEqualTo(1);
      assertThat(count(registry, "boxline.events.failed", "mangled")).isEqualTo(3);
      assertThat(count(registry, "boxline.events.handled", "mangled")).isZero();
    }
  }

  private static OutgoingEvent event(int i) {
    return OutgoingEvent.builder(TOPIC)
        .type("order.placed")
        .key("k" + i)
        .payload(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))
        .build();
  }

  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Dialect.class,
      names = {"POSTGRESQL", "MARIADB", "H2"})
  void outboxBacklogCountsCommittedEventsWaitingForTheSequencer(TestDatabase.Dialect dialect) {
    try (TestDatabase db = TestDatabase.create(dialect, "metricsoutbox", 16)) {
      Boxline producer = db.boxline(b -> b.sequencer(false));
      producer.admin().createNamespace(NamespacePath.of("acme"));
      producer.admin().createTopic(TOPIC, 2);
      assertThat(producer.admin().outboxBacklog()).isEqualTo(new OutboxBacklog(0, null));
      Instant before = db.databaseNow();
      publish(producer, 0, 4, i -> "order.placed");
      OutboxBacklog waiting = producer.admin().outboxBacklog();
      assertThat(waiting.events()).isEqualTo(4);
      assertThat(waiting.oldestCreatedAt()).isAfterOrEqualTo(before.minusMillis(1));
      assertThat(waiting.age(waiting.oldestCreatedAt().plusSeconds(3)))
          .isEqualTo(Duration.ofSeconds(3));

      db.boxline(b -> b); // a sequencer
      Await.until(
          WAIT,
          "the outbox drained",
          () -> producer.admin().outboxBacklog(),
          o -> o.equals(new OutboxBacklog(0, null)));
    }
  }

  @Test
  void sinkDeliveriesAreTimedPerSinkTopicAndOutcome() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    BoxlineMetrics metrics = BoxlineMetrics.builder(registry).build();
    metrics.sinkDelivered("kafka", TOPIC, 3, Duration.ofMillis(40), null);
    metrics.sinkDelivered("kafka", TOPIC, 2, Duration.ofMillis(60), null);
    metrics.sinkDelivered("kafka", TOPIC, 1, Duration.ofMillis(5), new RuntimeException("down"));
    var ok = registry.get("boxline.sink.duration").tags("sink", "kafka", "outcome", "success");
    assertThat(ok.timer().count()).isEqualTo(2);
    assertThat(ok.timer().totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(100);
    assertThat(
            registry
                .get("boxline.sink.events")
                .tags("sink", "kafka", "topic", T, "outcome", "success")
                .counter()
                .count())
        .isEqualTo(5);
    assertThat(
            registry
                .get("boxline.sink.events")
                .tags("sink", "kafka", "outcome", "failure")
                .counter()
                .count())
        .isEqualTo(1);
  }

  @Test
  void builderRejectsStatsIntervalsOutOfRange() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    assertThatThrownBy(
            () -> BoxlineMetrics.builder(registry).statsInterval(Duration.ofMillis(50)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessage("statsInterval must be between PT0.1S and PT1H, got PT0.05S");
    assertThatThrownBy(
            () -> BoxlineMetrics.builder(registry).statsInterval(Duration.ofHours(2)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessage("statsInterval must be between PT0.1S and PT1H, got PT2H");
    assertThat(BoxlineMetrics.DEFAULT_STATS_INTERVAL).isEqualTo(Duration.ofSeconds(15));
  }

  /**
   * The failure gauges count what the store holds: an event parked for a retry, the later event of
   * its key waiting behind it, the inbox's rows; and the retention counter counts what a run
   * removed.
   */
  @ParameterizedTest
  @EnumSource(
      value = TestDatabase.Dialect.class,
      names = {"POSTGRESQL", "MARIADB", "H2"})
  void theRetryingWaitingInboxAndRetentionMetersCountWhatTheStoreHolds(
      TestDatabase.Dialect dialect) {
    try (TestDatabase db = TestDatabase.create(dialect, "gauges", 16)) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      BoxlineMetrics metrics =
          BoxlineMetrics.builder(registry).statsInterval(Duration.ofMillis(100)).build();
      Boxline boxline =
          db.boxline(b -> b.observer(metrics).retentionInterval(Duration.ofMillis(200)));
      setUp(boxline);
      List<OutgoingEvent> events =
          List.of(
              OutgoingEvent.builder(TOPIC).key("stuck").type("hold").build(),
              OutgoingEvent.builder(TOPIC).key("stuck").type("order.placed").build(),
              OutgoingEvent.builder(TOPIC).key("free").type("order.placed").build(),
              OutgoingEvent.builder(TOPIC).key("free").type("order.placed").build());
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
      try (Consumer c =
          boxline
              .consumer(SUB)
              .inbox()
              .handler(
                  e -> {
                    if (e.type().equals("hold")) {
                      throw io.boxline.HandlerDecision.retryIn(Duration.ofHours(1), "later");
                    }
                  })
              .start()) {
        Await.until(
            WAIT,
            "one retrying",
            () -> found(registry, "boxline.subscription.retrying"),
            v -> v == 1);
        Await.until(
            WAIT,
            "one waiting",
            () -> found(registry, "boxline.subscription.waiting"),
            v -> v == 1);
        Await.until(
            WAIT,
            "two in the inbox",
            () -> found(registry, "boxline.subscription.inbox"),
            v -> v == 2);
        boxline.admin().setRetention(TOPIC, io.boxline.RetentionPolicy.bySize(1));
        Await.until(
            WAIT,
            "retention removed events",
            () -> registry.get("boxline.retention.deleted").functionCounter().count(),
            v -> v >= 1);
      }
    }
  }

  // ------------------------------------------------------------------ helpers

  private static void setUp(Boxline boxline) {
    boxline.admin().createNamespace(NamespacePath.of("acme"));
    boxline.admin().createTopic(TOPIC, 2);
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of(SUB, TOPIC).startAt(StartPosition.earliest()));
  }

  private static Consumer consume(Boxline boxline) {
    return boxline
        .consumer(SUB)
        .retryPolicy(
            RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                .inPlaceAttempts(1)
                .maxAttempts(3))
        .handler(
            e -> {
              if (e.type().equals("poison")) {
                throw new IllegalStateException("poison (expected by the test)");
              }
            })
        .start();
  }

  private static void publish(Boxline boxline, int from, int n, IntFunction<String> type) {
    List<OutgoingEvent> events =
        IntStream.range(from, from + n)
            .mapToObj(
                i ->
                    OutgoingEvent.builder(TOPIC)
                        .type(type.apply(i))
                        .key("k" + i)
                        .payload(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))
                        .build())
            .toList();
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
  }

  private static double backlog(MeterRegistry registry) {
    return registry.find("boxline.subscription.backlog").tag("subscription", SUB).gauges().stream()
        .mapToDouble(Gauge::value)
        .sum();
  }

  private static double maxLag(MeterRegistry registry) {
    return registry.find("boxline.subscription.lag").tag("subscription", SUB).gauges().stream()
        .mapToDouble(Gauge::value)
        .max()
        .orElse(-1);
  }

  /** The gauges of that name summed, 0 while none is registered yet (they appear with the data). */
  private static double found(MeterRegistry registry, String name) {
    return registry.find(name).gauges().stream().mapToDouble(Gauge::value).sum();
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }

  /** Sum of a counter over all its tag combinations. */
  private static double count(MeterRegistry registry, String name) {
    return registry.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  private static double count(MeterRegistry registry, String name, String type) {
    return registry
        .find(name)
        .tags("subscription", SUB, "topic", T, "type", type)
        .counters()
        .stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  private static int calls(Map<String, AtomicInteger> calls, String method) {
    AtomicInteger n = calls.get(method);
    return n == null ? 0 : n.get();
  }

  /** The database's store, counting the calls made on it by method name. */
  private static Store counting(TestDatabase db, Map<String, AtomicInteger> calls) {
    Store real = JdbcStore.builder(db.dataSource()).schema(db.schema()).build();
    return (Store)
        Proxy.newProxyInstance(
            Store.class.getClassLoader(),
            new Class<?>[] {Store.class},
            (proxy, method, args) -> {
              calls.computeIfAbsent(method.getName(), k -> new AtomicInteger()).incrementAndGet();
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
