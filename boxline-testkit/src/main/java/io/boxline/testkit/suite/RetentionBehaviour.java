package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetterQuery;
import io.boxline.HandlerDecision;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.RetentionPolicy;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Inbox de-duplication and retention of events, inbox entries, dead letters and idempotency keys.
 */
public abstract class RetentionBehaviour {
  protected TestDatabase db;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("r"));
    boxline =
        db.boxline(
            b ->
                b.retentionInterval(Duration.ofMillis(200))
                    .inboxRetention(Duration.ofSeconds(1))
                    .deadLetterRetention(Duration.ofSeconds(1))
                    .idempotencyRetention(Duration.ofSeconds(1)));
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long count(String sql) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private String table(String name) {
    return db.schema() + "." + name;
  }

  @Test
  void inboxSkipsADuplicateUnderTheSameKey() {
    TopicName t = topic(boxline, "acme/inbox/events", 1);
    subscribe(boxline, "plain", t);
    subscribe(boxline, "tx", t);
    List<String> plain = new CopyOnWriteArrayList<>();
    List<String> tx = new CopyOnWriteArrayList<>();
    boxline
        .consumer("plain")
        .inbox(e -> e.headers().get("message-id"))
        .handler(e -> plain.add(body(e)))
        .start();
    boxline
        .consumer("tx")
        .inbox(e -> e.headers().get("message-id"))
        .transactionalHandler((e, c) -> tx.add(body(e)))
        .start();
    // The same upstream message relayed twice (different event ids, same message id), then another.
    boxline.inTransaction(
        c ->
            boxline
                .publisher()
                .publishAll(
                    c,
                    List.of(
                        OutgoingEvent.builder(t)
                            .type("m")
                            .header("message-id", "m-1")
                            .payload("first".getBytes())
                            .build(),
                        OutgoingEvent.builder(t)
                            .type("m")
                            .header("message-id", "m-1")
                            .payload("again".getBytes())
                            .build(),
                        OutgoingEvent.builder(t)
                            .type("m")
                            .header("message-id", "m-2")
                            .payload("other".getBytes())
                            .build())));
    Await.until(WAIT, "both consumers handled two", () -> plain.size() >= 2 && tx.size() >= 2);
    SuiteSupport.awaitCaughtUp(boxline, "plain");
    SuiteSupport.awaitCaughtUp(boxline, "tx");
    assertThat(plain).containsExactly("first", "other");
    assertThat(tx).containsExactly("first", "other");
    // Inbox entries are forgotten after inboxRetention.
    Await.until(WAIT, "inbox purged", () -> count("SELECT count(*) FROM " + table("inbox")) == 0);
  }

  @Test
  void eventsPastRetentionGoOnceEveryCursorHasPassedThem() {
    TopicName t = topic(boxline, "acme/ret/events", 2);
    subscribe(boxline, "fast", t);
    subscribe(boxline, "slow", t);
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofMillis(300)));
    List<String> fast = new CopyOnWriteArrayList<>();
    boxline.consumer("fast").handler(e -> fast.add(body(e))).start();
    SuiteSupport.publish(boxline, t, "k", 20);
    Await.until(WAIT, "fast read all", () -> fast.size() == 20);
    // The slow subscription has not read them, so they stay although they are old.
    Await.until(
        WAIT,
        "a retention run after the events aged",
        () ->
            boxline.stats().retentionRuns() >= 3
                && count(
                        "SELECT count(*) FROM "
                            + table("log")
                            + " WHERE "
                            + db.olderThanSeconds("created_at", 1))
                    == 20);
    assertThat(count("SELECT count(*) FROM " + table("log"))).isEqualTo(20);
    List<String> slow = new CopyOnWriteArrayList<>();
    Consumer s = boxline.consumer("slow").handler(e -> slow.add(body(e))).start();
    Await.until(WAIT, "slow read all", () -> slow.size() == 20);
    Await.until(WAIT, "log purged", () -> count("SELECT count(*) FROM " + table("log")) == 0);
    // New events after the purge keep counting from where the partition was.
    SuiteSupport.publish(boxline, t, "k", 2);
    Await.until(WAIT, "slow read the new ones", () -> slow.size() == 22);
    Await.until(WAIT, "22 committed", () -> s.handledCount() == 22);
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("slow"))).isEqualTo(22);
  }

  @Test
  void deleteUnconsumedDropsOldEventsEvenBeforeSlowSubscriptions() {
    TopicName t = topic(boxline, "acme/ret2/events", 1);
    subscribe(boxline, "never", t);
    boxline
        .admin()
        .setRetention(t, RetentionPolicy.byAge(Duration.ofMillis(300)).deleteUnconsumed());
    SuiteSupport.publish(boxline, t, "k", 5);
    Await.until(
        WAIT, "all sequenced", () -> boxline.admin().lag("never").get(0).lastSequence() == 5);
    Await.until(WAIT, "log purged", () -> count("SELECT count(*) FROM " + table("log")) == 0);
    assertThat(boxline.admin().lag("never").get(0).lastSequence()).isEqualTo(5);
  }

  private io.boxline.SubscriptionInfo subscription(String name) {
    return boxline.admin().subscriptions().stream()
        .filter(s -> s.name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void anAbandonedSubscriptionStopsHoldingBackRetention() {
    TopicName t = topic(boxline, "acme/ret4/events", 1);
    subscribe(boxline, "live", t);
    subscribe(boxline, "gone", t);
    boxline
        .admin()
        .setRetention(
            t, RetentionPolicy.byAge(Duration.ofMillis(300)).abandonAfter(Duration.ofSeconds(2)));
    assertThat(boxline.admin().topicState(t).retention().abandonAfter())
        .isEqualTo(Duration.ofSeconds(2));
    List<String> live = new CopyOnWriteArrayList<>();
    boxline.consumer("live").handler(e -> live.add(body(e))).start();
    SuiteSupport.publish(boxline, t, "k", 10);
    Await.until(WAIT, "live read all", () -> live.size() == 10);
    // Nobody ever consumed "gone": once it has been without a consumer for 2 s it no longer holds
    // the events its cursor has not passed.
    Await.until(WAIT, "log purged", () -> count("SELECT count(*) FROM " + table("log")) == 0);
    io.boxline.SubscriptionInfo gone = subscription("gone");
    io.boxline.SubscriptionInfo stamped = subscription("live");
    assertThat(gone.lastActive()).isEqualTo(gone.createdAt());
    assertThat(stamped.lastActive()).isAfter(stamped.createdAt());
    assertThat(boxline.admin().lag("gone").get(0).position()).isZero();
    // A consumer that comes back later (once the run that purged has finished) gets what is still
    // in the log: the new events, not the purged ones this process still had in its hand-over.
    long runs = boxline.stats().retentionRuns();
    Await.until(WAIT, "the purging run finished", () -> boxline.stats().retentionRuns() > runs);
    List<String> back = new CopyOnWriteArrayList<>();
    boxline.consumer("gone").handler(e -> back.add(body(e))).start();
    SuiteSupport.publish(boxline, t, "n", 2);
    Await.until(WAIT, "the returning consumer read the new events", () -> back.size() >= 2);
    SuiteSupport.awaitCaughtUp(boxline, "gone");
    assertThat(back).containsExactly("n-0", "n-1");
  }

  @Test
  void aLiveConsumerHowSlowSoeverKeepsItsSubscriptionFromBeingAbandoned() {
    TopicName t = topic(boxline, "acme/ret5/events", 1);
    subscribe(boxline, "stuck", t);
    boxline
        .admin()
        .setRetention(
            t, RetentionPolicy.byAge(Duration.ofMillis(300)).abandonAfter(Duration.ofSeconds(1)));
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("stuck")
        .handler(
            e -> {
              try {
                if (!release.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                  throw new IllegalStateException("never released");
                }
              } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
              }
              handled.add(body(e));
            })
        .start();
    SuiteSupport.publish(boxline, t, "k", 5);
    io.boxline.SubscriptionInfo created = subscription("stuck");
    // Live (checking in) but not moving for more than twice abandonAfter, with retention runs
    // since.
    Await.until(
        WAIT,
        "the stuck subscription stamped live more than 2 s after its creation",
        () ->
            subscription("stuck")
                .lastActive()
                .isAfter(created.createdAt().plus(Duration.ofSeconds(2))));
    long runs = boxline.stats().retentionRuns();
    Await.until(WAIT, "two more retention runs", () -> boxline.stats().retentionRuns() >= runs + 2);
    assertThat(count("SELECT count(*) FROM " + table("log")))
        .as("events the live but slow subscription has not passed")
        .isEqualTo(5);
    release.countDown();
    Await.until(WAIT, "all handled", () -> handled.size() == 5);
    Await.until(WAIT, "log purged", () -> count("SELECT count(*) FROM " + table("log")) == 0);
  }

  @Test
  void parkedEventsOutliveTheirRetentionUntilResolvedAndOldDeadLettersAndKeysGo() {
    TopicName t = topic(boxline, "acme/ret3/events", 1);
    subscribe(boxline, "s", t);
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofMillis(300)));
    boxline
        .consumer("s")
        .handler(
            e -> {
              if (body(e).equals("bad")) {
                throw HandlerDecision.deadLetter("bad");
              }
            })
        .start();
    PublishResult keyed =
        boxline.inTransaction(
            c ->
                boxline
                    .publisher()
                    .publish(
                        c,
                        OutgoingEvent.builder(t)
                            .type("x")
                            .idempotencyKey("once")
                            .payload("ok".getBytes())
                            .build()));
    boxline.inTransaction(c -> boxline.publisher().publish(c, raw(t, "k", "bad")));
    Await.until(
        WAIT, "dead letter", () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).size() == 1);
    // The handled event goes; the dead-lettered one stays while it is a dead letter, then both go.
    Await.until(
        WAIT,
        "dead letter purged after deadLetterRetention",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).isEmpty());
    Await.until(WAIT, "log purged", () -> count("SELECT count(*) FROM " + table("log")) == 0);
    Await.until(
        WAIT,
        "idempotency key forgotten",
        () -> count("SELECT count(*) FROM " + table("idempotency")) == 0);
    PublishResult again =
        boxline.inTransaction(
            c ->
                boxline
                    .publisher()
                    .publish(
                        c,
                        OutgoingEvent.builder(t)
                            .type("x")
                            .idempotencyKey("once")
                            .payload("ok".getBytes())
                            .build()));
    assertThat(again.duplicate()).isFalse();
    assertThat(again.eventId()).isNotEqualTo(keyed.eventId());
  }
}
