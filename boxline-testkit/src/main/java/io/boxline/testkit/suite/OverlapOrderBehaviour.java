package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The order of one key's events when two transactions that publish it overlap, exactly as README's
 * guarantees state it: on a sequencer topic, the order in which the sequencer finds them committed
 * (publish order among rows it finds together); on an in-transaction topic, the order in which the
 * transactions take the partition's lock (with inTransaction: their commits; with a plain publish:
 * their first publishes, the second waiting for the first to commit).
 */
public abstract class OverlapOrderBehaviour extends DatabaseSuite {

  private static List<String> bodies(SuiteSupport.Recorder seen) {
    return seen.all.stream().map(SuiteSupport::body).collect(Collectors.toList());
  }

  private static void await(SuiteSupport.Recorder seen, int n) {
    Await.until(WAIT, n + " events", () -> seen.size() >= n);
  }

  /** Sequencer topic: a transaction that publishes first but commits last comes last. */
  @Test
  void sequencerTopicOrdersByWhenTheSequencerFindsTheCommit() throws Exception {
    Boxline boxline = db.boxline(EventTypes.empty());
    TopicName t = topic(boxline, "acme/overlap/queued", 1);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "s", t);
    try (Connection first = db.dataSource().getConnection()) {
      first.setAutoCommit(false);
      boxline.publisher().publish(first, raw(t, "k", "published-first"));
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "committed-first")));
      await(seen, 1); // sequenced while the other transaction is still open
      first.commit();
    }
    await(seen, 2);
    assertThat(bodies(seen)).containsExactly("committed-first", "published-first");
  }

  /**
   * Sequencer topic: when both have committed before the sequencer looks, publish order wins (the
   * producing instance runs no sequencer; a second one starts after both commits).
   */
  @Test
  void sequencerTopicOrdersRowsFoundTogetherByPublishOrder() throws Exception {
    Boxline producer = db.boxline(b -> b.eventTypes(EventTypes.empty()).sequencer(false));
    TopicName t = topic(producer, "acme/overlap/together", 1);
    SuiteSupport.subscribe(producer, "s", t);
    try (Connection first = db.dataSource().getConnection()) {
      first.setAutoCommit(false);
      producer.publisher().publish(first, raw(t, "k", "published-first"));
      producer.inTransaction(
          tx -> producer.publisher().publish(tx, raw(t, "k", "committed-first")));
      first.commit();
    }
    Boxline sequencing = db.boxline(EventTypes.empty());
    SuiteSupport.Recorder seen = new SuiteSupport.Recorder();
    sequencing.consumer("s").handler(seen::record).start();
    await(seen, 2);
    assertThat(bodies(seen)).containsExactly("published-first", "committed-first");
  }

  /**
   * In-transaction topic through inTransaction: events are written at the commit, so commit order.
   */
  @Test
  void inTransactionTopicThroughInTransactionOrdersByCommit() throws Exception {
    Boxline boxline = db.boxline(EventTypes.empty());
    TopicName t = topic(boxline, "acme/overlap/direct", 1, Sequencing.IN_TRANSACTION);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "s", t);
    CountDownLatch published = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Object> first =
        CompletableFuture.supplyAsync(
            () ->
                boxline.inTransaction(
                    tx -> {
                      boxline.publisher().publish(tx, raw(t, "k", "published-first"));
                      published.countDown();
                      SuiteSupport.awaitRelease(release);
                      return null;
                    }));
    assertThat(published.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "committed-first")));
    release.countDown();
    first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    await(seen, 2);
    assertThat(bodies(seen)).containsExactly("committed-first", "published-first");
  }

  /**
   * In-transaction topic with a plain publish: the first publish locks the partition, so a second
   * transaction's publish waits until the first commits, and comes after all of it.
   */
  @Test
  void inTransactionTopicWithPlainPublishOrdersByFirstPublish() throws Exception {
    Boxline boxline = db.boxline(EventTypes.empty());
    TopicName t = topic(boxline, "acme/overlap/locked", 1, Sequencing.IN_TRANSACTION);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "s", t);
    CountDownLatch secondStarted = new CountDownLatch(1);
    CompletableFuture<Void> second;
    try (Connection first = db.dataSource().getConnection()) {
      first.setAutoCommit(false);
      boxline.publisher().publish(first, raw(t, "k", "first-a"));
      second =
          CompletableFuture.runAsync(
              () -> {
                secondStarted.countDown();
                try (Connection c = db.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  boxline.publisher().publish(c, raw(t, "k", "second")); // waits for the lock
                  c.commit();
                } catch (java.sql.SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      assertThat(secondStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
      boxline.publisher().publish(first, raw(t, "k", "first-b"));
      assertThat(second).as("the second transaction waits for the first").isNotDone();
      first.commit();
    }
    second.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    await(seen, 3);
    assertThat(bodies(seen)).containsExactly("first-a", "first-b", "second");
    assertThat(seen.all).extracting(Event::sequence).containsExactly(1L, 2L, 3L);
  }
}
