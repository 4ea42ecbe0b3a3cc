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
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.Partitioner;
import io.boxline.PublishOptions;
import io.boxline.PublishResult;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.TransactionWork;
import io.boxline.TypedHandlers;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Publish, sequencing and delivery behaviour that every store must show. A dialect's test class
 * extends this and says how to get a database.
 */
public abstract class FoundationBehaviour extends DatabaseSuite {

  public record OrderPlaced(String customer, int counter) {}

  public record OrderShipped(String customer) {}

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
  void typedEventsArriveInOrderPerKeyAndDecode() {
    TopicName orders = TopicName.of("acme/shop", "orders");
    EventTypes types =
        EventTypes.builder()
            .register(
                EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::customer))
            .register(
                EventType.of(OrderShipped.class, "order.shipped", orders)
                    .key(OrderShipped::customer))
            .build();
    Boxline boxline = db.boxline(types);
    topic(boxline, "acme/shop/orders", 4);
    subscribe(boxline, "billing", orders);
    List<OrderPlaced> placed = new CopyOnWriteArrayList<>();
    List<OrderShipped> shipped = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .handler(
            TypedHandlers.builder(types)
                .on(OrderPlaced.class, placed::add)
                .on(OrderShipped.class, shipped::add)
                .build())
        .start();
    for (int i = 0; i < 30; i++) {
      int n = i;
      boxline.inTransaction(
          tx -> {
            boxline.publisher().publish(tx, new OrderPlaced("c" + (n % 3), n));
            return boxline.publisher().publish(tx, new OrderShipped("c" + (n % 3)));
          });
    }
    Await.until(WAIT, "30 + 30 events", () -> placed.size() == 30 && shipped.size() == 30);
    Map<String, Integer> last = new HashMap<>();
    for (OrderPlaced o : placed) {
      Integer prev = last.put(o.customer(), o.counter());
      assertThat(prev == null || prev < o.counter())
          .as("per-key order for %s: %s after %s", o.customer(), o.counter(), prev)
          .isTrue();
    }
  }

  @Test
  void rolledBackTransactionPublishesNothing() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/rb", 1);
    subscribe(boxline, "s", t);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      boxline.publisher().publish(c, raw(t, "k", "rolled-back"));
      c.rollback();
      boxline.publisher().publish(c, raw(t, "k", "committed"));
      c.commit();
      boxline
          .publisher()
          .committed(); // after-commit hook: hands the event to the sequencer at once
    }
    Await.until(WAIT, "committed event delivered", () -> seen.size() >= 1);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all).extracting(SuiteSupport::body).containsExactly("committed");
    assertThat(seen.all.get(0).sequence()).isEqualTo(1);
  }

  @Test
  void manyEventsInOneTransactionAndHeadersAndRawFieldsRoundTrip() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/raw", 2);
    subscribe(boxline, "s", t);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    UUID id = UUID.randomUUID();
    List<Object> batch = new ArrayList<>();
    batch.add(
        OutgoingEvent.builder(t)
            .id(id)
            .type("raw.bytes")
            .key("k1")
            .source("urn:test")
            .contentType("application/octet-stream")
            .payload(new byte[] {0, 1, 2, (byte) 255})
            .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            .header("x-tenant", "acme")
            .build());
    for (int i = 0; i < 99; i++) {
      batch.add(raw(t, "k" + (i % 5), "n" + i));
    }
    List<PublishResult> results =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    assertThat(results).hasSize(100);
    assertThat(results.get(0).eventId()).isEqualTo(id);
    assertThat(results).noneMatch(PublishResult::duplicate);
    Await.until(WAIT, "100 events", () -> seen.size() >= 100);
    Event first = seen.all.stream().filter(e -> e.id().equals(id)).findFirst().orElseThrow();
    assertThat(first.type()).isEqualTo("raw.bytes");
    assertThat(first.key()).isEqualTo("k1");
    assertThat(first.source()).isEqualTo("urn:test");
    assertThat(first.contentType()).isEqualTo("application/octet-stream");
    assertThat(first.payload()).containsExactly(0, 1, 2, 255);
    assertThat(first.headers())
        .containsEntry("x-tenant", "acme")
        .containsEntry("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    assertThat(first.createdAt()).isBefore(Instant.now().plusSeconds(60));
    assertThat(first.partition()).isEqualTo(results.get(0).partition());
    assertThat(first.partition()).isEqualTo(Partitioner.kafkaCompatible().partition("k1", 2));
    // Within one transaction, events of one key keep publish order.
    Map<String, List<Integer>> perKey = new HashMap<>();
    for (Event e : seen.all) {
      if (e.type().equals("test.event")) {
        perKey
            .computeIfAbsent(e.key(), k -> new ArrayList<>())
            .add(Integer.parseInt(body(e).substring(1)));
      }
    }
    perKey.values().forEach(v -> assertThat(v).isSorted());
  }

  @Test
  void idempotencyKeyStoresOneEventAndTellsTheCaller() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/idem", 2);
    TopicName other = topic(boxline, "acme/idem2", 2);
    subscribe(boxline, "s", t, other);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    OutgoingEvent.Builder base =
        OutgoingEvent.builder(t).type("x").key("k").idempotencyKey("pay-42");
    PublishResult first =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, base.payload(new byte[] {1}).build()));
    PublishResult again =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, base.payload(new byte[] {2}).build()));
    assertThat(first.duplicate()).isFalse();
    assertThat(again.duplicate()).isTrue();
    assertThat(again.eventId()).isEqualTo(first.eventId());
    // Twice in one batch: the first wins, the second is reported as its duplicate.
    List<PublishResult> inBatch =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publishAll(
                        tx,
                        List.of(
                            OutgoingEvent.builder(t).type("x").idempotencyKey("b-1").build(),
                            OutgoingEvent.builder(t).type("x").idempotencyKey("b-1").build(),
                            OutgoingEvent.builder(other).type("x").idempotencyKey("b-1").build())));
    assertThat(inBatch).extracting(PublishResult::duplicate).containsExactly(false, true, false);
    assertThat(inBatch.get(1).eventId()).isEqualTo(inBatch.get(0).eventId());
    // A rolled-back claim frees the key.
    try {
      boxline.inTransaction(
          tx -> {
            boxline
                .publisher()
                .publish(tx, OutgoingEvent.builder(t).type("x").idempotencyKey("rb").build());
            throw new IllegalStateException("roll back");
          });
    } catch (IllegalStateException expected) {
      // rolled back
    }
    PublishResult afterRollback =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(tx, OutgoingEvent.builder(t).type("x").idempotencyKey("rb").build()));
    assertThat(afterRollback.duplicate()).isFalse();
    // Typed publish with an idempotency key through PublishOptions.
    Await.until(WAIT, "4 distinct events", () -> seen.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all).hasSize(4);
    assertThat(
            seen.all.stream()
                .filter(e -> e.id().equals(first.eventId()))
                .findFirst()
                .orElseThrow()
                .payload())
        .containsExactly(1);
  }

  @Test
  void typedPublishHonoursPerCallOverrides() {
    TopicName orders = TopicName.of("acme/ov", "orders");
    TopicName audit = TopicName.of("acme/ov", "audit");
    EventTypes types =
        EventTypes.builder()
            .register(
                EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::customer))
            .build();
    Boxline boxline = db.boxline(types);
    topic(boxline, "acme/ov/orders", 1);
    topic(boxline, "acme/ov/audit", 3);
    subscribe(boxline, "s", orders, audit);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    PublishResult r =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(
                        tx,
                        new OrderPlaced("c1", 1),
                        PublishOptions.options()
                            .topic(audit)
                            .type("order.audited")
                            .key("other-key")
                            .header("h", "v")
                            .idempotencyKey("once")));
    PublishResult dup =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(
                        tx,
                        new OrderPlaced("c1", 1),
                        PublishOptions.options().topic(audit).idempotencyKey("once")));
    assertThat(dup.duplicate()).isTrue();
    assertThat(r.topic()).isEqualTo(audit);
    Await.until(WAIT, "1 event", () -> seen.size() >= 1);
    Event e = seen.all.get(0);
    assertThat(e.topic()).isEqualTo(audit);
    assertThat(e.type()).isEqualTo("order.audited");
    assertThat(e.key()).isEqualTo("other-key");
    assertThat(e.headers()).containsEntry("h", "v");
    assertThat(e.contentType()).isEqualTo("application/json");
    assertThat(e.payloadAs(OrderPlaced.class)).isEqualTo(new OrderPlaced("c1", 1));
  }

  /**
   * Contract point 3. Sixteen producers run transactions of random size that stay open for random
   * times (so outbox ids are taken in one order and committed in another), a tenth of them roll
   * back, while two subscriptions consume. Each subscription must see every committed event exactly
   * once, each partition as the gap-free sequence 1..n, per-key publish order kept, and nothing
   * that rolled back.
   */
  @Test
  void concurrentProducersCommittingOutOfOrderLoseNothingAndLeaveNoGaps() throws Exception {
    proveNothingLostNoGaps(Sequencing.SEQUENCER);
  }

  /**
   * Contract point 3 for topics whose producers number their events in their own transactions: half
   * the producers publish in plain transactions (one {@code publishAll} each), half through {@code
   * inTransaction} with one publish call per event (its events are written at the commit and handed
   * to the consumers in memory after it).
   */
  @Test
  void inTransactionSequencingLosesNothingAndLeavesNoGapsUnderConcurrentProducers()
      throws Exception {
    proveNothingLostNoGaps(Sequencing.IN_TRANSACTION);
    // Nothing went through the outbox or the sequencer; the plain transactions' events were found
    // by reading the partitions' heads after they committed (a consumer of this instance reads
    // them). The first subscription handles on committing threads when it is caught up, which
    // under this load may not happen at all; TransactionModelBehaviour asserts that path is taken.
    assertThat(proofBoxline.stats().eventsSequenced()).isZero();
    assertThat(proofBoxline.stats().announcerLooks()).isPositive();
  }

  private Boxline proofBoxline;

  /** Of events k-0 … k-4 on subscription "s": k-2 became a dead letter, the others were handled. */
  private static void awaitK2DeadLetteredAndTheOthersHandled(Boxline boxline, Recorder handled) {
    Await.until(
        WAIT,
        "k-2 dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).size() == 1);
    Await.until(WAIT, "the other 4 handled", () -> handled.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
  }

  /** One attempt, then a dead letter. */
  private static RetryPolicy deadLetterAtOnce() {
    return RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
        .inPlaceAttempts(1)
        .maxAttempts(1);
  }

  private static final class RollBack extends RuntimeException {
    RollBack() {
      super("roll back", null, false, false);
    }
  }

  private static void holdFor(int millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Two plain transactions that publish to an IN_TRANSACTION topic's partitions in opposite orders
   * deadlock; the database fails one of them, and the exception says why and how to avoid it. The
   * other commits.
   */
  @Test
  void plainTransactionsThatDeadlockOnAnInTransactionTopicAreToldHowToAvoidIt() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/deadlock/events", 2, Sequencing.IN_TRANSACTION);
    String[] keys = {SuiteSupport.keyFor(0, 2), SuiteSupport.keyFor(1, 2)};
    var publisher = boxline.publisher();
    try (Connection a = db.dataSource().getConnection();
        Connection b = db.dataSource().getConnection()) {
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      publisher.publish(a, raw(t, keys[0], "a-first"));
      publisher.publish(b, raw(t, keys[1], "b-first"));
      var second = java.util.concurrent.Executors.newFixedThreadPool(2);
      try {
        var fromA = second.submit(() -> publisher.publish(a, raw(t, keys[1], "a-second")));
        var fromB = second.submit(() -> publisher.publish(b, raw(t, keys[0], "b-second")));
        Await.until(WAIT, "one of the two failed", () -> failed(fromA) || failed(fromB));
        boolean aLost = failed(fromA);
        Connection loser = aLost ? a : b;
        Connection winner = aLost ? b : a;
        Throwable failure = failure(aLost ? fromA : fromB);
        loser.rollback();
        (aLost ? fromB : fromA).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        winner.commit();
        assertThat(failure)
            .isInstanceOf(io.boxline.StoreException.class)
            .hasMessageContaining("deadlocked")
            .hasMessageContaining("publishAll")
            .hasMessageContaining("inTransaction");
      } finally {
        second.shutdownNow();
      }
    }
  }

  /**
   * The same interleaving through {@code inTransaction}, with idempotency keys: the keys are
   * claimed at once (a repeated key is reported before the commit) but the events wait for the
   * commit and lock their partitions in one order there, so both transactions commit. Before, keyed
   * events were written at once and this deadlocked.
   */
  @Test
  void inTransactionTransactionsThatInterleaveKeyedPublishesDoNotDeadlock() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/keyed/events", 2, Sequencing.IN_TRANSACTION);
    Recorder seen = SuiteSupport.record(boxline, "s", t);
    String[] keys = {SuiteSupport.keyFor(0, 2), SuiteSupport.keyFor(1, 2)};
    var bothWrote = new java.util.concurrent.CyclicBarrier(2);
    var threads = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<Boolean>> txs = new ArrayList<>();
      for (int p = 0; p < 2; p++) {
        String name = p == 0 ? "a" : "b";
        String first = keys[p];
        String second = keys[1 - p];
        txs.add(
            threads.submit(
                () ->
                    boxline.inTransaction(
                        tx -> {
                          var publisher = boxline.publisher();
                          publisher.publish(tx, keyed(t, first, name + "-first", name + "-1"));
                          awaitBoth(bothWrote);
                          publisher.publish(tx, keyed(t, second, name + "-second", name + "-2"));
                          // The same key again in the same transaction: told now, stored once.
                          return publisher
                              .publish(tx, keyed(t, second, name + "-again", name + "-2"))
                              .duplicate();
                        })));
      }
      for (var tx : txs) {
        assertThat(tx.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      threads.shutdownNow();
    }
    PublishResult again =
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, keyed(t, keys[0], "x", "a-1")));
    assertThat(again.duplicate()).isTrue();
    Await.until(WAIT, "4 events", () -> seen.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all.stream().map(SuiteSupport::body))
        .containsExactlyInAnyOrder("a-first", "a-second", "b-first", "b-second");
  }

  /**
   * Contract point 1 inside {@code inTransaction}: what the work rolls back — to a savepoint, or
   * all of it with {@code rollback()} before it goes on — is not published, on either kind of topic
   * (in-transaction topics hold their events back to the commit, so Boxline must forget them
   * itself). Committing inside the work is refused and rolls everything back.
   */
  @Test
  void inTransactionForgetsWhatTheWorkRolledBackAndRefusesCommitsInside() throws Exception {
    Boxline boxline = boxline();
    TopicName direct = topic(boxline, "acme/savepoints/direct", 1, Sequencing.IN_TRANSACTION);
    TopicName queued = topic(boxline, "acme/savepoints/queued", 1);
    Recorder seen = SuiteSupport.record(boxline, "s", direct, queued);
    for (TopicName t : List.of(direct, queued)) {
      String n = t.name();
      boxline.inTransaction(
          tx -> {
            var publisher = boxline.publisher();
            publisher.publish(tx, raw(t, "k", n + "-kept-1"));
            java.sql.Savepoint before = tx.setSavepoint();
            publisher.publish(tx, raw(t, "k", n + "-undone-1"));
            java.sql.Savepoint inner = tx.setSavepoint("inner");
            publisher.publish(tx, raw(t, "k", n + "-undone-2"));
            tx.releaseSavepoint(inner);
            tx.rollback(before);
            publisher.publish(tx, raw(t, "k", n + "-kept-2"));
            return null;
          });
      boxline.inTransaction(
          tx -> {
            var publisher = boxline.publisher();
            publisher.publish(tx, raw(t, "k", n + "-undone-3"));
            tx.rollback();
            publisher.publish(tx, raw(t, "k", n + "-kept-3"));
            return null;
          });
      assertThatThrownBy(
              () ->
                  boxline.inTransaction(
                      tx -> {
                        boxline.publisher().publish(tx, raw(t, "k", n + "-undone-4"));
                        tx.commit();
                        return null;
                      }))
          .isInstanceOf(io.boxline.ConnectionStateException.class)
          .hasMessageContaining("commit")
          .hasMessageContaining("return");
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", n + "-kept-4")));
    }
    Await.until(WAIT, "8 events", () -> seen.size() >= 8);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    for (TopicName t : List.of(direct, queued)) {
      String n = t.name();
      assertThat(
              seen.all.stream().filter(e -> e.topic().equals(t)).map(SuiteSupport::body).toList())
          .as("events of %s", t)
          .containsExactly(n + "-kept-1", n + "-kept-2", n + "-kept-3", n + "-kept-4");
    }
  }

  /**
   * The other ways a work could commit behind the held-back events — {@code close()}, auto-commit
   * on — are refused, and so is a rollback to a savepoint set on the unwrapped connection (Boxline
   * cannot tell what it undid); each rolls the whole transaction back.
   */
  @Test
  void inTransactionRefusesCloseAutoCommitAndSavepointsItDidNotSee() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/refused/direct", 1, Sequencing.IN_TRANSACTION);
    Recorder seen = SuiteSupport.record(boxline, "s", t);
    List<TransactionWork<Object>> works =
        List.of(
            tx -> {
              tx.close();
              return null;
            },
            tx -> {
              tx.setAutoCommit(true);
              return null;
            },
            tx -> {
              java.sql.Savepoint unseen = tx.unwrap(Connection.class).setSavepoint();
              boxline.publisher().publish(tx, raw(t, "k", "refused-after-savepoint"));
              tx.rollback(unseen);
              return null;
            });
    for (TransactionWork<Object> work : works) {
      assertThatThrownBy(
              () ->
                  boxline.inTransaction(
                      tx -> {
                        boxline.publisher().publish(tx, raw(t, "k", "refused"));
                        return work.run(tx);
                      }))
          .isInstanceOf(io.boxline.ConnectionStateException.class)
          .hasMessageContaining("inTransaction");
    }
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "kept")));
    Await.until(WAIT, "the kept event", () -> seen.size() >= 1);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all.stream().map(SuiteSupport::body)).containsExactly("kept");
  }

  /**
   * An {@code inTransaction} nested in another one's work commits on its own; the outer one's
   * events keep their publish order around it (the outer transaction is still the one that holds
   * them).
   */
  @Test
  void aNestedInTransactionLeavesTheOuterOnesOrderAlone() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/nested/events", 1, Sequencing.IN_TRANSACTION);
    Recorder seen = SuiteSupport.record(boxline, "s", t);
    boxline.inTransaction(
        outer -> {
          var publisher = boxline.publisher();
          publisher.publish(outer, raw(t, "k", "outer-1"));
          boxline.inTransaction(inner -> publisher.publish(inner, raw(t, "k", "inner")));
          publisher.publish(outer, raw(t, "k", "outer-2"));
          return null;
        });
    Await.until(WAIT, "3 events", () -> seen.size() >= 3);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all.stream().map(SuiteSupport::body))
        .containsExactly("inner", "outer-1", "outer-2");
  }

  /**
   * A nested {@code inTransaction} that publishes an idempotency key its outer transaction claimed
   * would wait for the outer one for good; it is refused at once, and the outer one goes on.
   */
  @Test
  void aNestedInTransactionMayNotClaimAKeyItsOuterOneHolds() {
    Boxline boxline = boxline();
    TopicName direct = topic(boxline, "acme/claims/direct", 1, Sequencing.IN_TRANSACTION);
    TopicName queued = topic(boxline, "acme/claims/queued", 1);
    Recorder seen = SuiteSupport.record(boxline, "s", direct, queued);
    for (TopicName t : List.of(direct, queued)) {
      boxline.inTransaction(
          outer -> {
            var publisher = boxline.publisher();
            publisher.publish(outer, keyed(t, "k", t.name() + "-outer", "once"));
            assertThatThrownBy(
                    () ->
                        boxline.inTransaction(
                            inner -> publisher.publish(inner, keyed(t, "k", "inner", "once"))))
                .isInstanceOf(io.boxline.ValidationException.class)
                .hasMessageContaining("'once'")
                .hasMessageContaining("nested");
            // Another key is fine.
            boxline.inTransaction(
                inner -> publisher.publish(inner, keyed(t, "k", t.name() + "-inner", "twice")));
            return null;
          });
    }
    Await.until(WAIT, "4 events", () -> seen.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all.stream().map(SuiteSupport::body))
        .containsExactlyInAnyOrder("direct-outer", "direct-inner", "queued-outer", "queued-inner");
  }

  private static void awaitBoth(java.util.concurrent.CyclicBarrier barrier) {
    try {
      barrier.await(WAIT.toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("the other transaction did not publish its first event", e);
    }
  }

  private static OutgoingEvent keyed(TopicName t, String key, String body, String idempotencyKey) {
    return OutgoingEvent.builder(t)
        .type("test.keyed")
        .key(key)
        .payload(body.getBytes(java.nio.charset.StandardCharsets.UTF_8))
        .contentType("text/plain")
        .idempotencyKey(idempotencyKey)
        .build();
  }

  private static boolean failed(java.util.concurrent.Future<?> f) {
    return f.isDone() && failure(f) != null;
  }

  private static Throwable failure(java.util.concurrent.Future<?> f) {
    try {
      f.get(0, TimeUnit.SECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      return null;
    }
  }

  /**
   * A topic's sequencing is chosen once; one transaction can write to both kinds of topic, and an
   * idempotency key works the same on either.
   */
  @Test
  void inTransactionTopicsMixWithSequencerTopicsAndKeepTheirSequencing() {
    Boxline boxline = boxline();
    TopicName direct = TopicName.parse("acme/mix/direct");
    TopicName queued = TopicName.parse("acme/mix/queued");
    boxline.admin().createNamespace(direct.namespace());
    assertThat(boxline.admin().createTopic(direct, 2, Sequencing.IN_TRANSACTION).sequencing())
        .isEqualTo(Sequencing.IN_TRANSACTION);
    assertThat(boxline.admin().createTopic(queued, 2).sequencing()).isEqualTo(Sequencing.SEQUENCER);
    assertThat(boxline.admin().topic(direct).orElseThrow().sequencing())
        .isEqualTo(Sequencing.IN_TRANSACTION);
    assertThat(boxline.admin().createTopic(direct, 2, Sequencing.IN_TRANSACTION).id())
        .isEqualTo(boxline.admin().topic(direct).orElseThrow().id());
    assertThatThrownBy(() -> boxline.admin().createTopic(direct, 2))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessageContaining("sequencing IN_TRANSACTION, not SEQUENCER");
    subscribe(boxline, "mixed", direct, queued);
    Recorder seen = new Recorder();
    boxline.consumer("mixed").handler(seen::record).start();

    List<PublishResult> first =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publishAll(
                        tx,
                        List.of(
                            raw(direct, "k", "d1"),
                            raw(queued, "k", "q1"),
                            OutgoingEvent.builder(direct)
                                .type("test.event")
                                .key("k")
                                .contentType("text/plain")
                                .payload("d2".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                                .idempotencyKey("order-7")
                                .build())));
    assertThat(first).extracting(PublishResult::duplicate).containsExactly(false, false, false);
    PublishResult again =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(
                        tx,
                        OutgoingEvent.builder(direct)
                            .type("test.event")
                            .key("k")
                            .contentType("text/plain")
                            .payload("d3".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                            .idempotencyKey("order-7")
                            .build()));
    assertThat(again.duplicate()).isTrue();
    assertThat(again.eventId()).isEqualTo(first.get(2).eventId());

    Await.until(SuiteSupport.WAIT, "three events handled", () -> seen.size() >= 3);
    SuiteSupport.awaitCaughtUp(boxline, "mixed");
    assertThat(seen.all.stream().map(SuiteSupport::body))
        .containsExactlyInAnyOrder("d1", "d2", "q1");
    List<Event> directEvents = seen.all.stream().filter(e -> e.topic().equals(direct)).toList();
    assertThat(directEvents).extracting(Event::sequence).containsExactly(1L, 2L);
  }

  /**
   * Events an IN_TRANSACTION topic hands over in memory go through the same failure handling as
   * events read from the log: one that keeps failing becomes a dead letter, committed together with
   * the cursor after a check of the log, and the others are handled.
   */
  @Test
  void handedOverEventsThatFailAreDeadLetteredAndTheRestHandled() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/direct/failing", 1, Sequencing.IN_TRANSACTION);
    subscribe(boxline, "s", t);
    Recorder handled = new Recorder();
    boxline
        .consumer("s")
        .retryPolicy(deadLetterAtOnce())
        .handler(
            e -> {
              if (body(e).equals("k-2")) {
                throw new IllegalStateException("k-2 fails");
              }
              handled.record(e);
            })
        .start();
    publish(boxline, t, "k", 5);
    awaitK2DeadLetteredAndTheOthersHandled(boxline, handled);
    assertThat(handled.all)
        .extracting(SuiteSupport::body)
        .containsExactly("k-0", "k-1", "k-3", "k-4");
    assertThat(boxline.stats().handOverHits()).as("events taken from memory").isPositive();
  }

  /**
   * Events of an IN_TRANSACTION topic reach a consumer in another Boxline instance (which shares no
   * in-process signal with the producer), whether the producer's commit is known to Boxline ({@code
   * inTransaction}) or not (a plain transaction), and while a rolled-back transaction's numbers are
   * used again by the next one.
   */
  @Test
  void anotherInstanceHearsOfInTransactionEvents() throws Exception {
    Boxline producer = db.boxline(b -> b.sequencer(false));
    Boxline consumer = db.boxline(b -> b);
    TopicName t = topic(producer, "acme/remote/direct", 1, Sequencing.IN_TRANSACTION);
    subscribe(producer, "remote", t);
    Recorder seen = new Recorder();
    consumer.consumer("remote").handler(seen::record).start();

    producer.inTransaction(tx -> producer.publisher().publish(tx, raw(t, "k", "managed")));
    Await.until(SuiteSupport.WAIT, "the managed event arrived", () -> seen.size() >= 1);

    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      producer.publisher().publish(c, raw(t, "k", "rolled-back"));
      c.rollback();
      producer.publisher().publish(c, raw(t, "k", "plain"));
      c.commit();
    }
    Await.until(SuiteSupport.WAIT, "the plain event arrived", () -> seen.size() >= 2);
    SuiteSupport.awaitCaughtUp(consumer, "remote");
    assertThat(seen.all.stream().map(SuiteSupport::body)).containsExactly("managed", "plain");
    assertThat(seen.all).extracting(Event::sequence).containsExactly(1L, 2L);
    // The producer's instance told the other one: it had no sequencer to do it.
    assertThat(producer.stats().announcements()).isPositive();
    assertThat(producer.stats().eventsSequenced()).isZero();
  }

  private void proveNothingLostNoGaps(Sequencing sequencing) throws Exception {
    Boxline boxline = boxline();
    proofBoxline = boxline;
    TopicName t = topic(boxline, "acme/proof/events", 8, sequencing);
    subscribe(boxline, "first", t);
    subscribe(boxline, "second", t);
    Recorder first = new Recorder();
    Recorder second = new Recorder();
    // On in-transaction topics the first subscription also handles on the committing threads.
    boxline
        .consumer("first")
        .handler(first::record)
        .batchSize(50)
        .concurrency(4)
        .handleOnCommittingThread(sequencing == Sequencing.IN_TRANSACTION)
        .start();
    boxline
        .consumer("second")
        .batchHandler(b -> b.forEach(second::record))
        .batchSize(200)
        .concurrency(2)
        .start();

    int producers = 16;
    int txPerProducer = 40;
    Set<UUID> committed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Set<UUID> rolledBack = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    for (int p = 0; p < producers; p++) {
      int producer = p;
      Thread th =
          new Thread(
              () -> {
                java.util.Random rnd = new java.util.Random(producer);
                int[] counters = new int[5];
                boolean managed = sequencing == Sequencing.IN_TRANSACTION && producer % 2 == 1;
                try (Connection c = db.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  for (int i = 0; i < txPerProducer; i++) {
                    int size = 1 + rnd.nextInt(12);
                    List<Object> events = new ArrayList<>();
                    int[] next = counters.clone();
                    for (int j = 0; j < size; j++) {
                      int k = rnd.nextInt(5);
                      String key = "p" + producer + "-k" + k;
                      events.add(raw(t, key, key + ":" + next[k]++));
                    }
                    // Hold the transaction open for a random time so commits interleave out of id
                    // order. This shapes the workload; it synchronises nothing.
                    int hold = rnd.nextInt(15);
                    boolean rollBack = rnd.nextInt(10) == 0;
                    if (managed) {
                      List<PublishResult> results = new ArrayList<>();
                      try {
                        boxline.inTransaction(
                            tx -> {
                              // One call per event, partitions in random order: inTransaction
                              // holds them back and writes them in key order at the commit, so
                              // these transactions neither deadlock nor lose the call order.
                              for (Object e : events) {
                                results.add(boxline.publisher().publish(tx, e));
                              }
                              holdFor(hold);
                              if (rollBack) {
                                throw new RollBack();
                              }
                              return null;
                            });
                        counters = next;
                        results.forEach(r -> committed.add(r.eventId()));
                      } catch (RollBack expected) {
                        results.forEach(r -> rolledBack.add(r.eventId()));
                      }
                      continue;
                    }
                    List<PublishResult> results = boxline.publisher().publishAll(c, events);
                    Thread.sleep(hold);
                    if (rollBack) {
                      c.rollback();
                      results.forEach(r -> rolledBack.add(r.eventId()));
                    } else {
                      c.commit();
                      counters = next;
                      results.forEach(r -> committed.add(r.eventId()));
                    }
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              },
              "producer-" + p);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join(TimeUnit.MINUTES.toMillis(2));
    }
    assertThat(failures).isEmpty();
    assertThat(rolledBack).isNotEmpty();
    assertThat(committed.size()).isGreaterThan(1000);
    Await.until(
        Duration.ofSeconds(60),
        "both subscriptions saw " + committed.size() + " events",
        () -> first.size() >= committed.size() && second.size() >= committed.size());
    SuiteSupport.awaitCaughtUp(boxline, "first");
    SuiteSupport.awaitCaughtUp(boxline, "second");
    for (Recorder r : List.of(first, second)) {
      assertThat(r.size()).as("exactly once: no duplicates").isEqualTo(committed.size());
      Set<UUID> ids = new HashSet<>();
      r.all.forEach(e -> ids.add(e.id()));
      assertThat(ids).isEqualTo(committed);
      assertThat(ids).doesNotContainAnyElementsOf(rolledBack);
      r.sequences()
          .forEach(
              (partition, seqs) -> {
                for (int i = 0; i < seqs.size(); i++) {
                  assertThat(seqs.get(i)).as("%s delivery %d", partition, i).isEqualTo(i + 1L);
                }
              });
      Map<String, Integer> lastPerKey = new HashMap<>();
      for (Event e : r.all) {
        String[] f = body(e).split(":");
        int n = Integer.parseInt(f[1]);
        Integer prev = lastPerKey.put(f[0], n);
        assertThat(prev == null ? -1 : prev).as("order of key %s", f[0]).isEqualTo(n - 1);
      }
    }
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
            .retryPolicy(deadLetterAtOnce())
            .handler(
                e -> {
                  if (body(e).equals("k-2") && broken.get()) {
                    throw new IllegalStateException("k-2 fails");
                  }
                  handled.record(e);
                })
            .start();
    awaitK2DeadLetteredAndTheOthersHandled(boxline, handled);
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

  @Test
  void twoInstancesStartingAtOnceMigrateOnce() throws Exception {
    int n = 4;
    CountDownLatch go = new CountDownLatch(1);
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Thread th =
          new Thread(
              () -> {
                try {
                  go.await();
                  db.boxline(b -> b);
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(th);
      th.start();
    }
    go.countDown();
    for (Thread th : threads) {
      th.join(60_000);
    }
    assertThat(failures).isEmpty();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*), max(version) FROM " + db.schema() + ".schema_version")) {
      rs.next();
      assertThat(rs.getInt(1)).isEqualTo(rs.getInt(2));
      assertThat(rs.getInt(1)).isGreaterThanOrEqualTo(1);
    }
  }

  @Test
  void topicNamesAreCaseSensitive() {
    Boxline boxline = boxline();
    TopicName lower = topic(boxline, "acme/case/orders", 1);
    TopicName upper = topic(boxline, "acme/case/Orders", 2);
    assertThat(boxline.admin().topic(lower).orElseThrow().partitions()).isEqualTo(1);
    assertThat(boxline.admin().topic(upper).orElseThrow().partitions()).isEqualTo(2);
    assertThat(boxline.admin().topics()).hasSize(2);
  }

  /** Reads every (partition, seq) of a topic straight from the log table, for white-box checks. */
  protected Map<Integer, List<Long>> logSequences(String topicName) throws Exception {
    Map<Integer, List<Long>> out = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT l.partition, l.seq FROM "
                    + db.schema()
                    + ".log l JOIN "
                    + db.schema()
                    + ".topic t ON t.id = l.topic_id WHERE t.name = ? ORDER BY 1, 2")) {
      ps.setString(1, topicName);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.computeIfAbsent(rs.getInt(1), k -> new ArrayList<>()).add(rs.getLong(2));
        }
      }
    }
    return out;
  }

  protected static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
