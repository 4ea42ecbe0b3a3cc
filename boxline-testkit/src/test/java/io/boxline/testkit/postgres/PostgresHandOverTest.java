package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.PartitionLag;
import io.boxline.TopicName;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.HandOverBehaviour;
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
import org.junit.jupiter.api.Test;

/**
 * The hand-over suite on PostgreSQL, and what only PostgreSQL can show: cursor commits lost with
 * the database's asynchronous commits, and group-committed moves that check the log each on its
 * own.
 */
class PostgresHandOverTest extends HandOverBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint);
  }

  private static final Duration WAIT = Duration.ofSeconds(30);

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
      SuiteSupport.fence(store, sub, List.of(p0, p1), new long[] {epoch, epoch}, "me");
      UUID[] ids0 = ids(db, 0, 2);
      UUID[] ids1 = ids(db, 1, 2);
      ids1[1] = UUID.randomUUID(); // the log holds another event at partition 1, sequence 2

      List<CommitOutcome> outcomes =
          store.settle(
              sub,
              List.of(
                  Settlement.move(p0, epoch, 0, 2)
                      .holding(SuiteSupport.held(new long[] {1, 2}, ids0)),
                  Settlement.move(p1, epoch, 0, 2)
                      .holding(SuiteSupport.held(new long[] {1, 2}, ids1))));

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
}
