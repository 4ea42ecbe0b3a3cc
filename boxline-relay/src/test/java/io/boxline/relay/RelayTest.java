package io.boxline.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.DeadLetter;
import io.boxline.RetryPolicy;
import io.boxline.ValidationException;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.relay.testing.ScriptedSink;
import io.boxline.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RelayTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private RelayFixture fx;
  private ScriptedSink sink;

  @BeforeEach
  void setUp() {
    fx = RelayFixture.create("relay", 4);
    sink = new ScriptedSink();
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  private Relay.Builder relay() {
    return Relay.builder(fx.boxline()).subscription(RelayFixture.SUBSCRIPTION).sink(sink);
  }

  private static long n(io.boxline.Event e) {
    String json = new String(e.payload(), StandardCharsets.UTF_8);
    return Long.parseLong(json.substring(json.lastIndexOf(':') + 1, json.length() - 1));
  }

  @Test
  void relaysEveryEventInOrderPerKey() {
    List<UUID> ids = fx.publish(10_000, 100, 500);
    try (Relay relay = relay().batchSize(200).start()) {
      Await.until(WAIT, "10,000 events confirmed", () -> sink.check().distinct() >= 10_000);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      assertThat(sink.check().missing(ids)).isEmpty();
      assertThat(sink.check().violations()).isEmpty();
      assertThat(sink.check().duplicates()).isZero();
      assertThat(sink.check().keys()).isEqualTo(100);
      assertThat(relay.sentCount()).isEqualTo(10_000);
      assertThat(relay.deadLetterCount()).isZero();
      assertThat(fx.deadLetters()).isEmpty();
    }
    assertThat(sink.closes()).isEqualTo(1);
  }

  @Test
  void anOutageStallsTheRelayAndNothingIsLost() {
    sink.down(true);
    List<UUID> ids = fx.publish(1_000, 50, 100);
    try (Relay relay = relay().retryBackoff(Duration.ofMillis(5), Duration.ofMillis(50)).start()) {
      Await.until(WAIT, "relay stalled and retrying", () -> relay.retryCount() >= 20);
      assertThat(relay.isStalled()).isTrue();
      assertThat(sink.check().distinct()).isZero();
      assertThat(fx.backlog()).as("cursor must not move past unconfirmed events").isEqualTo(1_000);

      sink.down(false);
      Await.until(WAIT, "all delivered after the outage", () -> sink.check().distinct() >= 1_000);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      assertThat(sink.check().missing(ids)).isEmpty();
      assertThat(sink.check().violations()).isEmpty();
      assertThat(sink.check().duplicates()).isZero();
      assertThat(fx.deadLetters()).isEmpty();
      Await.until(WAIT, "no partition stalled", () -> !relay.isStalled());
    }
  }

  @Test
  void rejectedEventsBecomeDeadLettersAndTheRestFlows() {
    sink.reject(e -> n(e) % 100 == 7);
    List<UUID> ids = fx.publish(1_000, 20, 100);
    try (Relay relay = relay().start()) {
      Await.until(WAIT, "990 delivered", () -> sink.check().distinct() >= 990);
      Await.until(WAIT, "10 dead letters", () -> fx.deadLetters().size(), n -> n >= 10);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      List<DeadLetter> dead = fx.deadLetters();
      assertThat(dead).hasSize(10);
      assertThat(dead)
          .allSatisfy(
              d -> {
                assertThat(n(d.event()) % 100).isEqualTo(7);
                assertThat(d.lastError()).contains("scripted rejected it: scripted rejection");
              });
      assertThat(sink.check().missing(ids)).hasSize(10);
      assertThat(sink.check().violations()).isEmpty();
      assertThat(relay.deadLetterCount()).isGreaterThanOrEqualTo(10);
    }
  }

  @Test
  void afterTheStallTimeoutTheRetryPolicyDecides() {
    sink.failForever(e -> e.key().equals("key-001"));
    List<UUID> ids = fx.publish(200, 10, 50);
    RetryPolicy quick =
        RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
            .inPlaceAttempts(1)
            .maxAttempts(2);
    try (Relay relay =
        relay()
            .retryBackoff(Duration.ofMillis(5), Duration.ofMillis(20))
            .stallTimeout(Duration.ofMillis(100))
            .retryPolicy(quick)
            .start()) {
      Await.until(WAIT, "other keys delivered", () -> sink.check().distinct() >= 180);
      Await.until(WAIT, "key-001 dead-lettered", () -> fx.deadLetters().size(), n -> n >= 20);
      assertThat(fx.deadLetters())
          .allSatisfy(d -> assertThat(d.event().key()).isEqualTo("key-001"))
          .allSatisfy(d -> assertThat(d.lastError()).contains("lasting failure"));
      assertThat(sink.check().missing(ids)).hasSize(20);
      assertThat(sink.check().violations()).isEmpty();
      assertThat(relay.isStalled()).isFalse();
    }
  }

  @Test
  void closingAStalledRelayIsQuickAndLeavesEverythingForTheNextOne() {
    sink.down(true);
    List<UUID> ids = fx.publish(300, 30, 100);
    Relay first = relay().retryBackoff(Duration.ofMillis(50), Duration.ofSeconds(5)).start();
    Await.until(WAIT, "first relay stalled", first::isStalled);
    long start = System.nanoTime();
    first.close();
    first.close(); // safe twice
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(sink.closes()).isEqualTo(1);
    assertThat(fx.backlog()).isEqualTo(300);
    assertThat(fx.deadLetters()).isEmpty();

    ScriptedSink healthy = new ScriptedSink();
    try (Relay second =
        Relay.builder(fx.boxline()).subscription(RelayFixture.SUBSCRIPTION).sink(healthy).start()) {
      Await.until(WAIT, "second relay delivered all", () -> healthy.check().distinct() >= 300);
      assertThat(healthy.check().missing(ids)).isEmpty();
      assertThat(healthy.check().violations()).isEmpty();
      assertThat(second.sentCount()).isGreaterThanOrEqualTo(300);
    }
  }

  @Test
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> Relay.builder(fx.boxline()).sink(sink).start())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "Relay.builder(boxline) needs a subscription: .subscription(\"orders-to-kafka\")");
    assertThatThrownBy(() -> Relay.builder(fx.boxline()).subscription("relay").start())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "Relay.builder(boxline) needs a sink: .sink(...), e.g. a KafkaSink, RabbitMqSink,"
                + " NatsSink or WebhookSink");
    assertThatThrownBy(() -> relay().batchSize(0).start())
        .isInstanceOf(ValidationException.class)
        .hasMessage("batchSize must be between 1 and 10000, got 0");
    assertThatThrownBy(() -> relay().concurrency(257).start())
        .hasMessage("concurrency must be between 1 and 256, got 257");
    assertThatThrownBy(
            () -> relay().retryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).start())
        .hasMessage("retryBackoff max (PT1S) must not be shorter than initial (PT2S)");
    assertThatThrownBy(() -> relay().retryBackoff(Duration.ZERO, Duration.ofSeconds(1)).start())
        .hasMessage("retryBackoff initial must be between PT0.001S and PT1H, got PT0S");
    assertThatThrownBy(() -> relay().stallTimeout(Duration.ZERO).start())
        .hasMessage("stallTimeout must be between PT0.001S and PT87672H, got PT0S");
    assertThatThrownBy(() -> relay().shutdownTimeout(Duration.ofMinutes(11)).start())
        .hasMessage("shutdownTimeout must be between PT0S and PT10M, got PT11M");
    assertThatThrownBy(() -> relay().retryPolicy(null).start())
        .hasMessage("retryPolicy must not be null");
    assertThatThrownBy(() -> Relay.builder(fx.boxline()).subscription("nope").sink(sink).start())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "subscription 'nope' does not exist; create it first:"
                + " boxline.admin().createSubscription(SubscriptionSpec.of(\"nope\", topic))");
    assertThat(sink.closes()).isZero();
  }

  @Test
  void aFailureNamingNoEventOfTheBatchRetriesTheWholeBatch() {
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    io.boxline.Event stranger =
        new io.boxline.Event(
            UUID.randomUUID(),
            fx.topic(),
            0,
            1,
            "x",
            "t",
            null,
            "application/json",
            new byte[0],
            java.util.Map.of(),
            java.time.Instant.now(),
            null);
    Sink confused =
        new Sink() {
          @Override
          public void send(List<io.boxline.Event> events) {
            if (calls.incrementAndGet() <= 3) {
              throw SinkException.retryable(List.of(stranger), "names the wrong event", null);
            }
            sink.send(events);
          }

          @Override
          public void close() {}
        };
    List<UUID> ids = fx.publish(100, 10, 100);
    try (Relay relay =
        Relay.builder(fx.boxline())
            .subscription(RelayFixture.SUBSCRIPTION)
            .sink(confused)
            .concurrency(1)
            .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
            .start()) {
      Await.until(WAIT, "all delivered", () -> sink.check().distinct() >= 100);
      assertThat(relay.retryCount()).isGreaterThanOrEqualTo(3);
    }
    assertThat(sink.check().missing(ids)).isEmpty();
    assertThat(sink.check().violations()).isEmpty();
  }

  @Test
  void sinkExceptionMustNameAnEvent() {
    assertThatThrownBy(() -> SinkException.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessage("a SinkException must name at least one failed event");
  }
}
