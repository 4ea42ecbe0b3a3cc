package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.PartitionLag;
import io.boxline.TopicName;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CursorMove;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
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
 * asynchronous commit after the hand-over).
 */
class PostgresHandOverTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void consumersInTheSameProcessTakeAppendedEventsWithoutReadingThemBack() {
    try (TestDatabase db = TestDatabase.create("handover")) {
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
  }

  @Test
  void aHandedOverEventTheLogNoLongerHoldsIsDeliveredAgainFromTheLog() throws Exception {
    try (TestDatabase db = TestDatabase.create("handover_lost")) {
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
                    try {
                      release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException ie) {
                      Thread.currentThread().interrupt();
                    }
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
        ps.setObject(1, other);
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
  }

  @Test
  void aConsumerWhoseCursorCommitsWereLostGoesBackToTheStoredCursor() throws Exception {
    try (TestDatabase db = TestDatabase.create("lost_commits")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName t = SuiteSupport.topic(boxline, "acme/lost/commits", 1);
      SuiteSupport.subscribe(boxline, "sub", t);
      List<Event> seen = new CopyOnWriteArrayList<>();
      Consumer c = boxline.consumer("sub").handler(seen::add).start();
      SuiteSupport.publish(boxline, t, "k", 3);
      Await.until(WAIT, "three events handled", () -> c.handledCount() == 3);
      Await.until(WAIT, "the cursor at 3", () -> cursor(db) == 3);

      // What a server crash can leave behind: the cursor moves past 1 and the sequencer batch
      // behind
      // them lost, and other events sequenced at 2 and 3 since (a producer that committed while
      // the lost batch was taken lands among them). The consumer still stands at 3 in memory.
      UUID second = UUID.randomUUID();
      UUID third = UUID.randomUUID();
      try (Connection conn = db.dataSource().getConnection()) {
        conn.setAutoCommit(false);
        try (PreparedStatement ps =
            conn.prepareStatement("UPDATE " + db.table("cursor") + " SET position = 1")) {
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        try (PreparedStatement ps =
            conn.prepareStatement(
                "UPDATE " + db.table("log") + " SET event_id = ? WHERE seq = ?")) {
          ps.setObject(1, second);
          ps.setLong(2, 2);
          assertThat(ps.executeUpdate()).isEqualTo(1);
          ps.setObject(1, third);
          ps.setLong(2, 3);
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        conn.commit();
      }

      SuiteSupport.publish(boxline, t, "after", 1);
      Await.until(
          WAIT,
          "the events now stored at 2 and 3 delivered",
          () ->
              seen.stream().anyMatch(e -> e.id().equals(second))
                  && seen.stream().anyMatch(e -> e.id().equals(third)));
      Await.until(WAIT, "the cursor at 4", () -> cursor(db) == 4);
      c.close();
    }
  }

  /**
   * The group commit of handed-over events checks each move's events against the log on its own:
   * the move whose events the log no longer holds writes nothing, the others commit.
   */
  @Test
  void groupCommittedMovesCheckTheLogEachOnItsOwn() throws Exception {
    try (TestDatabase db = TestDatabase.create("group_commit")) {
      Boxline boxline = db.boxline(b -> b);
      TopicName t = SuiteSupport.topic(boxline, "acme/group/commit", 2);
      SuiteSupport.subscribe(boxline, "sub", t);
      SuiteSupport.publish(boxline, t, "k", 20); // keys k0..k6 land in both partitions
      Store store = db.store();
      long sub = store.findSubscription("sub").orElseThrow().id();
      long topicId = store.findTopic(t).orElseThrow().id();
      Await.until(
          WAIT,
          "20 events sequenced",
          () -> store.lag(sub).stream().mapToLong(PartitionLag::lastSequence).sum() == 20);
      PartitionKey p0 = PartitionKey.of(topicId, 0);
      PartitionKey p1 = PartitionKey.of(topicId, 1);
      long epoch = 3;
      store.fenceCursors(sub, List.of(p0, p1), new long[] {epoch, epoch}, "me");
      UUID[] ids0 = ids(db, 0, 2);
      UUID[] ids1 = ids(db, 1, 2);
      ids1[1] = UUID.randomUUID(); // the log holds another event at partition 1, sequence 2

      List<CommitOutcome> outcomes =
          store.commitCursors(
              sub,
              List.of(
                  new CursorMove(p0, 0, 2, epoch, new long[] {1, 2}, ids0),
                  new CursorMove(p1, 0, 2, epoch, new long[] {1, 2}, ids1)));

      assertThat(outcomes).containsExactly(CommitOutcome.COMMITTED, CommitOutcome.LOG_CHANGED);
      Map<Integer, Long> positions = new ConcurrentHashMap<>();
      store.lag(sub).forEach(l -> positions.put(l.partition(), l.position()));
      assertThat(positions).containsExactlyInAnyOrderEntriesOf(Map.of(0, 2L, 1, 0L));
    }
  }

  /** The ids of the first {@code n} events of a partition, in sequence order. */
  private static UUID[] ids(TestDatabase db, int partition, int n) throws Exception {
    try (Connection conn = db.dataSource().getConnection();
        PreparedStatement ps =
            conn.prepareStatement(
                "SELECT event_id FROM "
                    + db.table("log")
                    + " WHERE partition = ? AND seq <= ? ORDER BY seq")) {
      ps.setInt(1, partition);
      ps.setLong(2, n);
      List<UUID> ids = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getObject(1, UUID.class));
        }
      }
      assertThat(ids).as("events in partition %d", partition).hasSize(n);
      return ids.toArray(new UUID[0]);
    }
  }

  private static long cursor(TestDatabase db) {
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
