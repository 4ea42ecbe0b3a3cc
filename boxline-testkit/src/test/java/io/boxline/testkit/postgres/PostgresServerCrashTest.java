package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Kills the PostgreSQL server itself (SIGKILL to the postmaster and its backends) while Boxline
 * runs, restarts it on the same data directory, and checks the at-least-once contract across the
 * crash: every publish whose commit returned is delivered, the log is gap-free, the outbox drains.
 *
 * <p>The sequencer's and plain handlers' cursor commits are asynchronous. Before each crash the
 * test stops the server's WAL writer (SIGSTOP) and lets the producers publish a few more events, so
 * the last sequencer batches and cursor moves are still in the server's WAL buffers when it dies:
 * the crash loses them, which the test checks happened, and Boxline has to sequence those events
 * again and must not lose any.
 */
class PostgresServerCrashTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int CRASHES = 3;

  @Test
  void aServerCrashThatLosesAsynchronousCommitsLosesNoPublishedEvent() throws Exception {
    Path data = Files.createTempDirectory("boxline-crash-pg");
    int port = freePort();
    EmbeddedPostgres pg = start(data, port);
    HikariDataSource pool = pool(port);
    AtomicBoolean producing = new AtomicBoolean(true);
    AtomicReference<CountDownLatch> paused = new AtomicReference<>();
    AtomicReference<Throwable> producerFailure = new AtomicReference<>();
    Set<UUID> acknowledged = ConcurrentHashMap.newKeySet();
    Map<UUID, Integer> delivered = new ConcurrentHashMap<>();
    List<Thread> producers = new ArrayList<>();
    try (Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema("crash").build())
            .sequencerLease(Duration.ofSeconds(3))
            .build()
            .start()) {
      TopicName topic = SuiteSupport.topic(boxline, "acme/crash/events", 4);
      SuiteSupport.subscribe(boxline, "sub", topic);
      Consumer consumer =
          boxline
              .consumer("sub")
              .handler(e -> delivered.merge(e.id(), 1, Integer::sum))
              .concurrency(4)
              .start();
      for (int t = 0; t < 2; t++) {
        int thread = t;
        Thread p =
            new Thread(
                () -> produce(boxline, topic, thread, producing, paused, acknowledged),
                "crash-test-producer-" + t);
        p.setUncaughtExceptionHandler((th, e) -> producerFailure.set(e));
        producers.add(p);
        p.start();
      }

      int lossesSeen = 0;
      for (int crash = 1; crash <= CRASHES; crash++) {
        int target = acknowledged.size() + 300;
        Await.until(WAIT, "300 more events published", () -> acknowledged.size() >= target);
        CountDownLatch resume = new CountDownLatch(1);
        paused.set(resume);
        awaitDelivered(pool, acknowledged, delivered, "before crash " + crash);
        // From here on, what commits asynchronously stays in the server's WAL buffers: the WAL
        // writer would otherwise write it out within milliseconds (producers flush their own
        // commits). A short burst more, then the crash.
        signal(walWriter(data), "STOP");
        int burst = acknowledged.size() + 30;
        paused.set(null);
        resume.countDown();
        Await.until(WAIT, "30 more events published", () -> acknowledged.size() >= burst);
        resume = new CountDownLatch(1);
        paused.set(resume);
        awaitDelivered(pool, acknowledged, delivered, "before crash " + crash);
        long sequencedBefore = lastSequences(pool);
        java.time.Instant killedAt = java.time.Instant.now();
        killServer(data);
        closeKilled(pg);
        pg = start(data, port);
        Await.until(WAIT, "the pool reconnects", () -> canQuery(pool));
        long sequencedAfter = lastSequences(pool);
        // The crash undid sequencer batches that consumers had already handled: the heads went
        // back, or (when the restarted sequencer was quicker than this check) the log holds events
        // sequenced after the kill, though no producer has published since.
        if (sequencedAfter < sequencedBefore || sequencedSince(pool, killedAt) > 0) {
          lossesSeen++;
        }
        paused.set(null);
        resume.countDown();
      }

      producing.set(false);
      paused.set(null);
      for (Thread p : producers) {
        p.join(TimeUnit.SECONDS.toMillis(30));
      }
      assertThat(producerFailure.get()).as("producer failure").isNull();
      awaitDelivered(pool, acknowledged, delivered, "at the end");
      Await.until(WAIT, "the outbox drained", () -> count(pool, "crash.outbox") == 0);

      assertThat(lossesSeen)
          .as("crashes that lost asynchronously committed sequencer batches")
          .isPositive();
      assertLogGapFreeAndComplete(pool, acknowledged);
      // The handler records an event before its batch's cursor commit counts it as handled: the
      // count catches up with the last batch's commit.
      Await.until(
          WAIT,
          "every acknowledged event counted as handled",
          () -> consumer.handledCount() >= acknowledged.size());
      assertThat(consumer.handledCount()).isGreaterThanOrEqualTo(acknowledged.size());
      consumer.close();
    } finally {
      producing.set(false);
      pool.close();
      pg.close();
      deleteTree(data);
    }
  }

  private static void produce(
      Boxline boxline,
      TopicName topic,
      int thread,
      AtomicBoolean producing,
      AtomicReference<CountDownLatch> paused,
      Set<UUID> acknowledged) {
    int n = 0;
    while (producing.get()) {
      CountDownLatch resume = paused.get();
      if (resume != null) {
        try {
          resume.await();
        } catch (InterruptedException ie) {
          return;
        }
        continue;
      }
      UUID id = UUID.randomUUID();
      OutgoingEvent e =
          OutgoingEvent.builder(topic)
              .id(id)
              .type("crash.test")
              .key("k" + thread + "-" + (n++ % 16))
              .payload(("event " + n).getBytes(StandardCharsets.UTF_8))
              .build();
      try {
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
        acknowledged.add(id); // the commit returned: this event must be delivered
      } catch (RuntimeException failed) {
        // The server is down (or went down during the commit: the event may or may not exist,
        // so it is not counted). Try again until it is back.
        try {
          Thread.sleep(20);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private static void awaitDelivered(
      HikariDataSource pool, Set<UUID> acknowledged, Map<UUID, Integer> delivered, String when)
      throws SQLException {
    try {
      Await.until(
          WAIT,
          "every acknowledged event delivered " + when,
          () -> delivered.keySet().containsAll(acknowledged));
    } catch (AssertionError e) {
      Set<UUID> missing = new HashSet<>(acknowledged);
      missing.removeAll(delivered.keySet());
      StringBuilder where = new StringBuilder();
      try (Connection c = pool.getConnection();
          Statement st = c.createStatement()) {
        for (UUID id : missing.stream().limit(5).toList()) {
          try (ResultSet rs =
              st.executeQuery(
                  "SELECT 'log', partition, seq FROM crash.log WHERE event_id = '"
                      + id
                      + "' UNION ALL SELECT 'outbox', partition, id FROM crash.outbox WHERE"
                      + " event_id = '"
                      + id
                      + "'")) {
            where.append(id).append(':');
            while (rs.next()) {
              where.append(' ').append(rs.getString(1)).append(" p").append(rs.getInt(2));
              where.append(" #").append(rs.getLong(3));
            }
            where.append('\n');
          }
        }
        try (ResultSet rs =
            st.executeQuery(
                "SELECT c.partition, c.position, p.last_seq FROM crash.cursor c JOIN"
                    + " crash.partition p USING (topic_id, partition) ORDER BY 1")) {
          while (rs.next()) {
            where.append("partition ").append(rs.getInt(1)).append(": cursor ");
            where.append(rs.getLong(2)).append(", last ").append(rs.getLong(3)).append('\n');
          }
        }
      }
      throw new AssertionError(
          missing.size() + " acknowledged events not delivered " + when + ":\n" + where, e);
    }
  }

  /** Every acknowledged event is in the log exactly once, and each partition is 1..n. */
  private static void assertLogGapFreeAndComplete(HikariDataSource pool, Set<UUID> acknowledged)
      throws SQLException {
    Map<Integer, List<Long>> seqs = new HashMap<>();
    Set<UUID> inLog = new HashSet<>();
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT partition, seq, event_id FROM crash.log ORDER BY 1, 2")) {
      while (rs.next()) {
        seqs.computeIfAbsent(rs.getInt(1), k -> new ArrayList<>()).add(rs.getLong(2));
        assertThat(inLog.add(rs.getObject(3, UUID.class))).as("event once in the log").isTrue();
      }
    }
    Set<UUID> missing = new HashSet<>(acknowledged);
    missing.removeAll(inLog);
    assertThat(missing).as("acknowledged events missing from the log").isEmpty();
    for (Map.Entry<Integer, List<Long>> e : seqs.entrySet()) {
      List<Long> s = e.getValue();
      for (int i = 0; i < s.size(); i++) {
        assertThat(s.get(i)).as("partition %d gap-free", e.getKey()).isEqualTo(i + 1L);
      }
    }
  }

  private static long lastSequences(HikariDataSource pool) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT coalesce(sum(last_seq), 0) FROM crash.partition")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long sequencedSince(HikariDataSource pool, java.time.Instant t)
      throws SQLException {
    try (Connection c = pool.getConnection();
        java.sql.PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM crash.log WHERE sequenced_at > ?")) {
      ps.setTimestamp(1, java.sql.Timestamp.from(t));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long count(HikariDataSource pool, String table) {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }

  private static boolean canQuery(HikariDataSource pool) {
    return count(pool, "crash.partition") >= 0;
  }

  private static EmbeddedPostgres start(Path data, int port) throws IOException {
    return EmbeddedPostgres.builder()
        .setDataDirectory(data)
        .setCleanDataDirectory(false)
        .setPort(port)
        // The embedded server's defaults turn synchronous commit off; producers' commits must be
        // durable as on any real server, so that "the commit returned" means "the event exists".
        .setServerConfig("synchronous_commit", "on")
        .setServerConfig("fsync", "on")
        // Keep asynchronous commits in the WAL buffers long enough for the crash to lose them.
        .setServerConfig("wal_writer_delay", "10000ms")
        .start();
  }

  private static long walWriter(Path data) throws IOException {
    long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
    return ProcessHandle.of(pid)
        .orElseThrow()
        .children()
        .filter(p -> processTitle(p.pid()).contains("walwriter"))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no walwriter process under " + pid))
        .pid();
  }

  /** The title a PostgreSQL process gives itself ("postgres: walwriter"), from /proc. */
  private static String processTitle(long pid) {
    try {
      return new String(
          Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
          StandardCharsets.UTF_8);
    } catch (IOException gone) {
      return "";
    }
  }

  private static void signal(long pid, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -%s %d", signal, pid).isZero();
  }

  /** SIGKILL to the postmaster and all its children: no shutdown checkpoint, no WAL flush. */
  private static void killServer(Path data) throws Exception {
    long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
    ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
    List<ProcessHandle> all = new ArrayList<>(postmaster.descendants().toList());
    all.add(postmaster);
    for (ProcessHandle p : all) {
      p.destroyForcibly();
    }
    for (ProcessHandle p : all) {
      p.onExit().get(30, TimeUnit.SECONDS);
    }
  }

  /** Releases what the embedded server object holds in this JVM (its data-directory lock). */
  private static void closeKilled(EmbeddedPostgres killed) {
    try {
      killed.close(); // its pg_ctl stop finds no server; the lock file is released
    } catch (IOException | RuntimeException expected) {
      // the server is already gone
    }
  }

  private static HikariDataSource pool(int port) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + port + "/postgres");
    config.setUsername("postgres");
    config.setMaximumPoolSize(12);
    config.setConnectionTimeout(2_000);
    config.setPoolName("crash-test");
    return new HikariDataSource(config);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
