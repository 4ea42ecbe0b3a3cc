package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.publish;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BusySubscriptionException;
import io.boxline.Consumer;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.NotFoundException;
import io.boxline.PartitionLag;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Delivery that every store must show: cursor moves, subscriptions and their start positions,
 * resuming and rewinding, cursors moved under a transactional consumer, in-place retries, batches,
 * and stopping with a batch in flight. A dialect's test class extends this and says how to get a
 * database.
 */
public abstract class DeliveryBehaviour extends DatabaseSuite {

  private Boxline boxline() {
    return db.boxline(EventTypes.empty());
  }

  /**
   * A consumer commits the cursor moves of several partitions together ({@code
   * Store.commitCursors}); a fenced move or one that finds the cursor elsewhere writes nothing and
   * does not hold back the others.
   */
  @Test
  void cursorMovesCommittedTogetherStandOnTheirOwn() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/cursors/moves", 4);
    subscribe(boxline, "sub", t);
    Store store = db.store();
    long sub = store.findSubscription("sub").orElseThrow().id();
    long topicId = store.findTopic(t).orElseThrow().id();
    List<PartitionKey> parts = new ArrayList<>();
    for (int p = 0; p < 4; p++) {
      parts.add(PartitionKey.of(topicId, p));
    }
    long epoch = 7;
    assertThat(SuiteSupport.fence(store, sub, parts, new long[] {epoch, epoch, epoch, epoch}, "me"))
        .containsExactly(0, 0, 0, 0);

    List<CommitOutcome> outcomes =
        store.settle(
            sub,
            List.of(
                Settlement.move(parts.get(0), epoch, 0, 3),
                Settlement.move(parts.get(1), epoch - 1, 0, 2), // an older lease
                Settlement.move(parts.get(2), epoch, 1, 2), // the cursor is not at 1
                Settlement.move(parts.get(3), epoch, 0, 1)));

    assertThat(outcomes)
        .containsExactly(
            CommitOutcome.COMMITTED,
            CommitOutcome.FENCED,
            CommitOutcome.CURSOR_MOVED,
            CommitOutcome.COMMITTED);
    Map<Integer, Long> positions = new HashMap<>();
    for (PartitionLag lag : store.lag(sub)) {
      positions.put(lag.partition(), lag.position());
    }
    assertThat(positions).containsExactlyInAnyOrderEntriesOf(Map.of(0, 3L, 1, 0L, 2, 0L, 3, 1L));

    // The next moves start where the committed ones left the cursors.
    assertThat(
            store.settle(
                sub,
                List.of(
                    Settlement.move(parts.get(0), epoch, 3, 5),
                    Settlement.move(parts.get(3), epoch, 0, 2))))
        .containsExactly(CommitOutcome.COMMITTED, CommitOutcome.CURSOR_MOVED);
  }

  @Test
  void twoSubscriptionsEachSeeEverythingAndOneSubscriptionReadsSeveralTopics() {
    Boxline boxline = boxline();
    TopicName a = topic(boxline, "acme/multi/a", 3);
    TopicName b = topic(boxline, "acme/multi/b", 2);
    subscribe(boxline, "both", a, b);
    subscribe(boxline, "only-a", a);
    Recorder both = new Recorder();
    Recorder onlyA = new Recorder();
    boxline.consumer("both").handler(both::record).start();
    boxline.consumer("only-a").handler(onlyA::record).start();
    publish(boxline, a, "ka", 25);
    publish(boxline, b, "kb", 15);
    Await.until(WAIT, "40 and 25 events", () -> both.size() >= 40 && onlyA.size() >= 25);
    SuiteSupport.awaitCaughtUp(boxline, "both");
    SuiteSupport.awaitCaughtUp(boxline, "only-a");
    assertThat(both.size()).isEqualTo(40);
    assertThat(onlyA.size()).isEqualTo(25);
    assertThat(onlyA.all).allMatch(e -> e.topic().equals(a));
    assertThat(boxline.admin().subscription("both").orElseThrow().topics())
        .containsExactlyInAnyOrder(a, b);
  }

  @Test
  void consumerResumesFromItsCursorAfterRestart() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/resume", 2);
    subscribe(boxline, "s", t);
    Recorder run1 = new Recorder();
    Consumer c1 = boxline.consumer("s").handler(run1::record).start();
    publish(boxline, t, "k", 20);
    Await.until(WAIT, "20 events in run 1", () -> run1.size() >= 20);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(c1.stop(Duration.ofSeconds(5))).isTrue();
    assertThat(c1.handledCount()).isEqualTo(20);
    publish(boxline, t, "j", 10);
    Recorder run2 = new Recorder();
    boxline.consumer("s").handler(run2::record).start();
    Await.until(WAIT, "10 events in run 2", () -> run2.size() >= 10);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(run2.all).hasSize(10).allMatch(e -> body(e).startsWith("j-"));
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("s"))).isEqualTo(30);
  }

  @Test
  void subscriptionsStartAtEarliestLatestOrATimestamp() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/start", 2);
    publish(boxline, t, "old", 6);
    subscribe(boxline, "probe", t);
    Recorder probe = new Recorder();
    Consumer probeConsumer = boxline.consumer("probe").handler(probe::record).start();
    Await.until(WAIT, "old events sequenced", () -> probe.size() >= 6);
    probeConsumer.close();
    Instant between = db.databaseNow();
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of("latest", t).startAt(StartPosition.latest()));
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of("earliest", t).startAt(StartPosition.earliest()));
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of("at", t).startAt(StartPosition.at(between)));
    publish(boxline, t, "new", 4);
    Recorder latest = new Recorder();
    Recorder earliest = new Recorder();
    Recorder at = new Recorder();
    boxline.consumer("latest").handler(latest::record).start();
    boxline.consumer("earliest").handler(earliest::record).start();
    boxline.consumer("at").handler(at::record).start();
    Await.until(
        WAIT,
        "all three caught up",
        () -> latest.size() >= 4 && earliest.size() >= 10 && at.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "latest");
    SuiteSupport.awaitCaughtUp(boxline, "at");
    SuiteSupport.awaitCaughtUp(boxline, "earliest");
    assertThat(latest.all).hasSize(4).allMatch(e -> body(e).startsWith("new"));
    assertThat(at.all).hasSize(4).allMatch(e -> body(e).startsWith("new"));
    assertThat(earliest.all).hasSize(10);
    // Creating an existing subscription again with the same topics keeps its cursors.
    assertThat(boxline.admin().createSubscription(SubscriptionSpec.of("latest", t)).name())
        .isEqualTo("latest");
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("latest"))).isEqualTo(10);
  }

  @Test
  void seekMovesSingleCursorsWithinTheLogAndOnlyWithoutLiveConsumers() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/seek", 2);
    subscribe(boxline, "s", t);
    publish(boxline, t, "a", 6);
    SuiteSupport.awaitSequenced(boxline, "s", 6);
    List<Long> heads = boxline.admin().topicState(t).heads();
    int full = heads.get(0) > 0 ? 0 : 1;
    List<PartitionLag> moved =
        boxline
            .admin()
            .seek("s", java.util.Map.of(new io.boxline.TopicPartition(t, full), heads.get(full)));
    assertThat(
            moved.stream().filter(l -> l.partition() == full).findFirst().orElseThrow().position())
        .isEqualTo(heads.get(full));
    assertThat(SuiteSupport.totalPosition(moved)).isEqualTo(heads.get(full));
    assertThatThrownBy(
            () ->
                boxline
                    .admin()
                    .seek(
                        "s",
                        java.util.Map.of(
                            new io.boxline.TopicPartition(t, full), heads.get(full) + 1)))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessageContaining("out of range");
    assertThatThrownBy(
            () ->
                boxline
                    .admin()
                    .seek("s", java.util.Map.of(new io.boxline.TopicPartition(t, 5), 0L)))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessageContaining("no partition 5");
    Recorder seen = new Recorder();
    Consumer running = boxline.consumer("s").handler(seen::record).start();
    Await.until(WAIT, "the other partition's events", () -> seen.size() >= 6 - heads.get(full));
    assertThatThrownBy(
            () ->
                boxline
                    .admin()
                    .seek("s", java.util.Map.of(new io.boxline.TopicPartition(t, full), 0L)))
        .isInstanceOf(BusySubscriptionException.class);
    running.close();
    assertThat(seen.all).allMatch(e -> e.partition() != full);
  }

  @Test
  void rewindDeliversAgainFromEarliestOrATimestampOrSkipsToLatest() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/rewind", 2);
    subscribe(boxline, "s", t);
    publish(boxline, t, "a", 6);
    Recorder first = new Recorder();
    Consumer running = boxline.consumer("s").handler(first::record).start();
    Await.until(WAIT, "6 events", () -> first.size() >= 6);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThatThrownBy(() -> boxline.admin().rewind("s", StartPosition.earliest()))
        .isInstanceOf(BusySubscriptionException.class)
        .hasMessageContaining("live consumers")
        .hasMessageContaining("close them");
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("s"))).isEqualTo(6);
    running.close();

    List<PartitionLag> rewound = boxline.admin().rewind("s", StartPosition.earliest());
    assertThat(SuiteSupport.totalPosition(rewound)).isZero();
    assertThat(rewound.stream().mapToLong(PartitionLag::backlog).sum()).isEqualTo(6);
    Recorder again = new Recorder();
    Consumer c = boxline.consumer("s").handler(again::record).start();
    Await.until(WAIT, "6 events again", () -> again.size() >= 6);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    c.close();
    assertThat(again.all).hasSize(6).allMatch(e -> body(e).startsWith("a"));

    Instant between = db.databaseNow();
    publish(boxline, t, "b", 4);
    Recorder third = new Recorder();
    c = boxline.consumer("s").handler(third::record).start();
    Await.until(WAIT, "4 new events", () -> third.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    c.close();
    assertThat(SuiteSupport.totalPosition(boxline.admin().rewind("s", StartPosition.at(between))))
        .isEqualTo(6);
    Recorder fromThen = new Recorder();
    c = boxline.consumer("s").handler(fromThen::record).start();
    Await.until(WAIT, "the 4 events since then", () -> fromThen.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    c.close();
    assertThat(fromThen.all).hasSize(4).allMatch(e -> body(e).startsWith("b"));

    // Forward: the backlog is skipped.
    publish(boxline, t, "skipped", 3);
    Await.until(
        WAIT,
        "3 more sequenced",
        () -> boxline.admin().lag("s").stream().mapToLong(PartitionLag::backlog).sum() == 3);
    List<PartitionLag> skipped = boxline.admin().rewind("s", StartPosition.latest());
    assertThat(SuiteSupport.totalPosition(skipped)).isEqualTo(13);
    assertThat(skipped.stream().mapToLong(PartitionLag::backlog).sum()).isZero();
    Recorder latest = new Recorder();
    boxline.consumer("s").handler(latest::record).start();
    publish(boxline, t, "d", 2);
    Await.until(WAIT, "2 new events", () -> latest.size() >= 2);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(latest.all).hasSize(2).allMatch(e -> body(e).startsWith("d"));

    assertThatThrownBy(() -> boxline.admin().rewind("nope", StartPosition.earliest()))
        .isInstanceOf(NotFoundException.class);
  }

  /**
   * A transactional handler's settlement moves the cursor only under its epoch and from where it
   * left it, or it would write over a rewind it could not see (a consumer that had expired but
   * still ran) or a cursor a crash took back. Its writes commit once per handling the cursor
   * records: a handling whose settlement is refused rolls back with them.
   */
  @Test
  void aTransactionalConsumerGoesBackToACursorMovedUnderneathIt() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/moved", 1);
    subscribe(boxline, "s", t);
    String effects = db.schema() + ".moved_effects";
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      st.executeUpdate("CREATE TABLE " + effects + " (body VARCHAR(64) NOT NULL)");
    }
    publish(boxline, t, "k", 5);
    boxline
        .consumer("s")
        .transactionalHandler(
            (e, tx) -> {
              try (var ps = tx.prepareStatement("INSERT INTO " + effects + " VALUES (?)")) {
                ps.setString(1, body(e));
                ps.executeUpdate();
              }
            })
        .start();
    Await.until(WAIT, "5 handled", () -> effects(effects).size() >= 5);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      c.setAutoCommit(true);
      assertThat(st.executeUpdate("UPDATE " + db.schema() + ".cursor SET position = 2"))
          .isEqualTo(1);
    }
    publish(boxline, t, "n", 1);
    Await.until(
        WAIT,
        "the events after the moved cursor again, and the new one",
        () ->
            effects(effects).containsKey("n-0")
                && effects(effects).getOrDefault("k-4", 0) >= 2
                && SuiteSupport.totalPosition(boxline.admin().lag("s")) == 6);
    assertThat(effects(effects))
        .as("committed effects per event")
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("k-0", 1, "k-1", 1, "k-2", 2, "k-3", 2, "k-4", 2, "n-0", 1));
  }

  /** How many rows of {@code table} each body has. */
  private Map<String, Integer> effects(String table) {
    Map<String, Integer> counts = new java.util.HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery("SELECT body FROM " + table)) {
      while (rs.next()) {
        counts.merge(rs.getString(1), 1, Integer::sum);
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("cannot read " + table, e);
    }
    return counts;
  }

  @Test
  void rewindDropsTheDeadLettersItWillDeliverAgain() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/rewind/dead", 1);
    subscribe(boxline, "s", t);
    publish(boxline, t, "k", 5);
    AtomicBoolean broken = new AtomicBoolean(true);
    Recorder handled = new Recorder();
    Consumer c =
        boxline
            .consumer("s")
            .retryPolicy(SuiteSupport.deadLetterAtOnce())
            .handler(
                e -> {
                  if (body(e).equals("k-2") && broken.get()) {
                    throw new IllegalStateException("k-2 fails");
                  }
                  handled.record(e);
                })
            .start();
    SuiteSupport.awaitK2DeadLetteredAndTheOthersHandled(boxline, handled);
    c.close();

    boxline.admin().rewind("s", StartPosition.earliest());
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s"))).isEmpty();
    broken.set(false);
    Recorder again = new Recorder();
    boxline.consumer("s").handler(again::record).start();
    Await.until(WAIT, "all 5 again", () -> again.size() >= 5);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(again.all)
        .extracting(SuiteSupport::body)
        .containsExactly("k-0", "k-1", "k-2", "k-3", "k-4");
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s"))).isEmpty();
  }

  @Test
  void failingHandlerIsRetriedInPlaceAndNothingIsSkipped() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/retry", 1);
    subscribe(boxline, "s", t);
    AtomicInteger attempts = new AtomicInteger();
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(
            io.boxline.RetryPolicy.exponential(Duration.ofMillis(5), Duration.ofMillis(20))
                .inPlaceAttempts(10))
        .handler(
            e -> {
              if (body(e).equals("e-3") && attempts.incrementAndGet() <= 3) {
                throw new IllegalStateException("transient failure " + attempts.get());
              }
              handled.add(body(e));
            })
        .start();
    publish(boxline, t, null, 6);
    Await.until(WAIT, "6 handled", () -> handled.size() >= 6);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(attempts.get()).isEqualTo(4);
    assertThat(handled).containsExactly("e-0", "e-1", "e-2", "e-3", "e-4", "e-5");
  }

  @Test
  void batchHandlerGetsConsecutiveBatchesNoLargerThanConfigured() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/batch", 1);
    subscribe(boxline, "s", t);
    List<List<Event>> batches = new CopyOnWriteArrayList<>();
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < 95; i++) {
      events.add(raw(t, null, "b" + i));
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    boxline.consumer("s").batchSize(20).batchHandler(batches::add).start();
    Await.until(
        WAIT, "95 events in batches", () -> batches.stream().mapToInt(List::size).sum() >= 95);
    long expected = 1;
    for (List<Event> b : batches) {
      assertThat(b.size()).isBetween(1, 20);
      for (Event e : b) {
        assertThat(e.sequence()).isEqualTo(expected++);
      }
    }
    assertThat(expected).isEqualTo(96);
  }

  @Test
  void stopWaitsForTheInFlightBatchAndCommitsExactlyWhatWasHandled() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/stop", 1);
    subscribe(boxline, "s", t);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<Long> handled = new CopyOnWriteArrayList<>();
    Consumer c =
        boxline
            .consumer("s")
            .batchSize(10)
            .handler(
                e -> {
                  if (e.sequence() == 4) {
                    entered.countDown();
                    try {
                      release.await();
                    } catch (InterruptedException ie) {
                      Thread.currentThread().interrupt();
                      throw new IllegalStateException("abandoned", ie);
                    }
                  }
                  handled.add(e.sequence());
                })
            .start();
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      events.add(raw(t, null, "s" + i));
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
    // The handler is stuck on event 4: a short stop abandons the batch and commits nothing past
    // event 3.
    assertThat(c.stop(Duration.ofMillis(200))).isFalse();
    assertThat(handled).containsExactly(1L, 2L, 3L);
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("s"))).isLessThanOrEqualTo(3);
    // A new consumer resumes from the cursor: events 4.. (and at most the abandoned batch again).
    release.countDown();
    Recorder again = new Recorder();
    Consumer c2 = boxline.consumer("s").handler(again::record).start();
    Await.until(WAIT, "rest delivered", () -> again.all.stream().anyMatch(e -> e.sequence() == 10));
    assertThat(again.all.get(0).sequence()).isLessThanOrEqualTo(4);
    // A stop with time to spare finishes cleanly and the cursor ends exactly at the last handled
    // event.
    assertThat(c2.stop(Duration.ofSeconds(5))).isTrue();
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("s"))).isEqualTo(10);
    c2.close(); // safe twice
  }
}
