package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.net.FaultProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Faults of the network between Boxline and PostgreSQL, through a {@link FaultProxy} on real
 * sockets: a commit whose answer is lost, a member cut off (blackholed) for longer than its group
 * deadline, every connection reset in mid-traffic, and a slow link. After each: nothing lost, per
 * key order, no stale member moving a cursor, duplicates only of in-flight batches.
 */
class NetworkFaultTest {
  private static final GroupPolicy POLICY =
      GroupPolicy.DEFAULT
          .withMinCheckInInterval(Duration.ofMillis(200))
          .withDeadlineMultiplier(5)
          .withReleaseGrace(Duration.ofSeconds(2))
          .withIdleRelease(Duration.ofSeconds(120));

  private TestDatabase db;
  private FaultProxy proxy;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void setUp() {
    db = TestDatabase.create("netfault");
    URI target = URI.create(db.server().url().substring("jdbc:".length()));
    proxy = FaultProxy.start(target.getHost(), target.getPort() < 0 ? 5432 : target.getPort());
  }

  @AfterEach
  void tearDown() throws Exception {
    proxy.heal();
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    proxy.close();
    db.close();
  }

  /** A pool whose connections go through the proxy. */
  private HikariDataSource poolThroughProxy(String name) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(proxy.jdbcUrlThrough(db.server().url()));
    c.setUsername(db.server().user());
    c.setPassword(db.server().password());
    c.setPoolName(name);
    c.setMaximumPoolSize(8);
    c.setConnectionTimeout(5_000);
    HikariDataSource ds = new HikariDataSource(c);
    closing.add(ds);
    return ds;
  }

  private Boxline boxlineThroughProxy(String instance, boolean sequencer) {
    Boxline b =
        Boxline.builder()
            .store(JdbcStore.builder(poolThroughProxy(instance)).schema(db.schema()).build())
            .instanceId(instance)
            .sequencer(sequencer)
            .build()
            .start();
    closing.add(b);
    return b;
  }

  private TopicName topic(Boxline admin, String name, int partitions, String subscription) {
    TopicName t = TopicName.of("net/fault", name);
    admin.admin().createNamespace(NamespacePath.of("net/fault"));
    admin.admin().createTopic(t, partitions);
    admin.admin().createSubscription(SubscriptionSpec.of(subscription, t));
    admin.admin().setDefaultGroupPolicy(POLICY);
    return t;
  }

  private long count(String sql, Object... args) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * The recipe for a commit of unknown outcome: publish again with the same idempotency key. When
   * the first commit took effect the second stores nothing; when it did not, the second stores the
   * event. Either way the event is there once.
   */
  @Test
  @Timeout(60)
  void aCommitWhoseAnswerIsLostIsStoredOnceWhenRetriedWithItsIdempotencyKey() throws Exception {
    Boxline direct = db.boxline(b -> b.instanceId("direct").sequencer(false));
    TopicName t = topic(direct, "orders", 2, "unused");
    Boxline app = boxlineThroughProxy("app", false);
    OutgoingEvent event =
        OutgoingEvent.builder(t)
            .type("order.placed")
            .key("order-42")
            .payload("{}".getBytes(StandardCharsets.UTF_8))
            .idempotencyKey("order-42-placed")
            .build();

    proxy.resetAfterReplyTo("idempotency", "COMMIT"); // the publish's commit, not a loop's
    assertThatThrownBy(() -> app.inTransaction(tx -> app.publisher().publish(tx, event)))
        .as("the commit's answer never arrives");
    assertThat(proxy.resets()).isEqualTo(1);
    PublishResult retried = app.inTransaction(tx -> app.publisher().publish(tx, event));
    assertThat(retried.duplicate()).as("the first commit took effect").isTrue();
    assertThat(
            count(
                "SELECT count(*) FROM " + db.table("outbox") + " WHERE event_id = ?",
                retried.eventId()))
        .as("the event, once")
        .isEqualTo(1);
    assertThat(count("SELECT count(*) FROM " + db.table("outbox"))).isEqualTo(1);
  }

  /** Who handled which event, in the order handled. */
  private record Handled(String member, Event event) {}

  private Consumer member(Boxline b, String id, String subscription, List<Handled> log) {
    Consumer c =
        b.consumer(subscription)
            .id(id)
            .batchSize(BATCH)
            .concurrency(CONCURRENCY)
            .handler(e -> log.add(new Handled(id, e)))
            .start();
    closing.add(c);
    return c;
  }

  private static final int BATCH = 20;
  private static final int CONCURRENCY = 2;

  private static Set<String> owners(Boxline b, String subscription) {
    Set<String> out = new HashSet<>();
    for (GroupState.Partition p : b.admin().group(subscription).partitions()) {
      out.add(p.owner() == null ? "-" : p.owner());
    }
    return out;
  }

  private static void awaitCaughtUp(Boxline b, String subscription) {
    Await.until(
        Duration.ofSeconds(60),
        subscription + " caught up",
        () -> b.admin().lag(subscription),
        lags -> lags.stream().allMatch(l -> l.backlog() == 0));
  }

  private static Set<UUID> handledIds(List<Handled> log) {
    Set<UUID> ids = new HashSet<>();
    log.forEach(h -> ids.add(h.event().id()));
    return ids;
  }

  /**
   * Every published event handled, each partition's events first handled in sequence order (so each
   * key's in publish order); returns how many deliveries were repeats.
   */
  private static int checkDeliveries(Set<UUID> published, List<Handled> log) {
    Map<String, Long> lastFirstSeen = new HashMap<>();
    Set<UUID> seen = new HashSet<>();
    int repeats = 0;
    for (Handled h : log) {
      Event e = h.event();
      if (!seen.add(e.id())) {
        repeats++;
        continue;
      }
      String part = e.topic() + "#" + e.partition();
      Long before = lastFirstSeen.put(part, e.sequence());
      assertThat(before == null || before < e.sequence())
          .as("partition " + part + ": " + e.sequence() + " first handled after " + before)
          .isTrue();
    }
    assertThat(seen).containsAll(published);
    return repeats;
  }

  /**
   * A member's link to the database goes silent (blackholed, connections open) for longer than the
   * group's deadline. The other member takes its partitions once its deadline passes and delivers
   * from the committed cursors; when the link comes back the cut-off member has lost its leases,
   * its late commits are fenced, and it rejoins. Nothing is lost, order holds, and the repeats are
   * at most the cut-off member's in-flight batches.
   */
  @Test
  @Timeout(120)
  void aMemberCutOffLongerThanItsDeadlineIsTakenOverAndRejoinsWithoutMovingACursor()
      throws Exception {
    Boxline p = db.boxline(b -> b.instanceId("publisher"));
    TopicName t = topic(p, "jobs", 4, "net-group");
    List<Handled> log = new CopyOnWriteArrayList<>();
    Boxline viaProxy = boxlineThroughProxy("a-instance", false);
    Consumer a = member(viaProxy, "a", "net-group", log);
    Consumer b =
        member(db.boxline(x -> x.instanceId("b-instance").sequencer(false)), "b", "net-group", log);
    Set<UUID> published = new HashSet<>(Publishing.wave(p, List.of(t), 400, 20, "before"));
    // A partition given up for b is picked up when it has events: keep some coming until then.
    int[] round = {0};
    Await.until(
        Duration.ofSeconds(30),
        "both members own partitions",
        () -> {
          published.addAll(Publishing.wave(p, List.of(t), 20, 20, "before" + round[0]++));
          return owners(p, "net-group");
        },
        o -> o.equals(Set.of("a", "b")));
    awaitCaughtUp(p, "net-group");

    proxy.blackhole();
    long t0 = System.nanoTime();
    published.addAll(Publishing.wave(p, List.of(t), 400, 20, "cut-off"));
    Await.until(
        Duration.ofSeconds(30),
        "b owns every partition",
        () -> owners(p, "net-group"),
        o -> o.equals(Set.of("b")));
    long takeoverMillis = (System.nanoTime() - t0) / 1_000_000;
    Duration deadline = POLICY.deadline(2);
    System.out.printf(
        "takeover of a blackholed member: %d ms (deadline for 2 members %d ms)%n",
        takeoverMillis, deadline.toMillis());
    assertThat(takeoverMillis)
        .as("not before the cut-off member's deadline")
        .isGreaterThanOrEqualTo(deadline.toMillis() - POLICY.checkInInterval(2).toMillis() * 2);
    awaitCaughtUp(p, "net-group");
    long handledByAWhileCutOff =
        log.stream()
            .filter(
                h ->
                    h.member().equals("a") && new String(h.event().payload()).startsWith("cut-off"))
            .count();
    assertThat(handledByAWhileCutOff).as("a cannot fetch while cut off").isZero();

    proxy.heal();
    java.time.Instant healed = java.time.Instant.now();
    // Back in the group: a checks in again (idle partitions stay unowned until events arrive).
    Await.until(
        Duration.ofSeconds(30),
        "a checks in again after the link heals",
        () -> p.admin().group("net-group").members(),
        ms -> ms.stream().anyMatch(m -> m.id().equals("a") && m.lastCheckIn().isAfter(healed)));
    published.addAll(Publishing.wave(p, List.of(t), 400, 20, "after"));
    awaitCaughtUp(p, "net-group");
    Await.until(
        Duration.ofSeconds(30),
        "every event handled",
        () -> handledIds(log).containsAll(published));

    int repeats = checkDeliveries(published, log);
    // As the chaos checker bounds them: a's batches in flight at the cut (handled, commit pending),
    // and for each partition a lost or was fenced on, the batch it had read before it knew.
    int bound = (int) (BATCH * CONCURRENCY + (a.lostCount() + a.fencedCount()) * BATCH);
    System.out.printf("repeats after the cut-off: %d (bound %d)%n", repeats, bound);
    assertThat(repeats).as("only a's in-flight batches").isLessThanOrEqualTo(bound);
    assertThat(a.lostCount()).as("a learnt it had lost its partitions").isPositive();
    assertThat(b.handledCount()).isPositive();
  }

  /**
   * Every connection of an application (its sequencer and consumer) is reset three times in
   * mid-traffic, and then its link slows to 20 ms per chunk each way: the pool opens new
   * connections, the sequencer and the consumer carry on, and every event arrives once in the log,
   * gap-free, and is handled in order.
   */
  @Test
  @Timeout(120)
  void resetsAndASlowLinkLoseNothingAndKeepOrder() throws Exception {
    Boxline p = db.boxline(b -> b.instanceId("publisher").sequencer(false));
    TopicName t = topic(p, "resets", 4, "net-resets");
    Boxline app = boxlineThroughProxy("app", true);
    List<Handled> log = new CopyOnWriteArrayList<>();
    member(app, "app", "net-resets", log);
    Set<UUID> published = ConcurrentHashMap.newKeySet();
    for (int round = 0; round < 3; round++) {
      published.addAll(Publishing.wave(p, List.of(t), 300, 10, "round" + round));
      int before = log.size();
      Await.until(
          Duration.ofSeconds(30), "some of round " + round + " handled", () -> log.size() > before);
      assertThat(proxy.resetAll()).as("open connections reset").isPositive();
    }
    proxy.latency(Duration.ofMillis(20));
    published.addAll(Publishing.wave(p, List.of(t), 200, 10, "slow"));
    awaitCaughtUp(p, "net-resets");
    Await.until(
        Duration.ofSeconds(60),
        "every event handled",
        () -> handledIds(log).containsAll(published));
    proxy.heal();
    checkDeliveries(published, log);
    assertThat(proxy.resets()).isGreaterThanOrEqualTo(3);
    assertThat(count("SELECT count(*) FROM " + db.table("log"))).isEqualTo(published.size());
    assertThat(
            count(
                "SELECT count(*) FROM (SELECT partition FROM "
                    + db.table("log")
                    + " GROUP BY topic_id, partition HAVING max(seq) <> count(*)) gaps"))
        .as("partitions with a gap")
        .isZero();
  }

  /**
   * The application holds every connection of the pool Boxline shares with it. Publishing fails
   * within the pool's timeout with an error that names the pool's exhaustion, the consumer waits,
   * and once the connections come back both carry on with nothing lost.
   */
  @Test
  @Timeout(60)
  void anExhaustedPoolFailsPublishingClearlyAndEverythingResumesWhenConnectionsReturn()
      throws Exception {
    Boxline setup = db.boxline(b -> b.instanceId("setup").sequencer(false));
    TopicName t = topic(setup, "pool", 2, "net-pool");
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(db.server().url());
    c.setUsername(db.server().user());
    c.setPassword(db.server().password());
    c.setPoolName("small");
    c.setMaximumPoolSize(4);
    c.setConnectionTimeout(1_000);
    HikariDataSource small = new HikariDataSource(c);
    closing.add(small);
    Boxline app =
        Boxline.builder()
            .store(JdbcStore.builder(small).schema(db.schema()).build())
            .instanceId("app")
            .build()
            .start();
    closing.add(app);
    List<Handled> log = new CopyOnWriteArrayList<>();
    member(app, "app", "net-pool", log);
    Set<UUID> published = new HashSet<>(Publishing.wave(app, List.of(t), 50, 10, "before"));
    Await.until(
        Duration.ofSeconds(30), "first wave handled", () -> handledIds(log).containsAll(published));

    // The application takes every connection Boxline's loops do not keep (the sequencer and the
    // wake-up listener hold one each): until the pool has none left for a second, twice.
    List<Connection> held = new ArrayList<>();
    for (int timeouts = 0; timeouts < 2; ) {
      try {
        held.add(small.getConnection());
        timeouts = 0;
      } catch (java.sql.SQLException none) {
        timeouts++;
      }
    }
    assertThat(held).isNotEmpty();
    long t0 = System.nanoTime();
    RuntimeException refused = null;
    try {
      Publishing.wave(app, List.of(t), 1, 1, "refused");
    } catch (RuntimeException e) {
      refused = e;
    }
    long waited = (System.nanoTime() - t0) / 1_000_000;
    assertThat(refused).as("publishing with no connection left fails").isNotNull();
    StringBuilder chain = new StringBuilder();
    for (Throwable x = refused; x != null; x = x.getCause()) {
      chain.append(x.getMessage()).append(" | ");
    }
    System.out.println("with the pool exhausted, after " + waited + " ms: " + chain);
    assertThat(chain.toString())
        .contains("Connection is not available")
        .contains("every connection of the pool is in use: give the pool more connections");
    assertThat(waited).as("bounded by the pool's timeout").isLessThan(10_000);
    for (Connection h : held) {
      h.close();
    }
    published.addAll(Publishing.wave(app, List.of(t), 50, 10, "after"));
    Await.until(
        Duration.ofSeconds(30),
        "second wave handled",
        () -> handledIds(log).containsAll(published));
  }
}
