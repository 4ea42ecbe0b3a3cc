package io.boxline.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionListener;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Each meter {@link BoxlineMetricsTest} leaves at zero (or only compares with {@code stats()})
 * shows a value this test causes on PostgreSQL: the outbox gauges while the sequencer cannot take
 * the outbox, hand-over hits and misses, outbox vacuums that ran and that the server skipped, the
 * long-transaction warning, retention runs and dropped log segments, the announcer's announcements,
 * looks and errors, rows the sequencer set aside, and partitions lost to a take-over. Faults are
 * real: row locks, a database role that does not own the tables, a role that may no longer log in,
 * rows written by hand, a lease freed under a running consumer.
 */
class BoxlineMetricsPostgresTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final NamespacePath NS = NamespacePath.of("acme");
  private static final TopicName TOPIC = TopicName.of(NS, "orders");
  private static final String SUB = "billing";

  private TestDatabase db;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private String role;
  private HikariDataSource rolePool;

  @BeforeEach
  void createDatabase(TestInfo info) {
    db = TestDatabase.create(info.getTestMethod().orElseThrow().getName().substring(0, 12));
  }

  @AfterEach
  void dropDatabase() throws Exception {
    if (rolePool != null) {
      rolePool.close();
    }
    db.close();
    if (role != null) {
      superuser("drop owned by " + role, "drop role " + role);
    }
  }

  private BoxlineMetrics metrics(MeterRegistry r) {
    return BoxlineMetrics.builder(r).statsInterval(Duration.ofMillis(100)).build();
  }

  private static void setUp(Boxline b, Sequencing sequencing) {
    b.admin().createNamespace(NS);
    b.admin().createTopic(TOPIC, 2, sequencing);
    b.admin().createSubscription(SubscriptionSpec.of(SUB, TOPIC).startAt(StartPosition.earliest()));
  }

  private static OutgoingEvent event(int i) {
    return OutgoingEvent.builder(TOPIC)
        .type("order.placed")
        .key("k" + i)
        .payload(("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static void publish(Boxline b, int from, int n) {
    List<OutgoingEvent> events = IntStream.range(from, from + n).mapToObj(i -> event(i)).toList();
    b.inTransaction(tx -> b.publisher().publishAll(tx, events));
  }

  private static double gauge(MeterRegistry r, String name) {
    return r.find(name).gauges().stream().mapToDouble(Gauge::value).sum();
  }

  private static double functionCounter(MeterRegistry r, String name, String... tags) {
    return r.find(name).tags(tags).functionCounters().stream()
        .mapToDouble(FunctionCounter::count)
        .sum();
  }

  private static double counter(MeterRegistry r, String name) {
    return r.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  private static void superuser(String... statements) throws Exception {
    try (Connection c =
            DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  /**
   * A login role with data privileges on the test's schema (docs/guide/least-privilege.md), which
   * does not own the tables, and a pool of its own that gives up on a connection within a second.
   */
  private HikariDataSource rolePool() throws Exception {
    role = "bxm_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    String s = db.schema();
    superuser(
        "create role " + role + " login",
        "grant usage on schema " + s + " to " + role,
        "grant select, insert, update, delete on all tables in schema " + s + " to " + role,
        "grant usage, select, update on all sequences in schema " + s + " to " + role,
        "grant execute on all functions in schema " + s + " to " + role);
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(db.dataSource().getJdbcUrl());
    c.setUsername(role);
    c.setPassword("");
    c.setMaximumPoolSize(8);
    c.setConnectionTimeout(1000);
    c.setPoolName("metrics-" + role);
    rolePool = new HikariDataSource(c);
    return rolePool;
  }

  private Boxline boxlineAsRole(HikariDataSource pool, BoxlineMetrics metrics) {
    return boxlineAsRole(pool, metrics, b -> b);
  }

  private Boxline boxlineAsRole(
      HikariDataSource pool,
      BoxlineMetrics metrics,
      java.util.function.UnaryOperator<Boxline.Builder> more) {
    return db.boxline(
        store -> JdbcStore.builder(pool).schema(db.schema()).outboxVacuumEvery(1),
        b ->
            more.apply(
                b.migrate(false).observer(metrics).retentionInterval(Duration.ofMillis(200))));
  }

  @Test
  void outboxGaugesShowEventsTheSequencerCannotTakeYet() throws Exception {
    Boxline boxline =
        db.boxline(b -> b.observer(metrics(registry)).sequencerLease(Duration.ofSeconds(30)));
    setUp(boxline, Sequencing.SEQUENCER);
    Await.until(
        WAIT, "the outbox gauge", () -> registry.find("boxline.outbox.backlog").gauge() != null);
    assertThat(gauge(registry, "boxline.outbox.backlog")).isZero();
    try (Connection lock = db.dataSource().getConnection()) {
      // The sequencer moves the outbox to the log in a transaction that advances the partitions'
      // heads: with their rows locked it waits, and the events stay in the outbox.
      lock.setAutoCommit(false);
      try (Statement st = lock.createStatement()) {
        st.execute("select * from " + db.table("partition") + " for no key update");
      }
      publish(boxline, 0, 3);
      Await.until(
          WAIT, "outbox backlog 3", () -> gauge(registry, "boxline.outbox.backlog"), v -> v == 3);
      Await.until(
          WAIT,
          "outbox lag over 0.2 s",
          () -> gauge(registry, "boxline.outbox.lag"),
          v -> v >= 0.2);
      lock.rollback();
    }
    Await.until(
        WAIT, "outbox drained", () -> gauge(registry, "boxline.outbox.backlog"), v -> v == 0);
    Await.until(WAIT, "outbox lag 0", () -> gauge(registry, "boxline.outbox.lag"), v -> v == 0);
  }

  @Test
  void handOverHitsOnTheSequencingInstanceAndMissesOnAnother() {
    Boxline a = db.boxline(b -> b.observer(metrics(registry)));
    setUp(a, Sequencing.SEQUENCER);
    a.admin()
        .createSubscription(SubscriptionSpec.of("other", TOPIC).startAt(StartPosition.earliest()));
    Set<String> seenA = ConcurrentHashMap.newKeySet();
    a.consumer(SUB).handler(e -> seenA.add(e.key())).start();
    SimpleMeterRegistry registryB = new SimpleMeterRegistry();
    Boxline b = db.boxline(x -> x.sequencer(false).observer(metrics(registryB)));
    Set<String> seenB = ConcurrentHashMap.newKeySet();
    b.consumer("other").handler(e -> seenB.add(e.key())).start();
    for (int wave = 0; wave < 5; wave++) {
      publish(a, wave * 4, 4);
      int want = (wave + 1) * 4;
      Await.until(WAIT, "wave handled", () -> seenA.size() == want && seenB.size() == want);
    }
    assertThat(functionCounter(registry, "boxline.handover", "result", "hit"))
        .as("batches the sequencer handed to the consumer in its process")
        .isPositive();
    assertThat(functionCounter(registryB, "boxline.handover", "result", "miss"))
        .as("batches another process read from the log")
        .isPositive();
    assertThat(functionCounter(registryB, "boxline.handover", "result", "hit")).isZero();
  }

  @Test
  void vacuumsRunOrAreSkippedAndALongTransactionIsReported() throws Exception {
    Boxline owner =
        db.boxline(
            store -> store.outboxVacuumEvery(1).longTransactionWarning(Duration.ofMillis(500)),
            b -> b.observer(metrics(registry)));
    setUp(owner, Sequencing.SEQUENCER);
    try (Connection open = db.dataSource().getConnection()) {
      open.setAutoCommit(false);
      try (Statement st = open.createStatement()) {
        st.execute("select txid_current()"); // holds back the xmin horizon until it ends
      }
      int[] n = {0};
      Await.until(
          WAIT,
          "a vacuum and a long-transaction warning",
          () -> {
            publish(owner, n[0], 1);
            n[0]++;
            return functionCounter(registry, "boxline.long.transaction.warnings") >= 1
                && functionCounter(registry, "boxline.outbox.vacuums", "result", "ok") >= 1;
          });
      open.rollback();
    }
    assertThat(functionCounter(registry, "boxline.outbox.vacuums", "result", "failed")).isZero();
    owner.close();

    // The same schema through a role that does not own the outbox: the server skips the vacuum.
    SimpleMeterRegistry registryApp = new SimpleMeterRegistry();
    Boxline app = boxlineAsRole(rolePool(), metrics(registryApp));
    Await.until(WAIT, "the role's instance leads", () -> app.stats().sequencerLeader());
    int[] n = {100};
    Await.until(
        WAIT,
        "a skipped vacuum",
        () -> {
          publish(app, n[0], 1);
          n[0]++;
          return functionCounter(registryApp, "boxline.outbox.vacuums", "result", "failed") >= 1;
        });
    assertThat(functionCounter(registryApp, "boxline.outbox.vacuums", "result", "ok")).isZero();
  }

  @Test
  void retentionRunsAndDropsWholeLogSegments() {
    Boxline boxline =
        db.boxline(
            store -> store.logSegmentWidth(Duration.ofSeconds(1)),
            b -> b.observer(metrics(registry)).retentionInterval(Duration.ofMillis(200)));
    setUp(boxline, Sequencing.SEQUENCER);
    boxline.admin().setRetention(TOPIC, RetentionPolicy.byAge(Duration.ofSeconds(2)));
    Set<String> seen = ConcurrentHashMap.newKeySet();
    boxline.consumer(SUB).handler(e -> seen.add(e.key())).start();
    Await.until(
        WAIT,
        "retention runs counted",
        () -> functionCounter(registry, "boxline.retention.runs"),
        v -> v >= 1);
    // Waves of events, each after the log opened another segment, until a segment was dropped.
    int[] published = {0};
    Await.until(
        WAIT,
        "a log segment dropped",
        () -> {
          long segments = segments();
          publish(boxline, published[0], 5);
          published[0] += 5;
          Await.until(WAIT, "another segment opened", () -> segments() > segments);
          return functionCounter(registry, "boxline.retention.log.segments.dropped") >= 1;
        });
    assertThat(functionCounter(registry, "boxline.retention.log.segments.dropped"))
        .isEqualTo(boxline.stats().logSegmentsDropped());
    assertThat(functionCounter(registry, "boxline.retention.deleted")).isPositive();
  }

  private long segments() {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        var rs = st.executeQuery("select max(number) from " + db.table("log_segment"))) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void theAnnouncerAnnouncesLooksAndCountsWhatFailed() throws Exception {
    db.store(); // migrated by the owner
    HikariDataSource pool = rolePool();
    // At most one announcement in a transaction per 10 s: later commits are looked for.
    Boxline boxline =
        boxlineAsRole(
            pool, metrics(registry), b -> b.producerNotifyInterval(Duration.ofSeconds(10)));
    setUp(boxline, Sequencing.IN_TRANSACTION);
    // Committed through Boxline: announced to other processes.
    publish(boxline, 0, 2);
    Await.until(
        WAIT,
        "an announcement",
        () -> functionCounter(registry, "boxline.announcer.announcements"),
        v -> v >= 1);
    // Committed on a plain connection, within the interval: Boxline does not see the commit, so
    // it looks at the partitions' heads until the events show.
    try (Connection tx = pool.getConnection()) {
      tx.setAutoCommit(false);
      boxline.publisher().publish(tx, event(2));
      tx.commit();
    }
    Await.until(
        WAIT,
        "a look at the heads",
        () -> functionCounter(registry, "boxline.announcer.looks"),
        v -> v >= 1);
    assertThat(functionCounter(registry, "boxline.announcer.errors")).isZero();

    // The role may no longer log in and its sessions end: the next look cannot read the heads.
    try (Connection tx =
        DriverManager.getConnection(db.dataSource().getJdbcUrl(), "postgres", "")) {
      superuser(
          "alter role " + role + " nologin",
          "select pg_terminate_backend(pid) from pg_stat_activity where usename = '" + role + "'");
      tx.setAutoCommit(false);
      boxline.publisher().publish(tx, event(3));
      tx.commit();
      Await.until(
          WAIT,
          "an announcer error",
          () -> functionCounter(registry, "boxline.announcer.errors"),
          v -> v >= 1);
    } finally {
      superuser("alter role " + role + " login");
    }
  }

  @Test
  void rowsWrittenByHandForAPartitionThatDoesNotExistAreSetAside() throws Exception {
    Boxline boxline = db.boxline(b -> b.observer(metrics(registry)));
    setUp(boxline, Sequencing.SEQUENCER);
    long topicId = boxline.admin().topic(TOPIC).orElseThrow().id();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "insert into "
              + db.table("outbox")
              + " (event_id, topic_id, partition, event_type, content_type, payload)"
              + " values (gen_random_uuid(), "
              + topicId
              + ", 99, 't', 'application/json', '{}'::bytea)");
    }
    Await.until(
        WAIT,
        "the row set aside",
        () -> functionCounter(registry, "boxline.sequencer.set.aside"),
        v -> v == 1);
  }

  @Test
  void aConsumerWhoseLeaseIsTakenOverCountsItsPartitionLost() throws Exception {
    Boxline boxline = db.boxline(b -> b.observer(metrics(registry)));
    boxline.admin().createNamespace(NS);
    boxline.admin().createTopic(TOPIC, 1);
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of(SUB, TOPIC).startAt(StartPosition.earliest()));
    boxline
        .admin()
        .setDefaultGroupPolicy(
            GroupPolicy.DEFAULT
                .withMinCheckInInterval(Duration.ofMillis(150))
                .withDeadlineMultiplier(10)
                .withReleaseGrace(Duration.ofSeconds(2))
                .withIdleRelease(Duration.ofSeconds(30)));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Set<TopicPartition> lost = ConcurrentHashMap.newKeySet();
    boxline
        .consumer(SUB)
        .id("old")
        .listener(
            new PartitionListener() {
              @Override
              public void onLost(Set<TopicPartition> partitions) {
                lost.addAll(partitions);
              }
            })
        .handler(
            e -> {
              entered.countDown();
              try {
                release.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException abandoned) {
                Thread.currentThread().interrupt();
              }
            })
        .start();
    publish(boxline, 0, 1);
    try {
      assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(counter(registry, "boxline.partitions.lost")).isZero();
      // An operator frees the lease; another member takes it with a newer epoch.
      Store store = db.store();
      long topicId = boxline.admin().topic(TOPIC).orElseThrow().id();
      store.coordination().forceRelease(SUB, List.of(PartitionKey.of(topicId, 0)));
      boxline.consumer(SUB).id("taker").handler(e -> {}).start();
      Await.until(WAIT, "the old member told", () -> !lost.isEmpty());
      Await.until(
          WAIT, "lost counted", () -> counter(registry, "boxline.partitions.lost"), v -> v == 1);
    } finally {
      release.countDown();
    }
  }
}
