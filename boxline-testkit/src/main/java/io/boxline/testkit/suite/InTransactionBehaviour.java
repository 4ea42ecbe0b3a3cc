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
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.TransactionWork;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Topics numbered in the writer's transaction ({@code Sequencing.IN_TRANSACTION}) and {@code
 * inTransaction}: deadlocks told and avoided, what the work rolls back forgotten, what it may not
 * do refused, nesting, mixing with sequencer topics, events handed over in memory, and other
 * instances hearing of them. A dialect's test class extends this and says how to get a database.
 */
public abstract class InTransactionBehaviour extends DatabaseSuite {

  private Boxline boxline() {
    return db.boxline(EventTypes.empty());
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
        .retryPolicy(SuiteSupport.deadLetterAtOnce())
        .handler(
            e -> {
              if (body(e).equals("k-2")) {
                throw new IllegalStateException("k-2 fails");
              }
              handled.record(e);
            })
        .start();
    publish(boxline, t, "k", 5);
    SuiteSupport.awaitK2DeadLetteredAndTheOthersHandled(boxline, handled);
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
}
