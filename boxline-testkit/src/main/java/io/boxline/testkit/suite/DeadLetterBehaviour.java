package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.TopicName;
import io.boxline.TypedHandlers;
import io.boxline.testkit.Await;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Dead letters: filtered, inspected, redriven and discarded, grouped by their error, unknown event
 * types dead-lettered rather than dropped, and a blocking dead letter holding its key until
 * redriven. A dialect's test class extends this and says how to get a database.
 */
public abstract class DeadLetterBehaviour extends FailureFixture {

  @Test
  void deadLettersCanBeFilteredInspectedRedrivenAndDiscarded() {
    TopicName orders = topic(boxline, "acme/dlq/orders", 2);
    TopicName audit = topic(boxline, "acme/dlq/audit", 1);
    subscribe(boxline, "s", orders, audit);
    Set<String> fixed = ConcurrentHashMap.newKeySet();
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK)
        .handler(
            e -> {
              if (!fixed.contains(e.type())) {
                throw new IllegalArgumentException("bad " + e.type());
              }
              handled.add(body(e));
            })
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx,
                    List.of(
                        io.boxline.OutgoingEvent.builder(orders)
                            .type("order.a")
                            .key("o1")
                            .payload("a1".getBytes())
                            .build(),
                        io.boxline.OutgoingEvent.builder(orders)
                            .type("order.b")
                            .key("o2")
                            .payload("b1".getBytes())
                            .build(),
                        io.boxline.OutgoingEvent.builder(audit)
                            .type("audit.c")
                            .key("x")
                            .payload("c1".getBytes())
                            .build())));
    Await.until(
        WAIT,
        "three dead letters",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).size() == 3);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s").topic(audit))).hasSize(1);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s").type("order.b")))
        .extracting(d -> body(d.event()))
        .containsExactly("b1");
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s").errorContains("bad order.a")))
        .hasSize(1);
    assertThat(
            boxline
                .deadLetters()
                .list(DeadLetterQuery.of("s").deadBefore(Instant.now().minusSeconds(3600))))
        .isEmpty();
    DeadLetter one = boxline.deadLetters().list(DeadLetterQuery.of("s").type("order.a")).get(0);
    assertThat(one.event().payload()).isEqualTo("a1".getBytes());
    assertThat(one.event().topic()).isEqualTo(orders);
    assertThat(one.firstFailedAt()).isBeforeOrEqualTo(one.deadAt());
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s").eventId(one.event().id())))
        .hasSize(1);
    // Redrive one by id after fixing its type; discard another; the third stays.
    fixed.add("order.a");
    assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of("s").eventId(one.event().id())))
        .isEqualTo(1);
    Await.until(WAIT, "a1 handled", () -> handled.contains("a1"));
    assertThat(boxline.deadLetters().discard(DeadLetterQuery.of("s").type("order.b"))).isEqualTo(1);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s")))
        .extracting(d -> body(d.event()))
        .containsExactly("c1");
    fixed.add("audit.c");
    assertThat(boxline.deadLetters().redrive(DeadLetterQuery.of("s"))).isEqualTo(1);
    Await.until(WAIT, "c1 handled", () -> handled.contains("c1"));
    assertThat(handled).containsExactlyInAnyOrder("a1", "c1");
  }

  @Test
  void deadLettersAreGroupedByTheStartOfTheirError() {
    TopicName orders = topic(boxline, "acme/reasons/orders", 2);
    subscribe(boxline, "s", orders);
    String longTail = "x".repeat(300);
    boxline
        .consumer("s")
        .retryPolicy(QUICK)
        .handler(
            e -> {
              throw new IllegalStateException(
                  e.type().equals("order.long") ? "too long " + body(e) + longTail : "bad type");
            })
        .start();
    boxline.inTransaction(
        tx -> {
          for (int i = 0; i < 3; i++) {
            boxline
                .publisher()
                .publish(
                    tx,
                    io.boxline.OutgoingEvent.builder(orders)
                        .type("order.bad")
                        .key("k" + i)
                        .payload(("b" + i).getBytes())
                        .build());
          }
          for (int i = 0; i < 2; i++) {
            boxline
                .publisher()
                .publish(
                    tx,
                    io.boxline.OutgoingEvent.builder(orders)
                        .type("order.long")
                        .key("l" + i)
                        .payload(("same").getBytes())
                        .build());
          }
          return null;
        });
    Await.until(
        WAIT,
        "five dead letters",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).size() == 5);
    List<io.boxline.DeadLetterReason> reasons = boxline.deadLetters().reasons("s", 10);
    assertThat(reasons).extracting(io.boxline.DeadLetterReason::count).containsExactly(3L, 2L);
    assertThat(reasons.get(0).reason()).contains("bad type");
    assertThat(reasons.get(1).reason())
        .hasSize(io.boxline.DeadLetterReason.MAX_LENGTH)
        .contains("too long same");
    for (io.boxline.DeadLetterReason r : reasons) {
      assertThat(r.firstDeadAt()).isNotNull().isBeforeOrEqualTo(r.lastDeadAt());
      // The reason selects its group back.
      assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s").errorContains(r.reason())))
          .hasSize((int) r.count());
    }
    assertThat(boxline.deadLetters().reasons("s", 1)).hasSize(1);
    assertThatThrownBy(() -> boxline.deadLetters().reasons("s", 0))
        .hasMessageContaining("limit must be between 1 and 1000");
  }

  @Test
  void unknownEventTypesAreDeadLetteredNotDropped() {
    TopicName t = topic(boxline, "acme/unknown/events", 1);
    subscribe(boxline, "s", t);
    record Known(String v) {}
    EventTypes types = EventTypes.builder().register(EventType.of(Known.class, "known", t)).build();
    List<Known> seen = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .handler(TypedHandlers.builder(types).on(Known.class, seen::add).build())
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx,
                    List.of(
                        io.boxline.OutgoingEvent.builder(t)
                            .type("mystery")
                            .payload("{}".getBytes())
                            .build(),
                        io.boxline.OutgoingEvent.builder(t)
                            .type("known")
                            .payload("{\"v\":\"x\"}".getBytes())
                            .build())));
    Await.until(WAIT, "known handled", () -> seen.size() == 1);
    Await.until(
        WAIT,
        "mystery dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s").type("mystery")).size() == 1);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s")).get(0).lastError())
        .contains("no handler for event type 'mystery'");
  }

  @Test
  void aBlockingDeadLetterHoldsItsKeyUntilRedriven() {
    TopicName t = topic(boxline, "acme/block/events", 1);
    subscribe(boxline, "s", t);
    AtomicBoolean broken = new AtomicBoolean(true);
    List<String> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(QUICK)
        .deadLetterBlocksKey(true)
        .handler(
            e -> {
              if (body(e).equals("k:0") && broken.get()) {
                throw new IllegalStateException("blocked");
              }
              handled.add(body(e));
            })
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx, List.of(raw(t, "k", "k:0"), raw(t, "k", "k:1"), raw(t, "z", "z:0"))));
    Await.until(
        WAIT, "k:0 dead", () -> boxline.deadLetters().list(DeadLetterQuery.of("s")).size() == 1);
    Await.until(WAIT, "z:0 handled", () -> handled.contains("z:0"));
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "k:2")));
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "z", "z:1")));
    Await.until(WAIT, "z:1 handled", () -> handled.contains("z:1"));
    assertThat(handled).doesNotContain("k:1", "k:2");
    broken.set(false);
    boxline.deadLetters().redrive(DeadLetterQuery.of("s").key("k"));
    Await.until(WAIT, "k handled in order", () -> handled.contains("k:2"));
    assertThat(handled.stream().filter(x -> x.startsWith("k")).toList())
        .containsExactly("k:0", "k:1", "k:2");
  }
}
