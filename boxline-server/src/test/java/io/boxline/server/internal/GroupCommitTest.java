package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Shared publish transactions on PostgreSQL: each request all-or-nothing, fewer transactions. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GroupCommitTest {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  /** Each test's own topic, so events of one test still being sequenced never count in another. */
  TopicName orders;

  private int tests;

  final String schema = "bx_gc_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
  HikariDataSource pool;
  Boxline boxline;

  @BeforeAll
  void start() {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(URL);
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(4);
    pool = new HikariDataSource(hc);
    boxline =
        Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()).build().start();
    boxline.admin().createNamespace(TopicName.parse("gc/orders").namespace());
  }

  @org.junit.jupiter.api.BeforeEach
  void topic() {
    orders = TopicName.parse("gc/orders-" + ++tests);
    boxline.admin().createTopic(orders, 2);
  }

  @AfterAll
  void stop() throws Exception {
    boxline.close();
    try (Connection c = DriverManager.getConnection(URL, "postgres", "");
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
    pool.close();
  }

  static List<OutgoingEvent> events(TopicName topic, String... keys) {
    return java.util.Arrays.stream(keys)
        .map(k -> OutgoingEvent.builder(topic).key(k).type("Placed").build())
        .toList();
  }

  /** Events placed in the topic's log so far. */
  long total() {
    return boxline.admin().topicState(orders).heads().stream().mapToLong(Long::longValue).sum();
  }

  /** Waits (bounded) until the log holds {@code expected} events, and that many stay. */
  void assertPlaced(long expected) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (total() < expected && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(total()).isEqualTo(expected);
  }

  @Test
  void queuedRequestsShareOneTransactionAndEachGetsItsOwnResults() throws Exception {
    GroupCommit commits = new GroupCommit(boxline, 0, 16);
    long before = total();
    CompletableFuture<List<PublishResult>> a = commits.submit(events(orders, "a1"));
    CompletableFuture<List<PublishResult>> b = commits.submit(events(orders, "b1", "b2", "b3"));
    CompletableFuture<List<PublishResult>> c = commits.submit(events(orders, "c1"));
    commits.commitQueued();
    assertThat(a.join()).hasSize(1);
    assertThat(b.join()).hasSize(3);
    assertThat(c.join()).hasSize(1);
    assertThat(commits.transactions()).isEqualTo(1);
    assertThat(commits.requests()).isEqualTo(3);
    assertPlaced(before + 5);
    commits.close();
  }

  @Test
  void aFailingRequestFailsAloneAndWritesNothing() throws Exception {
    GroupCommit commits = new GroupCommit(boxline, 0, 16);
    long before = total();
    CompletableFuture<List<PublishResult>> good = commits.submit(events(orders, "g1"));
    // Its first event is fine, its second names a topic that does not exist: nothing of it stays.
    List<OutgoingEvent> mixed =
        List.of(events(orders, "m1").get(0), events(TopicName.parse("gc/missing"), "m2").get(0));
    CompletableFuture<List<PublishResult>> bad = commits.submit(mixed);
    CompletableFuture<List<PublishResult>> alsoGood = commits.submit(events(orders, "g2", "g3"));
    commits.commitQueued();
    assertThat(good.join()).hasSize(1);
    assertThat(alsoGood.join()).hasSize(2);
    assertThat(bad).isCompletedExceptionally();
    try {
      bad.join();
    } catch (CompletionException e) {
      assertThat(e.getCause()).isInstanceOf(NotFoundException.class);
    }
    // The shared transaction, then one of its own for each request.
    assertThat(commits.transactions()).isEqualTo(4);
    assertPlaced(before + 3);
    commits.close();
  }

  @Test
  void aFullQueueAndAClosedCommitterAnswer503() {
    GroupCommit commits = new GroupCommit(boxline, 0, 1);
    CompletableFuture<List<PublishResult>> first = commits.submit(events(orders, "q1"));
    CompletableFuture<List<PublishResult>> second = commits.submit(events(orders, "q2"));
    assertThat(second).isCompletedExceptionally();
    assertThat(second.handle((r, e) -> ((ApiException) e).code).join()).isEqualTo("overloaded");
    commits.close();
    commits.close(); // twice is safe
    assertThat(first.handle((r, e) -> ((ApiException) e).code).join()).isEqualTo("shutting_down");
    assertThat(
            commits.submit(events(orders, "q3")).handle((r, e) -> ((ApiException) e).status).join())
        .isEqualTo(503);
  }

  @Test
  void aLoneRequestIsCommittedOnTheSubmittingThread() {
    try (GroupCommit commits = new GroupCommit(boxline, 2, 64)) {
      CompletableFuture<List<PublishResult>> done = commits.submit(events(orders, "lone"));
      assertThat(done).isDone();
      assertThat(done.join()).hasSize(1);
      assertThat(commits.transactions()).isEqualTo(1);
    }
  }

  @Test
  void concurrentRequestsAreAllCommittedOnceEach() throws Exception {
    long before = total();
    try (GroupCommit commits = new GroupCommit(boxline, 2, 1000)) {
      java.util.concurrent.ExecutorService pool =
          java.util.concurrent.Executors.newFixedThreadPool(8);
      List<java.util.concurrent.Future<CompletableFuture<List<PublishResult>>>> submitted =
          new java.util.ArrayList<>();
      for (int i = 0; i < 200; i++) {
        String key = "c" + i;
        submitted.add(pool.submit(() -> commits.submit(events(orders, key))));
      }
      for (var f : submitted) {
        assertThat(f.get().get(10, java.util.concurrent.TimeUnit.SECONDS)).hasSize(1);
      }
      pool.shutdown();
      assertThat(commits.requests()).isEqualTo(200);
      assertThat(commits.transactions()).isBetween(1L, 200L);
    }
    assertPlaced(before + 200);
  }
}
