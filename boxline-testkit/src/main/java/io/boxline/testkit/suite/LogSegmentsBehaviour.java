package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.publish;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.RetentionPolicy;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The log in time segments (PostgreSQL, MariaDB): retention drops whole segments and deletes no
 * row, and a segment stays while a subscription still owes its events. Segments of 1 s and a
 * retention of 2 s, so that segments are made and dropped within seconds.
 */
public abstract class LogSegmentsBehaviour {
  protected static final Duration WIDTH = Duration.ofSeconds(1);
  protected TestDatabase db;

  protected abstract TestDatabase newDatabase(String hint);

  /** How many partitions the database says the log table has. */
  protected abstract long partitionsOfTheLog();

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("seg"));
  }

  @AfterEach
  void close() {
    db.close();
  }

  protected Boxline boxline() {
    return db.boxline(
        s -> s.logSegmentWidth(WIDTH), b -> b.retentionInterval(Duration.ofMillis(200)));
  }

  @Test
  void retentionDropsWholeSegmentsAndDeletesNoRow() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/seg/events", 2);
    subscribe(boxline, "reader", t);
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofSeconds(2)));
    Set<String> seen = ConcurrentHashMap.newKeySet();
    boxline.consumer("reader").handler(e -> seen.add(body(e))).start();
    // Waves of events, each after the log has opened another segment, until two were dropped.
    int published = 0;
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (boxline.stats().logSegmentsDropped() < 2 && System.nanoTime() < deadline) {
      long segments = count("SELECT max(number) FROM " + db.table("log_segment"));
      publish(boxline, t, "w" + published, 10);
      published += 10;
      Await.until(
          WAIT,
          "another segment opened",
          () -> count("SELECT max(number) FROM " + db.table("log_segment")) > segments);
    }
    assertThat(boxline.stats().logSegmentsDropped()).isGreaterThanOrEqualTo(2);
    int total = published;
    Await.until(WAIT, "every event handled", () -> seen.size() == total);
    // Everything retention removed went with a dropped segment: no row was deleted.
    BoxlineStats stats = boxline.stats(); // one snapshot: a run may end between two reads
    assertThat(stats.retentionDeleted()).isEqualTo(stats.logSegmentEvents()).isPositive();
    // What is left is, per partition, an unbroken run of sequences up to the newest.
    for (int p = 0; p < 2; p++) {
      long[] range = range(p);
      assertThat(range[2]).as("partition %d", p).isEqualTo(range[1] - range[0] + 1);
      assertThat(range[1]).isEqualTo(last(p));
    }
    // The dropped segments' tables are gone; those left are the ones the catalog lists. Retention
    // keeps running (every 200 ms) and may drop or open a segment between the two reads, so the
    // two must agree at some moment, not at the first look.
    Await.until(
        WAIT,
        "the log's tables and the segment catalog agree",
        () -> count("SELECT count(*) FROM " + db.table("log_segment")) == partitionsOfTheLog());
  }

  @Test
  void aSegmentStaysWhileASubscriptionOwesItsEvents() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/seg/owed", 1);
    subscribe(boxline, "fast", t);
    subscribe(boxline, "slow", t);
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofSeconds(2)));
    List<String> fast = new CopyOnWriteArrayList<>();
    boxline.consumer("fast").handler(e -> fast.add(body(e))).start();
    publish(boxline, t, "k", 20);
    Await.until(WAIT, "fast read all", () -> fast.size() == 20);
    long first = count("SELECT min(number) FROM " + db.table("log_segment"));
    // The events' segment has closed and aged past retention; "slow" has read none of them.
    Await.until(
        WAIT,
        "the first segment aged past retention",
        () ->
            count(
                    "SELECT count(*) FROM "
                        + db.table("log_segment")
                        + " WHERE number = "
                        + first
                        + " AND "
                        + db.olderThanSeconds("upper_bound", 3))
                == 1);
    long runs = boxline.stats().retentionRuns();
    Await.until(WAIT, "two more retention runs", () -> boxline.stats().retentionRuns() >= runs + 2);
    assertThat(count("SELECT count(*) FROM " + db.table("log"))).isEqualTo(20);
    assertThat(
            count("SELECT count(*) FROM " + db.table("log_segment") + " WHERE number = " + first))
        .isEqualTo(1);
    assertThat(boxline.stats().logSegmentEvents()).isZero(); // empty segments may have gone
    // Once "slow" has read them, the segment goes.
    List<String> slow = new CopyOnWriteArrayList<>();
    boxline.consumer("slow").handler(e -> slow.add(body(e))).start();
    Await.until(WAIT, "slow read all", () -> slow.size() == 20);
    Await.until(
        WAIT, "the segment dropped", () -> count("SELECT count(*) FROM " + db.table("log")) == 0);
    assertThat(slow).hasSize(20);
    // The run's counters are added up when the whole retention run ends, a little after the drop.
    Await.until(WAIT, "the drop counted", () -> boxline.stats().logSegmentEvents() >= 20);
    assertThat(boxline.stats().logSegmentEvents()).isEqualTo(20);
    assertThat(boxline.stats().retentionDeleted()).isEqualTo(20);
  }

  /** min(seq), max(seq), count(*) of a partition of the test's only topic. */
  private long[] range(int partition) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT min(seq), max(seq), count(*) FROM "
                    + db.table("log")
                    + " WHERE "
                    + partitionColumn()
                    + " = "
                    + partition)) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private String partitionColumn() {
    return db.dialect() == TestDatabase.Dialect.MARIADB ? "`partition`" : "partition";
  }

  private long last(int partition) {
    return count(
        "SELECT last_seq FROM "
            + db.table("partition")
            + " WHERE "
            + partitionColumn()
            + " = "
            + partition);
  }

  protected long count(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }
}
