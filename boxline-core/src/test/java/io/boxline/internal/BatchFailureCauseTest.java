package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.BatchFailure;
import io.boxline.Boxline;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.NamespacePath;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A batch handler's {@link BatchFailure} on the per-event path (the retries of the failed event,
 * which Boxline hands to the batch handler alone): the event fails with the cause given for it.
 * Found by the chaos run: its poison events' dead letters read "BatchFailure: 1 events of the batch
 * failed" instead of the handler's cause, and a HandlerDecision given through a BatchFailure was
 * retried as an ordinary failure.
 */
class BatchFailureCauseTest {
  private static final TopicName ORDERS = TopicName.of("acme/batch", "orders");
  private static final Instant T0 = Instant.parse("2024-05-01T10:00:00Z");

  /** Retries 10 ms, 20 ms apart (by the injected clock); dead at the third attempt. */
  private static final RetryPolicy QUICK =
      RetryPolicy.DEFAULT
          .backoff(Duration.ofMillis(10), Duration.ofMinutes(1))
          .multiplier(2)
          .jitter(0)
          .inPlaceAttempts(2)
          .maxAttempts(3);

  private final MutableClock clock = new MutableClock(T0);
  private Boxline boxline;

  @BeforeEach
  void setUp() {
    boxline =
        Boxline.builder()
            .store(InMemoryStore.create(clock))
            .clock(clock)
            .instanceId("unit")
            .build()
            .start();
    boxline.admin().createNamespace(NamespacePath.of("acme/batch"));
    boxline.admin().createTopic(ORDERS, 1, Sequencing.SEQUENCER);
    boxline.admin().createSubscription(SubscriptionSpec.of("billing", ORDERS));
  }

  @AfterEach
  void tearDown() {
    boxline.close();
  }

  private void publish(String body) {
    TextEvents.publish(boxline, ORDERS, "k", body);
  }

  private static boolean isPoison(Event e) {
    return new String(e.payload(), StandardCharsets.UTF_8).equals("poison");
  }

  /** Moves the injected clock on (so each parked retry comes due) until the event is dead. */
  private List<DeadLetter> awaitDeadLetter() {
    return Waits.until(
        "the poison is dead-lettered",
        () -> {
          clock.advance(Duration.ofSeconds(1));
          return boxline.deadLetters().list(DeadLetterQuery.of("billing"));
        },
        l -> !l.isEmpty());
  }

  @Test
  void theDeadLetterOfAnEventFailedThroughABatchFailureCarriesItsOwnCause() {
    AtomicInteger attempts = new AtomicInteger();
    boxline
        .consumer("billing")
        .retryPolicy(QUICK)
        .batchHandler(
            events -> {
              BatchFailure.Builder failure = BatchFailure.builder();
              for (Event e : events) {
                if (isPoison(e)) {
                  failure.failed(
                      e, new IllegalStateException("poison " + attempts.incrementAndGet()));
                }
              }
              if (!failure.isEmpty()) {
                throw failure.build();
              }
            })
        .start();
    publish("poison");

    DeadLetter dead = awaitDeadLetter().get(0);
    assertThat(dead.attempts()).isEqualTo(3);
    assertThat(dead.lastError())
        .contains("poison " + attempts.get())
        .doesNotContain("events of the batch failed");
  }

  @Test
  void aHandlerDecisionGivenThroughABatchFailureIsHonouredOnTheRetry() {
    AtomicInteger attempts = new AtomicInteger();
    boxline
        .consumer("billing")
        .retryPolicy(QUICK)
        .batchHandler(
            events -> {
              for (Event e : events) {
                if (isPoison(e)) {
                  RuntimeException cause =
                      attempts.incrementAndGet() == 1
                          ? new IllegalStateException("transient")
                          : HandlerDecision.deadLetter("no such customer");
                  throw BatchFailure.builder().failed(e, cause).build();
                }
              }
            })
        .start();
    publish("poison");

    // The first attempt fails (batch path) and is parked; the retry, alone, decides: dead at once.
    DeadLetter dead = awaitDeadLetter().get(0);
    assertThat(dead.attempts()).isEqualTo(2);
    assertThat(dead.lastError()).contains("no such customer");
    assertThat(attempts.get()).isEqualTo(2);
  }
}
