package io.boxline.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.GroupPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.TaskOptions;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * What an application does with Boxline, run by the least-privilege tests under a database role
 * that holds only data privileges: topics and a subscription, publishing (Java, idempotent,
 * in-transaction sequencing and the SQL publish), a consumer group of two members with an inbox,
 * retries, dead letters (redriven and purged), tasks (run, blocked, unblocked) and the retention of
 * events, inbox entries, dead letters and idempotency keys.
 */
public final class LeastPrivilegeWorkload {
  public static final Duration WAIT = Duration.ofSeconds(60);

  /** How long dead letters stay: long enough to see and redrive them, short enough to see go. */
  public static final Duration DEAD_LETTER_RETENTION = Duration.ofSeconds(4);

  private static final RetryPolicy QUICK =
      RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(50))
          .inPlaceAttempts(1)
          .maxAttempts(2);

  /** Publishes one JSON event through the database's {@code publish} routine, in {@code tx}. */
  @FunctionalInterface
  public interface SqlPublish {
    void publish(Connection tx, String topic, String key, String json) throws SQLException;
  }

  private LeastPrivilegeWorkload() {}

  /** Boxline settings for the workload on a schema migrated by someone else. */
  public static Boxline.Builder settings(Boxline.Builder b) {
    return b.migrate(false)
        .sequencerLease(Duration.ofSeconds(3))
        .retentionInterval(Duration.ofMillis(200))
        .inboxRetention(Duration.ofSeconds(1))
        .deadLetterRetention(DEAD_LETTER_RETENTION)
        .idempotencyRetention(Duration.ofSeconds(1));
  }

  /** Runs the workload and checks each step; {@code app} connects as the application role. */
  public static void run(Boxline boxline, DataSource app, String schema, SqlPublish sqlPublish)
      throws Exception {
    TopicName orders = TopicName.parse("acme/shop/orders");
    TopicName audit = TopicName.parse("acme/shop/audit");
    boxline.admin().createNamespace(orders.namespace());
    boxline.admin().createTopic(orders, 8);
    boxline.admin().createTopic(audit, 2, Sequencing.IN_TRANSACTION);
    boxline.admin().setRetention(orders, RetentionPolicy.byAge(Duration.ofSeconds(1)));
    boxline.admin().createSubscription(SubscriptionSpec.of("billing", orders, audit));
    boxline
        .admin()
        .setGroupPolicy(
            "billing",
            GroupPolicy.DEFAULT
                .withMinCheckInInterval(Duration.ofMillis(150))
                .withReleaseGrace(Duration.ofSeconds(2))
                .withIdleRelease(Duration.ofSeconds(30)));

    Set<String> handled = ConcurrentHashMap.newKeySet();
    AtomicBoolean poisonFixed = new AtomicBoolean();
    AtomicInteger flakyCalls = new AtomicInteger();
    EventHandler handler =
        e -> {
          if ("poison-a".equals(e.key()) && !poisonFixed.get()) {
            throw new IllegalStateException("poison a");
          }
          if ("poison-b".equals(e.key())) {
            throw new IllegalStateException("poison b");
          }
          if ("flaky".equals(e.key()) && flakyCalls.getAndIncrement() == 0) {
            throw new IllegalStateException("flaky once");
          }
          handled.add(body(e));
        };
    Consumer m1 =
        boxline.consumer("billing").id("m1").retryPolicy(QUICK).inbox().handler(handler).start();
    Consumer m2 =
        boxline.consumer("billing").id("m2").retryPolicy(QUICK).inbox().handler(handler).start();

    // Publish: 1,200 plain events in four transactions, a few special keys, an idempotent event
    // twice, in-transaction sequencing, and the SQL publish.
    Set<String> expected = new HashSet<>();
    for (int chunk = 0; chunk < 4; chunk++) {
      List<Object> events = new ArrayList<>();
      for (int i = chunk * 300; i < (chunk + 1) * 300; i++) {
        events.add(event(orders, "k" + (i % 50), "order-" + i, null));
        expected.add("order-" + i);
      }
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    }
    for (String key : List.of("flaky", "poison-a", "poison-b")) {
      boxline.inTransaction(
          tx -> boxline.publisher().publish(tx, event(orders, key, "special-" + key, null)));
    }
    expected.add("special-flaky");
    PublishResult first =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, event(orders, "i", "idempotent", "once")));
    PublishResult again =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, event(orders, "i", "idempotent", "once")));
    assertThat(again.duplicate()).isTrue();
    assertThat(again.eventId()).isEqualTo(first.eventId());
    expected.add("idempotent");
    for (int i = 0; i < 20; i++) {
      String body = "audit-" + i;
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, event(audit, "a", body, null)));
      expected.add(body);
    }
    try (Connection tx = app.getConnection()) {
      tx.setAutoCommit(false);
      sqlPublish.publish(tx, orders.toString(), "sql", "{\"from\":\"sql\"}");
      tx.commit();
    }
    boxline.publisher().committed();

    // Consume: both members take part; everything but the two poisoned events is handled.
    Await.until(
        WAIT,
        "both members of the group hold partitions",
        () -> !m1.assignedPartitions().isEmpty() && !m2.assignedPartitions().isEmpty());
    assertThat(boxline.admin().group("billing").members()).hasSize(2);
    Await.until(
        WAIT,
        "every healthy event handled",
        () ->
            handled.containsAll(expected)
                && handled.stream().anyMatch(b -> b.contains("\"from\"") && b.contains("sql")));
    assertThat(flakyCalls.get()).as("the flaky event was retried").isGreaterThanOrEqualTo(2);
    assertThat(handled).noneMatch(b -> b.startsWith("special-poison"));

    // Dead letters: both poisoned events; one is redriven after the fix, the other stays and goes
    // with the dead-letter retention.
    Await.until(
        WAIT,
        "both poisoned events dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("billing")).size() == 2);
    List<DeadLetter> dead = boxline.deadLetters().list(DeadLetterQuery.of("billing"));
    assertThat(dead).allMatch(d -> d.lastError().contains("poison"));
    poisonFixed.set(true);
    assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of("billing").key("poison-a")))
        .isEqualTo(1);
    Await.until(WAIT, "the redriven event handled", () -> handled.contains("special-poison-a"));
    Await.until(
        WAIT,
        "the other dead letter purged by retention",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("billing")).isEmpty());
    assertThat(handled).doesNotContain("special-poison-b");

    // Tasks: one runs, one is blocked, then unblocked and run.
    AtomicBoolean chargeWorks = new AtomicBoolean();
    Set<String> tasksRun = ConcurrentHashMap.newKeySet();
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handle("send-email", String.class, (to, task) -> tasksRun.add("email:" + to))
        .handle(
            "charge",
            String.class,
            (order, task) -> {
              if (!chargeWorks.get()) {
                throw new IllegalStateException("payment provider down");
              }
              tasksRun.add("charge:" + order);
            })
        .start();
    boxline.inTransaction(
        tx -> {
          boxline
              .tasks()
              .schedule(tx, "send-email", "a@x", TaskOptions.options().idempotencyKey("welcome-a"));
          return boxline.tasks().schedule(tx, "charge", "order-1");
        });
    Await.until(WAIT, "the email task ran", () -> tasksRun.contains("email:a@x"));
    Await.until(WAIT, "the charge task blocked", () -> boxline.tasks().blocked().size() == 1);
    chargeWorks.set(true);
    assertThat(boxline.tasks().unblock(boxline.tasks().blocked().get(0).event().id())).isTrue();
    Await.until(WAIT, "the charge task ran", () -> tasksRun.contains("charge:order-1"));

    // Retention: events of the orders topic past their age, inbox entries and idempotency keys.
    Await.until(
        WAIT,
        "the orders topic's events deleted by retention",
        () ->
            count(
                    app,
                    "SELECT count(*) FROM "
                        + schema
                        + ".log l JOIN "
                        + schema
                        + ".topic t ON t.id = l.topic_id WHERE t.name = 'orders'")
                == 0);
    Await.until(WAIT, "inbox entries purged", () -> boxline.admin().inboxSize("billing") == 0);
    Await.until(
        WAIT,
        "idempotency keys purged",
        () -> count(app, "SELECT count(*) FROM " + schema + ".idempotency") == 0);
    // The audit topic keeps its events (no retention set).
    assertThat(
            count(
                app,
                "SELECT count(*) FROM "
                    + schema
                    + ".log l JOIN "
                    + schema
                    + ".topic t ON t.id = l.topic_id WHERE t.name = 'audit'"))
        .isEqualTo(20);
    m1.close();
    m2.close();
  }

  private static OutgoingEvent event(
      TopicName topic, String key, String body, String idempotencyKey) {
    return OutgoingEvent.builder(topic)
        .type("shop.event")
        .key(key)
        .idempotencyKey(idempotencyKey)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static String body(Event e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  /** A pool of {@code size} connections to {@code server} as {@code user}. */
  public static HikariDataSource pool(TestServer server, String user, String password, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(server.url());
    cfg.setUsername(user);
    cfg.setPassword(password);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(0);
    cfg.setPoolName("lp-" + user);
    cfg.setConnectionTimeout(10_000);
    return new HikariDataSource(cfg);
  }

  /** Runs each statement on {@code ds}, in order, each in auto-commit. */
  public static void execute(DataSource ds, String... statements) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    }
  }

  /** Records what Boxline's JDBC store logs (at every level) while open. */
  public static final class StoreLog implements AutoCloseable {
    private final java.util.logging.Logger logger =
        java.util.logging.Logger.getLogger("io.boxline.jdbc.internal.SqlStore");
    private final java.util.logging.Level level = logger.getLevel();
    private final List<java.util.logging.LogRecord> records =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.logging.Handler handler =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord r) {
            records.add(r);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };

    public StoreLog() {
      logger.setLevel(java.util.logging.Level.ALL);
      logger.addHandler(handler);
    }

    /** Messages logged at {@code level} that contain {@code text}. */
    public List<String> messages(java.util.logging.Level level, String text) {
      return records.stream()
          .filter(r -> r.getLevel().equals(level) && r.getMessage().contains(text))
          .map(java.util.logging.LogRecord::getMessage)
          .toList();
    }

    @Override
    public void close() {
      logger.removeHandler(handler);
      logger.setLevel(level);
    }
  }

  /** A {@code SELECT count(*)} on {@code ds}. */
  public static long count(DataSource ds, String sql) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }
}
