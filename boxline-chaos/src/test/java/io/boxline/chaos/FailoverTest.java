package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.relay.Relay;
import io.boxline.relay.Sink;
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
 * PostgreSQL (and MariaDB) fails over under load: a primary and a streaming replica of the test's
 * own, Boxline (sequencer, consumer, relay, producer) on a multi-host URL with {@code
 * targetServerType=primary}; the primary is crashed and the replica promoted. Synchronous
 * replication loses no acknowledged event; asynchronous may lose the newest commits, and the test
 * measures how many. Either way the new primary's log is gap-free and never holds a sequence twice,
 * every event in it is delivered (none skipped) to the consumer and through the relay, and
 * producing and delivery resume on their own.
 */
class FailoverTest {
  private static final TopicName TOPIC = TopicName.of("fo/app", "orders");

  /** What one failover showed. */
  record Outcome(
      int acknowledged,
      int lost,
      long writesBackMillis,
      long deliveriesBackMillis,
      long relayBackMillis,
      int inLog) {}

  /** Failovers per test: 1 in CI; {@code -Dboxline.failover.repeat=20} for percentiles. */
  static final int REPEAT = Integer.getInteger("boxline.failover.repeat", 1);

  /** A primary and its replica, as one failover test sees them. */
  interface Pair extends AutoCloseable {
    /** What clients use: it follows the primary. */
    String url();

    String user();

    void crashPrimary();

    void promote();

    /** A connection to the promoted replica, for the checks. */
    Connection newPrimary() throws java.sql.SQLException;

    @Override
    void close();
  }

  static Pair postgres(boolean synchronous) {
    PostgresPair pair = PostgresPair.start(synchronous);
    return new Pair() {
      public String url() {
        return pair.multiHostUrl();
      }

      public String user() {
        return "postgres";
      }

      public void crashPrimary() {
        pair.crashPrimary();
      }

      public void promote() {
        pair.promoteStandby();
      }

      public Connection newPrimary() throws java.sql.SQLException {
        return DriverManager.getConnection(pair.standbyUrl(), "postgres", "");
      }

      public void close() {
        pair.close();
      }
    };
  }

  static Pair mariadb(boolean semiSync) {
    MariaDbPair pair = MariaDbPair.start(semiSync);
    return new Pair() {
      public String url() {
        return pair.sequentialUrl();
      }

      public String user() {
        return MariaDbPair.USER;
      }

      public void crashPrimary() {
        pair.crashPrimary();
      }

      public void promote() {
        pair.promoteReplica();
      }

      public Connection newPrimary() throws java.sql.SQLException {
        return DriverManager.getConnection(pair.replicaUrl(), "root", "");
      }

      public void close() {
        pair.close();
      }
    };
  }

  @Test
  @Timeout(1800)
  void synchronousReplicationLosesNoAcknowledgedEvent() throws Exception {
    List<Outcome> all = new java.util.ArrayList<>();
    for (int i = 0; i < REPEAT; i++) {
      Outcome o = failover(postgres(true));
      assertThat(o.lost()).as("acknowledged events missing on the promoted replica").isZero();
      all.add(o);
    }
    summarize("PostgreSQL, synchronous", all);
  }

  @Test
  @Timeout(1800)
  void asynchronousReplicationNeverSkipsOrRenumbersAfterAFailover() throws Exception {
    List<Outcome> all = new java.util.ArrayList<>();
    for (int i = 0; i < REPEAT; i++) {
      Outcome o = failover(postgres(false));
      assertThat(o.lost())
          .as("lost acknowledged events are at most the newest ones, a small part")
          .isLessThan(o.acknowledged() / 2);
      all.add(o);
    }
    summarize("PostgreSQL, asynchronous", all);
  }

  @Test
  @Timeout(1800)
  void mariaDbSemiSynchronousReplicationLosesNoAcknowledgedEvent() throws Exception {
    List<Outcome> all = new java.util.ArrayList<>();
    for (int i = 0; i < REPEAT; i++) {
      Outcome o = failover(mariadb(true));
      assertThat(o.lost()).as("acknowledged events missing on the promoted replica").isZero();
      all.add(o);
    }
    summarize("MariaDB, semi-synchronous", all);
  }

  @Test
  @Timeout(1800)
  void mariaDbAsynchronousReplicationNeverSkipsOrRenumbersAfterAFailover() throws Exception {
    List<Outcome> all = new java.util.ArrayList<>();
    for (int i = 0; i < REPEAT; i++) {
      Outcome o = failover(mariadb(false));
      assertThat(o.lost())
          .as("lost acknowledged events are at most the newest ones, a small part")
          .isLessThan(o.acknowledged() / 2);
      all.add(o);
    }
    summarize("MariaDB, asynchronous", all);
  }

  /** Prints the failovers' recovery times as percentiles (nearest rank) and the losses. */
  private static void summarize(String replication, List<Outcome> all) {
    System.out.printf(
        "failovers (%s, %d): lost %s; writes back p50 %d / max %d ms; deliveries p50 %d / max %d"
            + " ms; relay p50 %d / max %d ms%n",
        replication,
        all.size(),
        all.stream().map(o -> String.valueOf(o.lost())).toList(),
        rank(all, Outcome::writesBackMillis, 50),
        rank(all, Outcome::writesBackMillis, 100),
        rank(all, Outcome::deliveriesBackMillis, 50),
        rank(all, Outcome::deliveriesBackMillis, 100),
        rank(all, Outcome::relayBackMillis, 50),
        rank(all, Outcome::relayBackMillis, 100));
  }

  private static long rank(
      List<Outcome> all, java.util.function.ToLongFunction<Outcome> f, int percent) {
    long[] v = all.stream().mapToLong(f).sorted().toArray();
    int i = (int) Math.ceil(percent / 100.0 * v.length) - 1;
    return v[Math.max(0, i)];
  }

  private Outcome failover(Pair opened) throws Exception {
    try (Pair pair = opened) {
      HikariConfig cfg = new HikariConfig();
      cfg.setJdbcUrl(pair.url());
      cfg.setUsername(pair.user());
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
        boxline.admin().createSubscription(SubscriptionSpec.of("fo-relay", TOPIC));
        // The relay's destination confirms at once: what is tested is the relay's database side.
        Set<UUID> relayed = ConcurrentHashMap.newKeySet();
        Map<UUID, Long> relayedAt = new ConcurrentHashMap<>();
        Sink sink =
            new Sink() {
              @Override
              public void send(List<Event> events) {
                long now = System.nanoTime();
                for (Event e : events) {
                  relayed.add(e.id());
                  relayedAt.putIfAbsent(e.id(), now);
                }
              }

              @Override
              public void close() {}
            };
        Relay relay = Relay.builder(boxline).subscription("fo-relay").sink(sink).start();
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
        pair.promote();
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
        await(
            "an event published after the failover relayed",
            Duration.ofSeconds(60),
            () -> relayed.contains(afterFailover));
        long relayBack = (relayedAt.get(afterFailover) - crash) / 1_000_000;
        producing.set(false);
        producer.join(30_000);

        // What the promoted replica holds is the truth now, once its sequencer has numbered what
        // the producer committed last (until then an event is in the outbox, not yet in the log).
        Set<UUID> inLog = new HashSet<>();
        String partitionColumn =
            pair.url().startsWith("jdbc:mariadb") ? "`partition`" : "partition";
        try (Connection c = pair.newPrimary();
            Statement st = c.createStatement()) {
          await(
              "the outbox sequenced",
              Duration.ofSeconds(60),
              () -> {
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM fo.outbox")) {
                  rs.next();
                  return rs.getLong(1) == 0;
                } catch (java.sql.SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
          try (ResultSet rs = st.executeQuery("SELECT event_id FROM fo.log")) {
            while (rs.next()) {
              inLog.add(UUID.fromString(rs.getString(1)));
            }
          }
          try (ResultSet rs =
              st.executeQuery(
                  "SELECT count(*) FROM (SELECT topic_id FROM fo.log GROUP BY topic_id, "
                      + partitionColumn
                      + " HAVING max(seq) <> count(*) OR count(DISTINCT seq) <> count(*)) bad")) {
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
        await(
            "every event of the new primary's log relayed",
            Duration.ofSeconds(60),
            () -> relayed.containsAll(inLog));
        relay.close();
        consumer.close();
        Set<UUID> lost = new HashSet<>(acked);
        lost.removeAll(inLog);
        Outcome o =
            new Outcome(
                acked.size(), lost.size(), writesBack, deliveriesBack, relayBack, inLog.size());
        System.out.printf(
            "failover (%s): %d acknowledged, %d of them lost; writes again %d ms, deliveries %d ms"
                + " and the relay %d ms after the crash; %d events in the new primary's log%n",
            pair.url().replaceAll("\\?.*", ""),
            o.acknowledged(),
            o.lost(),
            o.writesBackMillis(),
            o.deliveriesBackMillis(),
            o.relayBackMillis(),
            o.inLog());
        return o;
      }
    }
  }

  /**
   * Polls {@code condition} until it holds, failing after {@code max} (also ReplicaReadsTest's).
   */
  static void await(String what, Duration max, BooleanSupplier condition) {
    long deadline = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + max + " waiting for " + what);
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(20)); // polling a condition, bounded above
    }
  }
}
