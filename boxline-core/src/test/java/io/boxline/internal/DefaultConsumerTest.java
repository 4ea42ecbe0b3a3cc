package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.PartitionKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Consumers through the whole engine ({@code Boxline.builder().store(inMemoryStore)}): delivery
 * order, retries on the injected clock, dead letters and redrive, transactional handlers.
 */
class DefaultConsumerTest {
  private static final TopicName ORDERS = TopicName.of("acme/consume", "orders");
  private static final TopicName AUDIT = TopicName.of("acme/consume", "audit");
  private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");

  private final MutableClock clock = new MutableClock(T0);
  private InMemoryStore store;
  private Boxline boxline;
  private TopicInfo orders;
  private long subscriptionId;

  @BeforeEach
  void setUp() {
    store = InMemoryStore.create(clock);
    boxline = Boxline.builder().store(store).clock(clock).instanceId("unit").build().start();
    boxline.admin().createNamespace(NamespacePath.of("acme/consume"));
    orders = boxline.admin().createTopic(ORDERS, 3, io.boxline.Sequencing.SEQUENCER);
    boxline.admin().createTopic(AUDIT, 1, io.boxline.Sequencing.SEQUENCER);
    subscriptionId =
        boxline.admin().createSubscription(SubscriptionSpec.of("billing", ORDERS)).id();
  }

  @AfterEach
  void tearDown() {
    boxline.close();
  }

  private static OutgoingEvent event(TopicName topic, String key, String body) {
    return OutgoingEvent.builder(topic)
        .type("order.placed")
        .key(key)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private void publish(String key, String body) {
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, event(ORDERS, key, body)));
  }

  private static String body(Event e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  private PartitionKey partitionOf(String key) {
    return PartitionKey.of(orders.id(), Partitioner.kafkaCompatible().partition(key, 3));
  }

  /** 2 attempts in place 10 ms apart, then parked 20 ms after the second; dead at the third. */
  private static final RetryPolicy QUICK =
      RetryPolicy.DEFAULT
          .backoff(Duration.ofMillis(10), Duration.ofMinutes(1))
          .multiplier(2)
          .jitter(0)
          .inPlaceAttempts(2)
          .maxAttempts(3);

  @Test
  void theHandlerGetsEveryEventOnceInPublishOrderPerKey() {
    Map<String, List<Integer>> byKey = new ConcurrentHashMap<>();
    List<Event> all = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .handler(
            e -> {
              all.add(e);
              byKey
                  .computeIfAbsent(e.key(), k -> new CopyOnWriteArrayList<>())
                  .add(Integer.parseInt(body(e)));
            })
        .start();
    for (int i = 0; i < 30; i++) {
      publish("key-" + (i % 5), Integer.toString(i));
    }

    Waits.until("30 events handled", all::size, n -> n >= 30);
    assertThat(all).hasSize(30);
    for (int k = 0; k < 5; k++) {
      List<Integer> expected = new ArrayList<>();
      for (int i = k; i < 30; i += 5) {
        expected.add(i);
      }
      assertThat(byKey.get("key-" + k)).as("key-" + k).containsExactlyElementsOf(expected);
    }
    for (Event e : all) {
      assertThat(PartitionKey.of(orders.id(), e.partition())).isEqualTo(partitionOf(e.key()));
    }
    Waits.until(
        "the cursors caught up",
        () -> boxline.admin().lag("billing"),
        lags -> lags.stream().allMatch(l -> l.backlog() == 0));
  }

  @Test
  void aFailingEventIsRetriedOnTheClockThenDeadLetteredAndARedriveDeliversItAgain() {
    AtomicBoolean failing = new AtomicBoolean(true);
    AtomicInteger poisonAttempts = new AtomicInteger();
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .retryPolicy(QUICK)
        .handler(
            e -> {
              if (body(e).equals("poison")) {
                int n = poisonAttempts.incrementAndGet();
                if (failing.get()) {
                  throw new IllegalStateException("boom " + n);
                }
              }
              handled.add(body(e));
            })
        .start();
    publish("k", "poison");
    publish("k", "after"); // same key: waits behind the poison
    publish("j", "other");

    // Two attempts in place, then parked; the due time is the injected clock's, exactly.
    PartitionKey pk = partitionOf("k");
    Waits.until(
        "the poison is parked", () -> store.parked(subscriptionId, pk, false).nextDue() != null);
    assertThat(store.parked(subscriptionId, pk, false).nextDue())
        .isEqualTo(T0.plus(Duration.ofMillis(20)));
    assertThat(store.parked(subscriptionId, pk, false).blockedKeys()).containsExactly("k");
    Waits.until("the other key flows", () -> handled.contains("other"));
    assertThat(poisonAttempts.get()).isEqualTo(2);
    assertThat(handled).doesNotContain("after");

    clock.advance(Duration.ofSeconds(1)); // the retry is due: the third attempt fails for good
    List<DeadLetter> dead =
        Waits.until(
            "the poison is dead-lettered",
            () -> boxline.deadLetters().list(DeadLetterQuery.of("billing")),
            l -> !l.isEmpty());
    DeadLetter d = dead.get(0);
    assertThat(body(d.event())).isEqualTo("poison");
    assertThat(d.attempts()).isEqualTo(3);
    assertThat(d.lastError()).contains("boom 3");
    assertThat(d.firstFailedAt()).isEqualTo(T0);
    assertThat(d.deadAt()).isEqualTo(T0.plus(Duration.ofSeconds(1)));
    Waits.until("the next event of the key goes on", () -> handled.contains("after"));
    assertThat(handled).containsExactly("other", "after");

    failing.set(false);
    assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of("billing"))).isEqualTo(1);
    Waits.until("the redriven event is handled", () -> handled.contains("poison"));
    assertThat(poisonAttempts.get()).isEqualTo(4);
    Waits.until(
        "nothing is parked any more",
        () -> store.parked(subscriptionId, pk, true),
        s -> s.blockedKeys().isEmpty() && s.nextDue() == null);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("billing"))).isEmpty();
  }

  @Test
  void aRetryInDecisionIsDueThatLongAfterTheInjectedClocksNow() {
    AtomicInteger attempts = new AtomicInteger();
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .handler(
            e -> {
              if (attempts.incrementAndGet() == 1) {
                throw HandlerDecision.retryIn(Duration.ofMinutes(5), "not yet");
              }
              handled.add(body(e));
            })
        .start();
    publish("k", "later");

    // T0 is far from the system clock: a delay counted from the system clock would show here.
    PartitionKey pk = partitionOf("k");
    Waits.until(
        "the event is parked", () -> store.parked(subscriptionId, pk, false).nextDue() != null);
    assertThat(store.parked(subscriptionId, pk, false).nextDue())
        .isEqualTo(T0.plus(Duration.ofMinutes(5)));
    assertThat(handled).isEmpty();

    clock.advance(Duration.ofMinutes(5)); // due on the injected clock, whatever the system time
    Waits.until("the retry is handled", () -> handled.contains("later"));
    assertThat(attempts.get()).isEqualTo(2);
  }

  @Test
  void aTransactionalHandlersWritesCommitWithTheCursorAndRollBackWithAFailure() {
    AtomicInteger attempts = new AtomicInteger();
    boxline
        .consumer("billing")
        .retryPolicy(QUICK)
        .transactionalHandler(
            (e, tx) -> {
              boxline.publisher().publish(tx, event(AUDIT, e.key(), "audit of " + body(e)));
              if (body(e).equals("flaky") && attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("first attempt fails after writing");
              }
            })
        .start();
    publish("a", "fine");
    publish("b", "flaky");

    TopicInfo audit = store.findTopic(AUDIT).orElseThrow();
    List<String> audited =
        Waits.until(
            "both events audited",
            () ->
                store.read(audit.id(), 0, 0, 100).stream()
                    .map(s -> new String(s.payload(), StandardCharsets.UTF_8))
                    .toList(),
            l -> l.size() >= 2);
    assertThat(attempts.get()).isEqualTo(2);
    assertThat(audited).containsExactlyInAnyOrder("audit of fine", "audit of flaky");
    Waits.until(
        "the cursors caught up",
        () -> boxline.admin().lag("billing"),
        lags -> lags.stream().allMatch(l -> l.backlog() == 0));
    assertThat(store.outboxBacklog().events()).isZero();
    assertThat(store.read(audit.id(), 0, 0, 100)).hasSize(2);
  }
}
