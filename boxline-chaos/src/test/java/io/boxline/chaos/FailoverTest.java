package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PostgreSQL fails over under load: a primary and a streaming replica of the test's own, Boxline
 * (sequencer, consumer, producer) on a multi-host URL with {@code targetServerType=primary}; the
 * primary is crashed and the replica promoted. Synchronous replication loses no acknowledged event;
 * asynchronous may lose the newest commits, and the test measures how many. Either way the new
 * primary's log is gap-free and never holds a sequence twice, every event in it is delivered (none
 * skipped), and producing and delivery resume on their own.
 */
class FailoverTest {
  private static final TopicName TOPIC = TopicName.of("fo/app", "orders");

  /** What one failover showed. */
  record Outcome(
      int acknowledged, int lost, long writesBackMillis, long deliveriesBackMillis, int inLog) {}

  @Test
  @Timeout(180)
  void synchronousReplicationLosesNoAcknowledgedEvent() throws Exception {
    Outcome o = failover(true);
    assertThat(o.lost()).as("acknowledged events missing on the promoted replica").isZero();
  }

  @Test
  @Timeout(180)
  void asynchronousReplicationNeverSkipsOrRenumbersAfterAFailover() throws Exception {
    Outcome o = failover(false);
    assertThat(o.lost())
        .as("lost acknowledged events are at most the newest ones, a small part")
        .isLessThan(o.acknowledged() / 2);
  }

  private Outcome failover(boolean synchronous) throws Exception {
    try (PostgresPair pair = PostgresPair.start(synchronous)) {
      HikariConfig cfg = new HikariConfig();
      cfg.setJdbcUrl(pair.multiHostUrl());
      cfg.setUsername("postgres");
      cfg.setMaximumPoolSize(10);
      cfg.setConnectionTimeout(3_000);
      cfg.setPoolName("failover");
      Set<UUID> handled = ConcurrentHashMap.newKeySet();
      List<UUID> acked = new CopyOnWriteArrayList<>();
      AtomicLong lastAckNanos = new AtomicLong();
      AtomicBoolean producing = new AtomicBoolean(true);
      Map<UUID, Long> handledAt = new ConcurrentHashMap<>();
      try (HikariDataSource pool = new HikariDataSource(cfg);
          Boxline boxline =
              Boxline.builder()
                  .store(JdbcStore.builder(pool).schema("fo").build())
                  .instanceId("app")
                  .build()
                  .start()) {
        boxline.admin().createNamespace(NamespacePath.of("fo/app"));
        boxline.admin().createTopic(TOPIC, 4);
        boxline.admin().createSubscription(SubscriptionSpec.of("fo", TOPIC));
        Consumer consumer =
            boxline
                .consumer("fo")
                .handler(
                    e -> {
                      handled.add(e.id());
                      handledAt.putIfAbsent(e.id(), System.nanoTime());
                    })
                .start();
        Thread producer =
            new Thread(
                () -> {
                  long i = 0;
                  while (producing.get()) {
                    OutgoingEvent e =
                        OutgoingEvent.builder(TOPIC)
                            .type("order")
                            .key("k" + (i % 20))
                            .payload(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))
                            .build();
                    try {
                      PublishResult r =
                          boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
                      acked.add(r.eventId());
                      lastAckNanos.set(System.nanoTime());
                      i++;
                    } catch (RuntimeException failed) {
                      ChildArgs.sleepQuietly(Duration.ofMillis(50)); // the database is failing over
                    }
                  }
                },
                "failover-producer");
        producer.start();
        await("300 events acknowledged", Duration.ofSeconds(60), () -> acked.size() >= 300);

        long crash = System.nanoTime();
        int ackedBefore = acked.size();
        pair.crashPrimary();
        pair.promoteStandby();
        await(
            "an acknowledged publish after the failover",
            Duration.ofSeconds(60),
            () -> lastAckNanos.get() > crash && acked.size() > ackedBefore);
        long writesBack = (System.nanoTime() - crash) / 1_000_000;
        int mark = acked.size();
        await("300 more acknowledged", Duration.ofSeconds(60), () -> acked.size() >= mark + 300);
        UUID afterFailover = acked.get(mark);
        await(
            "an event published after the failover delivered",
            Duration.ofSeconds(60),
            () -> handled.contains(afterFailover));
        long deliveriesBack = (handledAt.get(afterFailover) - crash) / 1_000_000;
        producing.set(false);
        producer.join(30_000);

        // What the promoted replica holds is the truth now.
        Set<UUID> inLog = new HashSet<>();
        try (Connection c = DriverManager.getConnection(pair.standbyUrl(), "postgres", "");
            Statement st = c.createStatement()) {
          try (ResultSet rs = st.executeQuery("SELECT event_id FROM fo.log")) {
            while (rs.next()) {
              inLog.add(rs.getObject(1, UUID.class));
            }
          }
          try (ResultSet rs =
              st.executeQuery(
                  "SELECT count(*) FROM (SELECT topic_id, partition FROM fo.log GROUP BY topic_id,"
                      + " partition HAVING max(seq) <> count(*) OR count(DISTINCT seq) <> count(*))"
                      + " bad")) {
            rs.next();
            assertThat(rs.getInt(1)).as("partitions with a gap or a sequence twice").isZero();
          }
          try (ResultSet rs =
              st.executeQuery("SELECT count(*) - count(DISTINCT event_id) FROM fo.log")) {
            rs.next();
            assertThat(rs.getInt(1)).as("events logged twice").isZero();
          }
        }
        await(
            "every event of the new primary's log delivered",
            Duration.ofSeconds(60),
            () -> handled.containsAll(inLog));
        consumer.close();
        Set<UUID> lost = new HashSet<>(acked);
        lost.removeAll(inLog);
        Outcome o =
            new Outcome(acked.size(), lost.size(), writesBack, deliveriesBack, inLog.size());
        System.out.printf(
            "failover (%s replication): %d acknowledged, %d of them lost; writes again %d ms and"
                + " deliveries again %d ms after the crash; %d events in the new primary's log%n",
            synchronous ? "synchronous" : "asynchronous",
            o.acknowledged(),
            o.lost(),
            o.writesBackMillis(),
            o.deliveriesBackMillis(),
            o.inLog());
        return o;
      }
    }
  }

  private static void await(String what, Duration max, BooleanSupplier condition) {
    long deadline = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + max + " waiting for " + what);
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(20)); // polling a condition, bounded above
    }
  }
}
