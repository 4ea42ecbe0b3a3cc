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
    // Events whose body starts with "block" hold the handler until their latch is released.
    Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();
    Map<String, CountDownLatch> release = new ConcurrentHashMap<>();
    List<Event> seen = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("sub")
            .handler(
                e -> {
                  seen.add(e);
                  String body = SuiteSupport.body(e);
                  if (!body.startsWith("block") || !release.containsKey(body)) {
                    return;
                  }
                  entered.get(body).countDown();
                  SuiteSupport.awaitRelease(release.get(body));
                })
            .start();
    SuiteSupport.publish(boxline, t, "warm", 1); // the consumer takes the partition's lease
    Await.until(WAIT, "the first event handled", () -> c.handledCount() == 1);

    // Whether the consumer takes an event from the hand-over or reads it from the log depends on
    // timing (a loaded machine reads the log now and then): publish blocking events until one came
    // from the hand-over, letting the others go.
    Event handed = null;
    for (int attempt = 1; attempt <= 10 && handed == null; attempt++) {
      String body = "block-" + attempt;
      entered.put(body, new CountDownLatch(1));
      release.put(body, new CountDownLatch(1));
      long hits = boxline.stats().handOverHits();
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "k", body)));
      assertThat(entered.get(body).await(30, TimeUnit.SECONDS)).as("handler entered").isTrue();
      if (boxline.stats().handOverHits() > hits) {
        handed = seen.get(seen.size() - 1);
      } else {
        release.get(body).countDown();
        long fromLog = seen.get(seen.size() - 1).sequence();
        Await.until(WAIT, body + " committed", () -> cursor(db) == fromLog);
      }
    }
    assertThat(handed).as("an event delivered from the hand-over within 10 tries").isNotNull();
    long seq = handed.sequence();

    // What a crash that lost the sequencer's batch and a re-sequencing would leave: another
    // event at the handed-over event's sequence.
    UUID other = UUID.randomUUID();
    try (Connection conn = db.dataSource().getConnection();
        PreparedStatement ps =
            conn.prepareStatement(
                "UPDATE " + db.table("log") + " SET event_id = ? WHERE seq = ?")) {
      if (db.dialect() == TestDatabase.Dialect.MARIADB) {
        ps.setString(1, other.toString()); // CHAR(36) there
      } else {
        ps.setObject(1, other);
      }
      ps.setLong(2, seq);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
    int before = seen.size();
    release.get(SuiteSupport.body(handed)).countDown();

    Await.until(WAIT, "the event at its sequence delivered again", () -> seen.size() > before);
    Event again = seen.get(before);
    assertThat(again.sequence()).isEqualTo(seq);
    assertThat(again.id()).isEqualTo(other).isNotEqualTo(handed.id());
    Await.until(WAIT, "the cursor at " + seq, () -> cursor(db) == seq);
    assertThat(seen).hasSize(before + 1);
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
