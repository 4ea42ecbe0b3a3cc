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
