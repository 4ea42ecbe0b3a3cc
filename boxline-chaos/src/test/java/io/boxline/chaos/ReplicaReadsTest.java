package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads of the log from a real streaming replica ({@code JdbcStore.Builder.readReplicas}): a
 * PostgreSQL primary and hot standby of the test's own (pg_basebackup), and a MariaDB primary and
 * replica of the test's own. A consumer gets every event once per partition, in sequence order,
 * whether the replica keeps up, lags far behind ({@code recovery_min_apply_delay}, {@code
 * MASTER_DELAY}), stops or is another database altogether; the store's counters show who answered.
 */
@Timeout(600)
class ReplicaReadsTest {
  private static PostgresPair pg;

  @BeforeAll
  static void startPair() {
    pg = PostgresPair.start(false);
  }

  @AfterAll
  static void stopPair() {
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void aReplicaThatKeepsUpAnswersTheReads() throws Exception {
    try (HikariDataSource primary = pool(pg.primaryUrl(), "postgres", "primary");
        HikariDataSource replica = pool(pg.standbyUrl(), "postgres", "replica");
        Run run = new Run(primary, replica, "rr_up", Duration.ofSeconds(5))) {
      run.publish(2_000);
      run.awaitAllHandled();
      run.assertEachPartitionInOrderOnce();
      BoxlineStats stats = run.boxline.stats();
      assertThat(stats.replicaReads()).as("reads the replica answered").isPositive();
      assertThat(stats.primaryFallbacks())
          .as("reads the primary answered though the replica keeps up (5 s to catch up)")
          .isZero();
    }
  }

  @Test
  void aLaggingReplicaHidesNothingAndTheConsumerDoesNotWaitForIt() throws Exception {
    try (HikariDataSource primary = pool(pg.primaryUrl(), "postgres", "primary");
        HikariDataSource replica = pool(pg.standbyUrl(), "postgres", "replica");
        Run run = new Run(primary, replica, "rr_lag", Duration.ofMillis(20))) {
      run.publish(100);
      run.awaitAllHandled();
      assertThat(run.boxline.stats().replicaReads()).as("reads the replica answered").isPositive();
      pg.delayReplay(Duration.ofSeconds(5));
      long fallbacks = run.boxline.stats().primaryFallbacks();
      run.latencies.clear();
      run.publish(1_000);
      run.awaitAllHandled();
      run.assertEachPartitionInOrderOnce();
      assertThat(run.boxline.stats().primaryFallbacks() - fallbacks)
          .as("reads the primary answered because the replica lags 5 s")
          .isPositive();
      // Each event was handled well before the replica could show it (5 s after its commit): the
      // consumer took the primary's answer after 20 ms instead of waiting for the replica.
      long[] latencies = run.latenciesMillis();
      assertThat(latencies[latencies.length / 2])
          .as("median publish-to-handler ms")
          .isLessThan(2_500);
    } finally {
      pg.delayReplay(Duration.ZERO);
    }
  }

  @Test
  void aReplicaThatStopsIsSkippedAndUsedAgainWhenItIsBack() throws Exception {
    try (HikariDataSource primary = pool(pg.primaryUrl(), "postgres", "primary");
        HikariDataSource replica = pool(pg.standbyUrl(), "postgres", "replica");
        Run run = new Run(primary, replica, "rr_stop", Duration.ofSeconds(5))) {
      run.publish(300);
      run.awaitHandled(300);
      pg.stopStandby();
      try {
        run.publish(300);
        run.awaitHandled(600);
        assertThat(run.boxline.stats().primaryFallbacks())
            .as("reads the primary answered while the replica was down")
            .isPositive();
      } finally {
        pg.startStandby();
      }
      long before = run.boxline.stats().replicaReads();
      // The replica is tried again 5 s after it failed: publish until it answers again.
      FailoverTest.await(
          "the replica answering reads again",
          Duration.ofSeconds(60),
          () -> {
            run.publish(20);
            return run.boxline.stats().replicaReads() > before;
          });
      run.awaitAllHandled();
      run.assertEachPartitionInOrderOnce();
    }
  }

  @Test
  void aDataSourceOfAnotherDatabaseIsRefused() throws Exception {
    // The shared PostgreSQL has a schema of the same name, migrated by Boxline on its own: a
    // replica of nothing here. Its events must never reach the consumer.
    String schema = "rr_other";
    try (HikariDataSource other =
        pool("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "other")) {
      try (Connection c = other.getConnection();
          Statement st = c.createStatement()) {
        st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      }
      try (Boxline decoy =
          Boxline.builder()
              .store(JdbcStore.builder(other).schema(schema).build())
              .build()
              .start()) {
        decoy.admin().createNamespace(NamespacePath.of("rr/app"));
        decoy.admin().createTopic(TopicName.of("rr/app", "orders"), 4);
        decoy.inTransaction(
            tx ->
                decoy
                    .publisher()
                    .publishAll(tx, events(TopicName.of("rr/app", "orders"), 0, 500, "decoy")));
      }
      try (HikariDataSource primary = pool(pg.primaryUrl(), "postgres", "primary");
          Run run = new Run(primary, other, schema, Duration.ofSeconds(5), false)) {
        run.publish(500);
        run.awaitAllHandled();
        run.assertEachPartitionInOrderOnce();
        assertThat(run.foreign.get()).as("events of the other database handled").isZero();
        assertThat(run.boxline.stats().replicaReads())
            .as("reads the other database answered")
            .isZero();
        assertThat(run.boxline.stats().primaryFallbacks()).isPositive();
      } finally {
        try (Connection c = other.getConnection();
            Statement st = c.createStatement()) {
          st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
      }
    }
  }

  @Test
  void mariaDbReplicaKeepingUpAndLagging() throws Exception {
    try (MariaDbPair pair = MariaDbPair.start(false)) {
      try (HikariDataSource primary = pool(pair.primaryAppUrl(), MariaDbPair.USER, "primary");
          HikariDataSource replica = pool(pair.replicaAppUrl(), MariaDbPair.USER, "replica");
          Run run = new Run(primary, replica, "rr_maria", Duration.ofSeconds(5))) {
        run.publish(1_000);
        run.awaitAllHandled();
        assertThat(run.boxline.stats().replicaReads()).isPositive();
        assertThat(run.boxline.stats().primaryFallbacks()).isZero();
        pair.delayReplica(5);
      }
      // A new store with a 20 ms wait on the same schema: the replica now lags 5 s.
      try (HikariDataSource primary = pool(pair.primaryAppUrl(), MariaDbPair.USER, "primary");
          HikariDataSource replica = pool(pair.replicaAppUrl(), MariaDbPair.USER, "replica");
          Run run = new Run(primary, replica, "rr_maria2", Duration.ofMillis(20))) {
        run.publish(1_000);
        run.awaitAllHandled();
        run.assertEachPartitionInOrderOnce();
        assertThat(run.boxline.stats().primaryFallbacks()).isPositive();
      }
    }
  }

  // ------------------------------------------------------------------------------------------

  private static final TopicName TOPIC = TopicName.of("rr/app", "orders");

  /**
   * Two Boxline instances on {@code primary}: a producer with the sequencer, and a consumer that
   * reads the log from {@code replica} (in another instance, so that it cannot take its batches
   * from the sequencer's in-memory hand-over: every batch is a read of the log).
   */
  private static final class Run implements AutoCloseable {
    final Boxline producer;
    final Boxline boxline;
    final Consumer consumer;
    final Map<Integer, List<Long>> seen = new ConcurrentHashMap<>();
    final Map<String, Long> publishedAt = new ConcurrentHashMap<>();
    final List<Long> latencies = new CopyOnWriteArrayList<>();
    final java.util.concurrent.atomic.AtomicInteger foreign =
        new java.util.concurrent.atomic.AtomicInteger();
    int published;

    Run(DataSource primary, DataSource replica, String schema, Duration wait) {
      this(primary, replica, schema, wait, true);
    }

    Run(
        DataSource primary,
        DataSource replica,
        String schema,
        Duration wait,
        boolean replicaHasSchema) {
      producer =
          Boxline.builder()
              .store(JdbcStore.builder(primary).schema(schema).build())
              .instanceId("producer")
              .build()
              .start();
      producer.admin().createNamespace(NamespacePath.of("rr/app"));
      producer.admin().createTopic(TOPIC, 4);
      producer.admin().createSubscription(SubscriptionSpec.of("rr", TOPIC));
      if (replicaHasSchema) {
        // A replica that has not replayed the migration yet is skipped for 5 s: wait for it.
        FailoverTest.await(
            "the replica showing the migrated schema",
            Duration.ofSeconds(60),
            () -> {
              try (Connection c = replica.getConnection();
                  Statement st = c.createStatement();
                  java.sql.ResultSet rs =
                      st.executeQuery(
                          "SELECT count(*) FROM " + schema + ".subscription WHERE name = 'rr'")) {
                return rs.next() && rs.getInt(1) == 1;
              } catch (java.sql.SQLException e) {
                return false;
              }
            });
      }
      boxline =
          Boxline.builder()
              .store(
                  JdbcStore.builder(primary)
                      .schema(schema)
                      .readReplicas(List.of(replica))
                      .replicaWait(wait)
                      .build())
              .instanceId("consumer")
              .sequencer(false)
              .build()
              .start();
      consumer =
          boxline
              .consumer("rr")
              .handler(
                  (Event e) -> {
                    seen.computeIfAbsent(e.partition(), p -> new CopyOnWriteArrayList<>())
                        .add(e.sequence());
                    if (new String(e.payload(), StandardCharsets.UTF_8).contains("decoy")) {
                      foreign.incrementAndGet();
                    }
                    Long at =
                        publishedAt.get(
                            e.key() + "/" + new String(e.payload(), StandardCharsets.UTF_8));
                    if (at != null) {
                      latencies.add((System.nanoTime() - at) / 1_000_000);
                    }
                  })
              .start();
    }

    /** {@code n} events in transactions of 20, four keys per transaction. */
    void publish(int n) {
      for (int from = 0; from < n; from += 20) {
        int count = Math.min(20, n - from);
        List<OutgoingEvent> batch = events(TOPIC, published + from, count, "e");
        long now = System.nanoTime();
        for (OutgoingEvent e : batch) {
          publishedAt.put(e.key() + "/" + new String(e.payload(), StandardCharsets.UTF_8), now);
        }
        producer.inTransaction(tx -> producer.publisher().publishAll(tx, batch));
      }
      published += n;
    }

    void awaitHandled(int n) {
      FailoverTest.await(
          n + " events handled",
          Duration.ofSeconds(120),
          () -> seen.values().stream().mapToInt(List::size).sum() >= n);
    }

    void awaitAllHandled() {
      awaitHandled(published);
    }

    /** Each partition's sequences 1..n, each once, in order: nothing skipped, nothing reordered. */
    void assertEachPartitionInOrderOnce() {
      int total = 0;
      for (Map.Entry<Integer, List<Long>> p : seen.entrySet()) {
        List<Long> expected = new ArrayList<>();
        for (long s = 1; s <= p.getValue().size(); s++) {
          expected.add(s);
        }
        assertThat(p.getValue())
            .as("sequences handled in partition " + p.getKey())
            .isEqualTo(expected);
        total += p.getValue().size();
      }
      assertThat(total).as("events handled").isEqualTo(published);
    }

    long[] latenciesMillis() {
      return latencies.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    @Override
    public void close() {
      consumer.close();
      boxline.close();
      producer.close();
    }
  }

  private static List<OutgoingEvent> events(TopicName topic, int first, int count, String tag) {
    List<OutgoingEvent> out = new ArrayList<>(count);
    for (int i = first; i < first + count; i++) {
      out.add(
          OutgoingEvent.builder(topic)
              .type("order")
              .key("k" + (i % 4))
              .payload(("{\"" + tag + "\":" + i + "}").getBytes(StandardCharsets.UTF_8))
              .build());
    }
    return out;
  }

  private static HikariDataSource pool(String url, String user, String name) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    cfg.setUsername(user);
    cfg.setMaximumPoolSize(8);
    cfg.setConnectionTimeout(2_000);
    cfg.setInitializationFailTimeout(-1); // a replica may be down when the pool starts
    cfg.setPoolName("rr-" + name);
    return new HikariDataSource(cfg);
  }
}
