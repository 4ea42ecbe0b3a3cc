package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The sequencer hands the events it appended to consumers in the same process, and a consumer
 * commits such events only if the log still holds them (a database crash can lose the sequencer's
 * commit after the hand-over). Every store must show it.
 */
public abstract class HandOverBehaviour extends DatabaseSuite {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void consumersInTheSameProcessTakeAppendedEventsWithoutReadingThemBack() {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = SuiteSupport.topic(boxline, "acme/handover/events", 4);
    SuiteSupport.subscribe(boxline, "first", t);
    SuiteSupport.subscribe(boxline, "second", t);
    Map<String, List<Event>> seen = new ConcurrentHashMap<>();
    Consumer first =
        boxline
            .consumer("first")
            .handler(e -> seen.computeIfAbsent("first", k -> new CopyOnWriteArrayList<>()).add(e))
            .start();
    Consumer second =
        boxline
            .consumer("second")
            .batchHandler(
                b -> seen.computeIfAbsent("second", k -> new CopyOnWriteArrayList<>()).addAll(b))
            .start();

    // Idle partitions are not leased: the first events of each are read from the log when its
    // lease is taken; later ones come from the hand-over.
    SuiteSupport.publish(boxline, t, "k", 300);

    Await.until(
        WAIT,
        "300 events handled by each subscription",
        () -> first.handledCount() == 300 && second.handledCount() == 300);
    assertThat(boxline.stats().handOverHits()).isPositive();
    assertThat(seen).hasSize(2);
    for (List<Event> events : seen.values()) {
      assertThat(events).hasSize(300);
      Map<Integer, Long> last = new ConcurrentHashMap<>();
      for (Event e : events) {
        long before = last.getOrDefault(e.partition(), 0L);
        assertThat(e.sequence()).as("partition %d in order", e.partition()).isEqualTo(before + 1);
        last.put(e.partition(), e.sequence());
      }
    }
  }

  @Test
  void aHandedOverEventTheLogNoLongerHoldsIsDeliveredAgainFromTheLog() throws Exception {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = SuiteSupport.topic(boxline, "acme/handover/lost", 1);
    SuiteSupport.subscribe(boxline, "sub", t);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<Event> seen = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("sub")
            .handler(
                e -> {
                  seen.add(e);
                  if (!SuiteSupport.body(e).startsWith("block")) {
                    return;
                  }
                  entered.countDown();
                  SuiteSupport.awaitRelease(release);
                })
            .start();
    SuiteSupport.publish(boxline, t, "warm", 1); // the consumer takes the partition's lease
    Await.until(WAIT, "the first event handled", () -> c.handledCount() == 1);
    long hits = boxline.stats().handOverHits();

    SuiteSupport.publish(boxline, t, "block", 1);
    assertThat(entered.await(30, TimeUnit.SECONDS)).as("handler entered").isTrue();
    assertThat(boxline.stats().handOverHits())
        .as("delivered from the hand-over")
        .isGreaterThan(hits);
    UUID handed = seen.get(1).id();

    // What a crash that lost the sequencer's batch and a re-sequencing would leave: another
    // event at sequence 2.
    UUID other = UUID.randomUUID();
    try (Connection conn = db.dataSource().getConnection();
        PreparedStatement ps =
            conn.prepareStatement(
                "UPDATE " + db.table("log") + " SET event_id = ? WHERE seq = 2")) {
      if (db.dialect() == TestDatabase.Dialect.MARIADB) {
        ps.setString(1, other.toString()); // CHAR(36) there
      } else {
        ps.setObject(1, other);
      }
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
    release.countDown();

    Await.until(WAIT, "the event at sequence 2 delivered again", () -> seen.size() >= 3);
    assertThat(seen.get(2).sequence()).isEqualTo(2);
    assertThat(seen.get(2).id()).isEqualTo(other).isNotEqualTo(handed);
    Await.until(WAIT, "the cursor at 2", () -> cursor(db) == 2);
    assertThat(seen).hasSize(3);
    c.close();
  }

  /** The position of the test's only cursor. */
  protected static long cursor(TestDatabase db) {
    try (Connection conn = db.dataSource().getConnection();
        PreparedStatement ps = conn.prepareStatement("SELECT position FROM " + db.table("cursor"));
        ResultSet rs = ps.executeQuery()) {
      List<Long> positions = new ArrayList<>();
      while (rs.next()) {
        positions.add(rs.getLong(1));
      }
      assertThat(positions).hasSize(1);
      return positions.get(0);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
