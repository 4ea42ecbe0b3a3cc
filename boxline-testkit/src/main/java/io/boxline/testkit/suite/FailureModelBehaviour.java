package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Failure handling against a model (contract point 4): events of random keys on an in-transaction
 * topic and a sequencer topic, each failing a random number of times — never, once (retried in
 * place), three times (parked and retried later) or always (dead-lettered after the last attempt).
 * Each subscription must handle every event that can succeed exactly once, at the attempt the model
 * says, dead-letter exactly the others after their last attempt, and handle each key's events in
 * sequence order, a retried event holding back the later events of its key; with blocking dead
 * letters, a dead-lettered event holds its key until redriven. One subscription's handlers run on
 * the committing threads where they can, the other's on workers.
 */
public abstract class FailureModelBehaviour extends DatabaseSuite {
  private static final int EVENTS = 300;
  private static final int ALWAYS = Integer.MAX_VALUE;
  private static final RetryPolicy POLICY =
      RetryPolicy.exponential(Duration.ofMillis(5), Duration.ofMillis(20))
          .inPlaceAttempts(2)
          .maxAttempts(4);

  /** One subscription's view: attempts per event, successes in the order they happened. */
  private static final class Handling implements EventHandler {
    final Map<String, Integer> failures;
    final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    final List<Event> succeeded = new CopyOnWriteArrayList<>();
    final Map<String, Integer> succeededAt = new ConcurrentHashMap<>();

    /** Once set, events planned to fail always succeed (their cause was fixed). */
    final java.util.concurrent.atomic.AtomicBoolean healed =
        new java.util.concurrent.atomic.AtomicBoolean();

    Handling(Map<String, Integer> failures) {
      this.failures = failures;
    }

    @Override
    public void handle(Event e) {
      String body = SuiteSupport.body(e);
      int attempt = attempts.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
      int planned = failures.get(body);
      if (attempt <= planned && !(planned == ALWAYS && healed.get())) {
        throw new IllegalStateException("planned failure " + attempt + " of " + body);
      }
      succeededAt.put(body, attempt);
      succeeded.add(e);
    }
  }

  private long seed;
  private Random random;
  private Boxline boxline;
  private TopicName direct;
  private TopicName queued;

  /** A Boxline, an in-transaction and a sequencer topic, subscriptions "inline" and "workers". */
  private void open(String namespace) {
    seed = System.nanoTime();
    random = new Random(seed);
    boxline = db.boxline(EventTypes.empty());
    direct = topic(boxline, namespace + "/direct", 2, Sequencing.IN_TRANSACTION);
    queued = topic(boxline, namespace + "/queued", 2);
    subscribe(boxline, "inline", direct, queued);
    subscribe(boxline, "workers", direct, queued);
  }

  /** Starts both subscriptions' consumers ("inline" on committing threads where it can). */
  private Map<String, Handling> consume(Map<String, Integer> failures, boolean blocking) {
    Map<String, Handling> handlings =
        Map.of("inline", new Handling(failures), "workers", new Handling(failures));
    handlings.forEach(
        (name, handling) ->
            boxline
                .consumer(name)
                .handleOnCommittingThread(name.equals("inline"))
                .retryPolicy(POLICY)
                .deadLetterBlocksKey(blocking)
                .handler(handling)
                .start());
    return handlings;
  }

  /** Publishes {@code events} in order, 1–3 per transaction. */
  private void publish(List<OutgoingEvent> events) {
    for (int i = 0; i < events.size(); ) {
      int n = Math.min(events.size() - i, 1 + random.nextInt(3));
      List<OutgoingEvent> batch = events.subList(i, i + n);
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
      i += n;
    }
  }

  @Test
  void everyEventIsHandledOnceOrDeadLetteredAndEachKeyKeepsItsOrder() {
    open("acme/failures");
    // Planned before publishing, so the handlers know each event's fate from its body.
    List<OutgoingEvent> events = new ArrayList<>();
    Map<String, Integer> failures = new HashMap<>();
    for (int i = 0; i < EVENTS; i++) {
      TopicName t = random.nextBoolean() ? direct : queued;
      String body = "e" + i;
      int roll = random.nextInt(100);
      failures.put(body, roll < 70 ? 0 : roll < 85 ? 1 : roll < 93 ? 3 : ALWAYS);
      events.add(raw(t, "k" + random.nextInt(5), body));
    }
    Map<String, Handling> handlings = consume(failures, false);
    publish(events);

    long doomed = failures.values().stream().filter(f -> f == ALWAYS).count();
    for (var entry : handlings.entrySet()) {
      String s = entry.getKey();
      Handling h = entry.getValue();
      Await.until(
          WAIT,
          s + ": every event handled or dead-lettered",
          () ->
              h.succeeded.size() + boxline.deadLetters().list(DeadLetterQuery.of(s)).size()
                  >= EVENTS);
      SuiteSupport.awaitCaughtUp(boxline, s);
      List<DeadLetter> dead = boxline.deadLetters().list(DeadLetterQuery.of(s));
      assertThat(dead.stream().map(d -> SuiteSupport.body(d.event())).toList())
          .as("seed %d, %s: dead letters", seed, s)
          .containsExactlyInAnyOrderElementsOf(
              failures.entrySet().stream()
                  .filter(f -> f.getValue() == ALWAYS)
                  .map(Map.Entry::getKey)
                  .toList());
      assertThat(dead).hasSize((int) doomed);
      for (DeadLetter d : dead) {
        assertThat(d.attempts()).as("seed %d, %s: attempts of %s", seed, s, d.event()).isEqualTo(4);
      }
      for (var f : failures.entrySet()) {
        if (f.getValue() != ALWAYS) {
          assertThat(h.succeededAt.get(f.getKey()))
              .as("seed %d, %s: the attempt that handled %s", seed, s, f.getKey())
              .isEqualTo(f.getValue() + 1);
        }
      }
      assertThat(h.succeeded)
          .as("seed %d, %s: each handled once", seed, s)
          .hasSize(EVENTS - (int) doomed);
      // Per key, successes in sequence order: a failing event held back its key's later events.
      Map<String, List<Long>> byKey = new HashMap<>();
      for (Event e : h.succeeded) {
        byKey.computeIfAbsent(e.topic() + "/" + e.key(), k -> new ArrayList<>()).add(e.sequence());
      }
      byKey.forEach(
          (key, sequences) ->
              assertThat(sequences).as("seed %d, %s: order of key %s", seed, s, key).isSorted());
    }
  }

  /**
   * With {@code deadLetterBlocksKey}, a dead letter holds back every later event of its key (none
   * of them is even attempted) while the other keys go on; once the cause is fixed and the dead
   * letters are redriven, each blocked key's events all arrive, once each, in publish order.
   */
  @Test
  void blockingDeadLettersHoldTheirKeysUntilRedrivenThenAllArriveInOrder() {
    open("acme/blocking");
    List<OutgoingEvent> events = new ArrayList<>();
    Map<String, Integer> failures = new HashMap<>();
    // Per key, in publish order; the events after a key's first doomed one stay blocked.
    Map<String, List<String>> byKey = new java.util.LinkedHashMap<>();
    java.util.Set<String> blocked = new java.util.HashSet<>();
    java.util.Set<String> firstDoomed = new java.util.HashSet<>();
    for (int i = 0; i < EVENTS; i++) {
      TopicName t = random.nextBoolean() ? direct : queued;
      String key = "k" + random.nextInt(8);
      String body = "e" + i;
      int roll = random.nextInt(100);
      int planned = roll < 75 ? 0 : roll < 88 ? 1 : roll < 96 ? 3 : ALWAYS;
      failures.put(body, planned);
      events.add(raw(t, key, body));
      List<String> earlier = byKey.computeIfAbsent(t + "/" + key, k -> new ArrayList<>());
      boolean behindDoomed = earlier.stream().anyMatch(b -> firstDoomed.contains(b));
      if (behindDoomed) {
        blocked.add(body);
      } else if (planned == ALWAYS) {
        firstDoomed.add(body);
      }
      earlier.add(body);
    }
    Map<String, Handling> handlings = consume(failures, true);
    publish(events);

    int free = EVENTS - blocked.size() - firstDoomed.size();
    for (var entry : handlings.entrySet()) {
      String s = entry.getKey();
      Handling h = entry.getValue();
      Await.until(
          WAIT,
          s + ": the free events handled and the first doomed event of each key dead",
          () ->
              h.succeeded.size() >= free
                  && boxline.deadLetters().list(DeadLetterQuery.of(s)).size()
                      >= firstDoomed.size());
      assertThat(
              boxline.deadLetters().list(DeadLetterQuery.of(s)).stream()
                  .map(d -> SuiteSupport.body(d.event()))
                  .toList())
          .as("seed %d, %s: dead letters", seed, s)
          .containsExactlyInAnyOrderElementsOf(firstDoomed);
      assertThat(h.succeeded.stream().map(SuiteSupport::body).toList())
          .as("seed %d, %s: handled while keys are blocked", seed, s)
          .hasSize(free)
          .doesNotContainAnyElementsOf(blocked);
      assertThat(blocked)
          .as("seed %d, %s: blocked events never attempted", seed, s)
          .allMatch(b -> !h.attempts.containsKey(b));
    }

    for (var entry : handlings.entrySet()) {
      String s = entry.getKey();
      Handling h = entry.getValue();
      h.healed.set(true);
      assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of(s)))
          .isEqualTo(firstDoomed.size());
      Await.until(WAIT, s + ": every event handled", () -> h.succeeded.size() >= EVENTS);
      SuiteSupport.awaitCaughtUp(boxline, s);
      assertThat(h.succeeded).as("seed %d, %s: each handled once", seed, s).hasSize(EVENTS);
      assertThat(boxline.deadLetters().list(DeadLetterQuery.of(s))).isEmpty();
      Map<String, List<String>> handledByKey = new HashMap<>();
      for (Event e : h.succeeded) {
        handledByKey
            .computeIfAbsent(e.topic() + "/" + e.key(), k -> new ArrayList<>())
            .add(SuiteSupport.body(e));
      }
      assertThat(handledByKey)
          .as("seed %d, %s: each key in publish order", seed, s)
          .isEqualTo(byKey);
    }
  }
}
