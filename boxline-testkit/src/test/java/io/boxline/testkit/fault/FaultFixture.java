package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.GroupPolicy;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.process.ChildJvm;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * One fault test's world: its own schema (via {@link TestDatabase}), the child JVMs it started
 * (killed on {@link #close()}, before the schema is dropped), plain-JDBC queries on Boxline's
 * tables, and the delivery/log checks shared by the tests.
 */
final class FaultFixture implements AutoCloseable {
  /** (topic id, partition). */
  record Part(long topicId, int partition) implements Comparable<Part> {
    @Override
    public int compareTo(Part o) {
      int c = Long.compare(topicId, o.topicId);
      return c != 0 ? c : Integer.compare(partition, o.partition);
    }

    @Override
    public String toString() {
      return topicId + "#" + partition;
    }
  }

  /** One row of the {@code handled} table, in insertion order. */
  record Delivery(long n, UUID eventId, Part part, long seq, int run) {}

  /**
   * The group policy of the tests that kill a consumer process and start another in its place (the
   * parent sets it before the first child starts): check-ins every 250 ms and a member dead after 8
   * missed ones, so the new process reclaims the killed one's leases about 2 s after the kill
   * rather than the default policy's 6 s. One consumer process runs at a time, so a live one that
   * is late to check in on a loaded machine has nobody to lose its leases to.
   */
  static final GroupPolicy QUICK_TAKEOVER =
      GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(250)).withDeadlineMultiplier(8);

  private final TestDatabase db;
  private final List<ChildJvm> children = new ArrayList<>();

  private FaultFixture(TestDatabase db) {
    this.db = db;
  }

  static FaultFixture create(String hint) {
    return new FaultFixture(TestDatabase.create(hint, 8));
  }

  TestDatabase db() {
    return db;
  }

  String schema() {
    return db.schema();
  }

  /** Application name of a child's database sessions: unique per test schema and child. */
  String appName(String child) {
    return "bxf_" + schema().substring(schema().lastIndexOf('_') + 1) + "_" + child;
  }

  /** Starts a child main with the common arguments (database, schema, session name) added. */
  ChildJvm startChild(String name, Class<?> mainClass, String... args) {
    List<String> all = new ArrayList<>();
    all.add("--url=" + db.server().url());
    all.add("--user=" + db.server().user());
    all.add("--schema=" + schema());
    all.add("--app=" + appName(name));
    all.addAll(Arrays.asList(args));
    ChildJvm child =
        ChildJvm.start(
            new ChildJvm.Spec(schema() + "-" + name, mainClass)
                // Only the quick JIT (C1): the children live for seconds, and their startup (class
                // loading, C2 compiling) competes for the CPU with the test JVM, the database and
                // the other children on a 2-core machine.
                .jvmArgs("-XX:TieredStopAtLevel=1")
                .args(all.toArray(String[]::new))
                .env(ChildJvm.PASSWORD_ENV, db.server().password()));
    children.add(child);
    return child;
  }

  /**
   * Waits until a killed child's database sessions have ended, so that nothing it sent before dying
   * (an insert, a cursor commit) can still land after this returns.
   */
  void awaitSessionsGone(String childName) {
    String app = appName(childName);
    Await.until(
        Duration.ofSeconds(15),
        "database sessions of " + app + " end",
        () -> count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app),
        n -> n == 0);
  }

  /** {@link Await#until} that fails at once, with the child's output, if the child dies. */
  static void awaitWhileAlive(Duration max, String what, ChildJvm child, BooleanSupplier done) {
    Await.until(
        max,
        what,
        () -> {
          if (done.getAsBoolean()) {
            return true;
          }
          if (!child.isAlive()) {
            throw new AssertionError(
                child + " died while waiting for: " + what + "; its output:\n" + child.tail(80));
          }
          return false;
        });
  }

  // ------------------------------------------------------------------ SQL helpers
  long count(String sql, Object... params) {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  String string(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  void execute(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  String table(String name) {
    return schema() + "." + name;
  }

  /** The delivery record the consumer children write into, one row per handler call. */
  void createHandledTable() {
    execute(
        "CREATE TABLE "
            + table("handled")
            + " (n bigserial PRIMARY KEY, event_id uuid NOT NULL, topic text NOT NULL,"
            + " partition int NOT NULL, seq bigint NOT NULL, run int NOT NULL,"
            + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
  }

  long logCount() {
    return count("SELECT count(*) FROM " + table("log"));
  }

  long outboxCount() {
    return count("SELECT count(*) FROM " + table("outbox"));
  }

  long distinctHandled() {
    return count("SELECT count(DISTINCT event_id) FROM " + table("handled"));
  }

  long distinctHandled(int run) {
    return count(
        "SELECT count(DISTINCT event_id) FROM " + table("handled") + " WHERE run = ?", run);
  }

  /** The sequencer lease's owner column (set by acquiring, kept after expiry until taken over). */
  String leaseOwner() {
    return string("SELECT owner FROM " + table("sequencer_lease") + " WHERE name = 'sequencer'");
  }

  private Map<Part, Long> partMap(String sql, Object... params) {
    Map<Part, Long> out = new TreeMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(new Part(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
    return out;
  }

  /** Committed cursor position per partition of a subscription. */
  Map<Part, Long> cursors(String subscription) {
    return partMap(
        "SELECT c.topic_id, c.partition, c.position FROM "
            + table("cursor")
            + " c JOIN "
            + table("subscription")
            + " s ON s.id = c.subscription_id WHERE s.name = ?",
        subscription);
  }

  /** Last sequence handed out per partition. */
  Map<Part, Long> lastSequences() {
    return partMap("SELECT topic_id, partition, last_seq FROM " + table("partition"));
  }

  /** True when every cursor of the subscription is at its partition's last sequence. */
  boolean caughtUp(String subscription) {
    return cursors(subscription).equals(lastSequences());
  }

  private Map<String, Long> topicIds() {
    Map<String, Long> out = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT t.id, n.path || '/' || t.name FROM "
                    + table("topic")
                    + " t JOIN "
                    + table("namespace")
                    + " n ON n.id = t.namespace_id")) {
      while (rs.next()) {
        out.put(rs.getString(2), rs.getLong(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  List<Delivery> deliveries() {
    Map<String, Long> topics = topicIds();
    List<Delivery> out = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT n, event_id, topic, partition, seq, run FROM "
                    + table("handled")
                    + " ORDER BY n")) {
      while (rs.next()) {
        Long topicId = topics.get(rs.getString(3));
        assertThat(topicId).as("topic of a delivery: %s", rs.getString(3)).isNotNull();
        out.add(
            new Delivery(
                rs.getLong(1),
                rs.getObject(2, UUID.class),
                new Part(topicId, rs.getInt(4)),
                rs.getLong(5),
                rs.getInt(6)));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  /** (partition, seq) of every event in the log, by event id; fails on an id logged twice. */
  Map<UUID, Delivery> logPositions() {
    Map<UUID, Delivery> out = new HashMap<>();
    List<UUID> twice = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT event_id, topic_id, partition, seq FROM " + table("log"))) {
      while (rs.next()) {
        UUID id = rs.getObject(1, UUID.class);
        Delivery prior =
            out.put(
                id, new Delivery(0, id, new Part(rs.getLong(2), rs.getInt(3)), rs.getLong(4), 0));
        if (prior != null) {
          twice.add(id);
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    assertThat(twice).as("event ids that appear more than once in the log").isEmpty();
    return out;
  }

  // ------------------------------------------------------------------ shared checks
  /**
   * The log holds every published event exactly once and nothing else; per partition its sequences
   * are exactly 1..N with N = the partition's last_seq; the outbox is empty.
   */
  void verifyLog(Set<UUID> published) {
    Map<UUID, Delivery> log = logPositions();
    Set<UUID> missing = new HashSet<>(published);
    missing.removeAll(log.keySet());
    Set<UUID> extra = new HashSet<>(log.keySet());
    extra.removeAll(published);
    assertThat(missing).as("published events missing from the log").isEmpty();
    assertThat(extra).as("events in the log that were never published").isEmpty();

    Map<Part, Long> last = lastSequences();
    Map<Part, long[]> stats = new TreeMap<>(); // count, min, max
    for (Delivery d : log.values()) {
      long[] s = stats.computeIfAbsent(d.part(), k -> new long[] {0, Long.MAX_VALUE, 0});
      s[0]++;
      s[1] = Math.min(s[1], d.seq());
      s[2] = Math.max(s[2], d.seq());
    }
    long total = 0;
    for (Map.Entry<Part, Long> e : last.entrySet()) {
      long[] s = stats.getOrDefault(e.getKey(), new long[] {0, 1, 0});
      // (topic, partition, seq) is the log's primary key, so count == max and min == 1 means 1..N.
      assertThat(new long[] {s[0], s[1], s[2]})
          .as(
              "log of partition %s: {count, min seq, max seq} with last_seq %d",
              e.getKey(), e.getValue())
          .containsExactly(e.getValue(), 1, e.getValue());
      total += s[0];
    }
    assertThat(stats.keySet()).as("partitions present in the log").isSubsetOf(last.keySet());
    assertThat(total).isEqualTo(published.size());
    assertThat(outboxCount()).as("rows left in the outbox").isZero();
  }

  /**
   * Checks two consumer runs separated by a kill -9: nothing lost, nothing invented, per-run order,
   * run 2 resumed each partition exactly after the cursor run 1 committed, and the duplicates are
   * only run 1's in-flight batches (at most {@code batchSize} per partition, on at most {@code
   * concurrency} partitions).
   *
   * @return the number of events handled by both runs
   */
  int verifyDeliveries(
      Set<UUID> published, Map<Part, Long> cursorsAfterRun1, int batchSize, int concurrency) {
    List<Delivery> deliveries = deliveries();
    Map<UUID, Delivery> log = logPositions();

    // Nothing lost, nothing invented.
    Set<UUID> handled = new HashSet<>();
    deliveries.forEach(d -> handled.add(d.eventId()));
    Set<UUID> missing = new HashSet<>(published);
    missing.removeAll(handled);
    Set<UUID> extra = new HashSet<>(handled);
    extra.removeAll(published);
    assertThat(missing).as("published events never handled").isEmpty();
    assertThat(extra).as("handled events that were never published").isEmpty();

    // Each delivery carries the event's identity from the log.
    for (Delivery d : deliveries) {
      Delivery l = log.get(d.eventId());
      assertThat(l).as("log entry of handled event %s", d.eventId()).isNotNull();
      assertThat(d.part() + "@" + d.seq())
          .as("position of event %s as delivered vs logged", d.eventId())
          .isEqualTo(l.part() + "@" + l.seq());
    }

    // Per run and partition: sequences strictly increasing and contiguous, in handling order.
    Map<Integer, Map<Part, List<Long>>> byRun = new TreeMap<>();
    Map<UUID, Integer> timesHandled = new HashMap<>();
    for (Delivery d : deliveries) {
      byRun
          .computeIfAbsent(d.run(), r -> new TreeMap<>())
          .computeIfAbsent(d.part(), p -> new ArrayList<>())
          .add(d.seq());
      timesHandled.merge(d.eventId(), 1, Integer::sum);
    }
    assertThat(byRun.keySet()).as("runs that handled events").containsExactly(1, 2);
    for (Map.Entry<Integer, Map<Part, List<Long>>> run : byRun.entrySet()) {
      for (Map.Entry<Part, List<Long>> p : run.getValue().entrySet()) {
        List<Long> seqs = p.getValue();
        for (int i = 1; i < seqs.size(); i++) {
          assertThat(seqs.get(i))
              .as(
                  "run %d partition %s: delivery %d follows seq %d",
                  run.getKey(), p.getKey(), i, seqs.get(i - 1))
              .isEqualTo(seqs.get(i - 1) + 1);
        }
      }
    }
    assertThat(timesHandled.values()).as("deliveries per event").allMatch(n -> n <= 2);

    // Run 1 started at the beginning; run 2 resumed exactly after run 1's committed cursor.
    Map<Part, Long> last = lastSequences();
    Map<Part, List<Long>> run1 = byRun.get(1);
    Map<Part, List<Long>> run2 = byRun.get(2);
    int duplicates = 0;
    int partitionsWithDuplicates = 0;
    for (Map.Entry<Part, Long> e : last.entrySet()) {
      Part p = e.getKey();
      long cursor = cursorsAfterRun1.get(p);
      List<Long> r1 = run1.getOrDefault(p, List.of());
      List<Long> r2 = run2.getOrDefault(p, List.of());
      long r1Last = r1.isEmpty() ? 0 : r1.get(r1.size() - 1);
      if (!r1.isEmpty()) {
        assertThat(r1.get(0)).as("first seq run 1 handled on %s", p).isEqualTo(1L);
      }
      assertThat(r1Last)
          .as("run 1 handled at least up to its committed cursor on %s", p)
          .isGreaterThanOrEqualTo(cursor);
      if (cursor < e.getValue()) {
        assertThat(r2)
            .as("run 2 deliveries on %s (cursor %d < last %d)", p, cursor, e.getValue())
            .isNotEmpty();
        assertThat(r2.get(0))
            .as("first seq run 2 handled on %s: cursor + 1", p)
            .isEqualTo(cursor + 1);
        assertThat(r2.get(r2.size() - 1))
            .as("last seq run 2 handled on %s", p)
            .isEqualTo(e.getValue());
      } else {
        assertThat(r2).as("run 2 deliveries on %s, which run 1 had finished", p).isEmpty();
      }
      long inFlight = r1Last - cursor;
      assertThat(inFlight)
          .as("events of %s handled by run 1 past its committed cursor (in-flight batch)", p)
          .isBetween(0L, (long) batchSize);
      if (inFlight > 0) {
        partitionsWithDuplicates++;
      }
      duplicates += (int) inFlight;
    }
    assertThat(partitionsWithDuplicates)
        .as("partitions with an in-flight batch at the kill")
        .isLessThanOrEqualTo(concurrency);
    long handledTwice = timesHandled.values().stream().filter(n -> n == 2).count();
    assertThat(handledTwice)
        .as("events handled by both runs = run 1's deliveries past its cursors")
        .isEqualTo(duplicates)
        .isLessThanOrEqualTo((long) batchSize * concurrency);
    return duplicates;
  }

  @Override
  public void close() {
    for (ChildJvm c : children) {
      c.close();
    }
    db.close();
  }
}
