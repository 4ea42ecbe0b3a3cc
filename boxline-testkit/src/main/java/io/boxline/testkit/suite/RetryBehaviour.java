package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.BatchFailure;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Retries and per-key parking without head-of-line blocking: a poisoned key, events waiting behind
 * a parked one, handler decisions, batch partial failure, hooks, transactional effects, delayed
 * events and the injected clock. A dialect's test class extends this and says how to get a
 * database.
 */
public abstract class RetryBehaviour extends FailureFixture {

  /**
   * One poisoned key among 1,000: its events are parked (the first failing, the rest waiting behind
   * it) and dead-lettered, while every other key flows at once; after a fix and a redrive by key,
   * the poisoned key's events are handled in their original order.
   */
  @Test
  void aPoisonedKeyNeitherBlocksOtherKeysNorLosesItsOrder() {
    TopicName t = topic(boxline, "acme/poison/events", 4);
    subscribe(boxline, "s", t);
    AtomicBoolean broken = new AtomicBoolean(true);
    Map<String, List<Integer>> handled = new ConcurrentHashMap<>();
    Consumer c =
        boxline
            .consumer("s")
            .retryPolicy(QUICK)
            .batchSize(200)
            .handler(
                e -> {
                  String[] f = body(e).split(":");
                  if (f[0].equals("key-13") && broken.get()) {
                    throw new IllegalStateException("downstream rejects key-13");
                  }
                  handled
                      .computeIfAbsent(f[0], k -> new CopyOnWriteArrayList<>())
                      .add(Integer.parseInt(f[1]));
                })
            .start();
    List<Object> events = new ArrayList<>();
    for (int round = 0; round < 5; round++) {
      for (int k = 0; k < 1000; k++) {
        events.add(raw(t, "key-" + k, "key-" + k + ":" + round));
      }
    }
    for (int i = 0; i < events.size(); i += 1000) {
      List<Object> chunk = events.subList(i, i + 1000);
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, chunk));
    }
    // Every healthy key is fully handled, in order, while key-13 is still failing.
    Await.until(
        WAIT,
        "999 healthy keys handled",
        () -> handled.size() == 999 && handled.values().stream().allMatch(v -> v.size() == 5));
    assertThat(handled).doesNotContainKey("key-13");
    handled.values().forEach(v -> assertThat(v).containsExactly(0, 1, 2, 3, 4));
    // Its first event exhausts the policy and is dead-lettered; the next then gets its turn, and so
    // on.
    Await.until(
        WAIT,
        "all five key-13 events dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s").key("key-13")).size() == 5);
    List<DeadLetter> dead = boxline.deadLetters().list(DeadLetterQuery.of("s").key("key-13"));
    assertThat(dead)
        .extracting(d -> body(d.event()))
        .containsExactly("key-13:0", "key-13:1", "key-13:2", "key-13:3", "key-13:4");
    assertThat(dead)
        .allMatch(d -> d.attempts() == 4 && d.lastError().contains("downstream rejects key-13"));
    broken.set(false);
    assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of("s").key("key-13"))).isEqualTo(5);
    Await.until(
        WAIT,
        "key-13 handled after redrive",
        () -> handled.getOrDefault("key-13", List.of()).size() == 5);
    assertThat(handled.get("key-13")).containsExactly(0, 1, 2, 3, 4);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s"))).isEmpty();
    // The counter moves just after each commit, so wait for it rather than read it once.
    Await.until(WAIT, "5,000 counted as handled", c::handledCount, n -> n == 5000);
  }

  @Test
  void laterEventsOfAParkedKeyWaitAndFollowItWhenItSucceeds() {
    TopicName t = topic(boxline, "acme/wait/events", 1);
    subscribe(boxline, "s", t);
    AtomicInteger failuresLeft = new AtomicInteger(3);
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK.maxAttempts(10))
        .handler(
            e -> {
              if (body(e).equals("a:0") && failuresLeft.getAndDecrement() > 0) {
                throw new IllegalStateException("transient");
              }
              handled.add(body(e));
            })
        .start();
    List<Object> events =
        List.of(
            raw(t, "a", "a:0"),
            raw(t, "a", "a:1"),
            raw(t, "b", "b:0"),
            raw(t, "a", "a:2"),
            raw(t, "b", "b:1"));
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    Await.until(WAIT, "all five handled", () -> handled.size() == 5);
    // b flowed past the parked a:0; a's events kept their order.
    assertThat(handled.indexOf("b:0")).isLessThan(handled.indexOf("a:0"));
    assertThat(handled.stream().filter(x -> x.startsWith("a")).toList())
        .containsExactly("a:0", "a:1", "a:2");
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s"))).isEmpty();
  }

  @Test
  void handlersDecideRetryAtDeadLetterOrIgnore() {
    TopicName t = topic(boxline, "acme/decide/events", 1);
    subscribe(boxline, "s", t);
    Map<String, Integer> calls = new ConcurrentHashMap<>();
    List<Instant> retryTimes = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK)
        .handler(
            e -> {
              int n = calls.merge(body(e), 1, Integer::sum);
              switch (body(e)) {
                case "later":
                  retryTimes.add(Instant.now());
                  if (n == 1) {
                    throw HandlerDecision.retryIn(Duration.ofMillis(700), "not yet");
                  }
                  return;
                case "poison":
                  throw HandlerDecision.deadLetter("malformed");
                case "noise":
                  throw HandlerDecision.ignore("not for us");
                default:
              }
            })
        .start();
    List<Object> events =
        List.of(
            raw(t, "k1", "later"),
            raw(t, "k2", "poison"),
            raw(t, "k3", "noise"),
            raw(t, "k4", "fine"));
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    Await.until(WAIT, "later retried", () -> calls.getOrDefault("later", 0) == 2);
    assertThat(Duration.between(retryTimes.get(0), retryTimes.get(1)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(600));
    assertThat(calls.get("poison")).isEqualTo(1);
    assertThat(calls.get("noise")).isEqualTo(1);
    List<DeadLetter> dead = boxline.deadLetters().list(DeadLetterQuery.of("s"));
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).lastError()).contains("malformed");
    assertThat(dead.get(0).attempts()).isEqualTo(1);
  }

  @Test
  void aBatchHandlerCanFailPartOfABatchAndOnlyThoseAreRetried() {
    TopicName t = topic(boxline, "acme/partial/events", 1);
    subscribe(boxline, "s", t);
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK.maxAttempts(10))
        .batchSize(10)
        .batchHandler(
            batch -> {
              BatchFailure.Builder failure = BatchFailure.builder();
              for (Event e : batch) {
                int n = seen.merge(body(e), 1, Integer::sum);
                if (body(e).equals("e3") && n < 3) {
                  failure.failed(e, new IllegalStateException("e3 not yet"));
                }
              }
              if (!failure.isEmpty()) {
                throw failure.build();
              }
            })
        .start();
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      events.add(raw(t, null, "e" + i));
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    Await.until(WAIT, "e3 handled on its third attempt", () -> seen.getOrDefault("e3", 0) == 3);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    Map<String, Integer> others = new HashMap<>(seen);
    others.remove("e3");
    assertThat(others.values()).containsOnly(1);
    assertThat(others).hasSize(5);
  }

  @Test
  void hooksSeeEveryAttemptErrorAndDeadLetter() {
    TopicName t = topic(boxline, "acme/hooks/events", 1);
    subscribe(boxline, "s", t);
    List<String> log = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK)
        .hooks(
            new ConsumerHooks() {
              @Override
              public void beforeEvent(Event event, int attempt) {
                log.add("before " + body(event) + " #" + attempt);
              }

              @Override
              public void afterEvent(Event event, Duration took) {
                log.add("after " + body(event));
              }

              @Override
              public void onError(Event event, RuntimeException error, int attempt) {
                log.add("error " + body(event) + " #" + attempt);
              }

              @Override
              public void onDeadLetter(Event event, String reason) {
                log.add("dead " + body(event));
              }
            })
        .handler(
            e -> {
              if (body(e).equals("bad")) {
                throw new IllegalStateException("no");
              }
            })
        .start();
    boxline.inTransaction(
        tx -> boxline.publisher().publishAll(tx, List.of(raw(t, "k", "ok"), raw(t, "j", "bad"))));
    Await.until(WAIT, "dead letter hook", () -> log.contains("dead bad"));
    assertThat(log).contains("before ok #1", "after ok");
    assertThat(log)
        .contains("before bad #1", "error bad #1", "error bad #2", "error bad #3", "error bad #4");
    assertThat(log).doesNotContain("after bad");
  }

  @Test
  void transactionalHandlerEffectsCommitOnceWithTheCursorEvenWhenAnEventFails() throws Exception {
    TopicName t = topic(boxline, "acme/tx/events", 2);
    subscribe(boxline, "s", t);
    String effects = db.schema() + ".effects";
    try (java.sql.Connection c = db.dataSource().getConnection();
        java.sql.Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE "
              + effects
              + " (event_id "
              + db.uuidColumnType()
              + " NOT NULL, body text NOT NULL)");
    }
    AtomicInteger failuresLeft = new AtomicInteger(2);
    Consumer c =
        boxline
            .consumer("s")
            .retryPolicy(QUICK.maxAttempts(10))
            .batchSize(50)
            .transactionalHandler(
                (e, tx) -> {
                  try (java.sql.PreparedStatement ps =
                      tx.prepareStatement("INSERT INTO " + effects + " VALUES (?, ?)")) {
                    ps.setObject(1, e.id());
                    ps.setString(2, body(e));
                    ps.executeUpdate();
                  }
                  // Fails after writing: the write must be rolled back with the failed attempt.
                  if (body(e).equals("e7") && failuresLeft.getAndDecrement() > 0) {
                    throw new IllegalStateException("e7 fails after its insert");
                  }
                })
            .start();
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      events.add(raw(t, "k" + (i % 5), "e" + i));
    }
    boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    Await.until(WAIT, "40 effects", () -> count(effects) >= 40);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(count(effects)).isEqualTo(40);
    assertThat(countDistinct(effects)).isEqualTo(40);
    Await.until(WAIT, "40 counted as handled", c::handledCount, n -> n == 40);
    assertThat(failuresLeft.get()).isLessThan(0);
  }

  @Test
  void delayedEventsArriveWhenDueWithoutHoldingUpTheirPartition() {
    TopicName t = topic(boxline, "acme/delay/events", 1);
    subscribe(boxline, "s", t);
    Map<String, Instant> handledAt = new ConcurrentHashMap<>();
    List<String> order = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .handler(
            e -> {
              handledAt.put(body(e), Instant.now());
              order.add(body(e));
            })
        .start();
    Instant due = Instant.now().plusMillis(1500);
    Instant published = Instant.now();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx,
                    List.of(
                        io.boxline.OutgoingEvent.builder(t)
                            .type("t")
                            .key("k")
                            .payload("k:later".getBytes())
                            .deliverAt(due)
                            .build(),
                        raw(t, "k", "k:after"),
                        raw(t, "z", "z:now"))));
    Await.until(WAIT, "all three handled", () -> order.size() == 3);
    // Same partition, other key: not held up by the delayed event.
    assertThat(Duration.between(published, handledAt.get("z:now")))
        .isLessThan(Duration.ofMillis(1200));
    assertThat(handledAt.get("k:later")).isAfterOrEqualTo(due);
    // Per-key order: the later event of the key waited for the delayed one.
    assertThat(order).containsSubsequence("k:later", "k:after");
    assertThat(order.get(0)).isEqualTo("z:now");
  }

  /**
   * The consumer reads the time from the clock given to {@code Boxline.Builder.clock}: with a clock
   * an hour ahead, an event due in half an hour is due now and handled at once, in order with the
   * events after it; with the system clock (the suite's other instance) the same event waits.
   */
  @Test
  void theConsumerUsesTheInjectedClock() {
    TopicName t = topic(boxline, "acme/clock/events", 1);
    boxline.admin().createSubscription(io.boxline.SubscriptionSpec.of("ahead", t));
    boxline.admin().createSubscription(io.boxline.SubscriptionSpec.of("system", t));
    Boxline ahead =
        db.boxline(
            b ->
                b.eventTypes(io.boxline.EventTypes.empty())
                    .clock(
                        java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofHours(1))));
    List<String> seenAhead = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> seenSystem = new java.util.concurrent.CopyOnWriteArrayList<>();
    ahead.consumer("ahead").handler(e -> seenAhead.add(body(e))).start();
    boxline.consumer("system").handler(e -> seenSystem.add(body(e))).start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx,
                    List.of(
                        io.boxline.OutgoingEvent.builder(t)
                            .type("t")
                            .key("k")
                            .payload("k:in-half-an-hour".getBytes())
                            .deliverAt(Instant.now().plus(Duration.ofMinutes(30)))
                            .build(),
                        raw(t, "k", "k:after"))));
    Await.until(WAIT, "the clock-ahead consumer handled both", () -> seenAhead.size() == 2);
    assertThat(seenAhead).containsExactly("k:in-half-an-hour", "k:after");
    Await.until(
        WAIT,
        "the system-clock consumer parked both (the second waits behind the first)",
        () -> boxline.admin().lag("system").get(0).backlog() == 0);
    assertThat(seenSystem).isEmpty();
  }
}
