package io.boxline.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.micrometer.BoxlineMetrics;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.relay.testing.ScriptedSink;
import io.boxline.testkit.Await;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay reports every send to the instance's observers, so BoxlineMetrics sees the sink. */
class RelayMetricsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private RelayFixture fx;
  private ScriptedSink sink;

  @BeforeEach
  void setUp() {
    fx =
        RelayFixture.create(
            "relaymetrics", 4, b -> b.observer(BoxlineMetrics.builder(registry).build()));
    sink = new ScriptedSink();
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  private Relay.Builder relay() {
    return Relay.builder(fx.boxline()).subscription(RelayFixture.SUBSCRIPTION).sink(sink);
  }

  private Counter events(String outcome) {
    return registry
        .find("boxline.sink.events")
        .tags("sink", "scripted", "topic", fx.topic().toString(), "outcome", outcome)
        .counter();
  }

  private Timer duration(String outcome) {
    return registry
        .find("boxline.sink.duration")
        .tags("sink", "scripted", "topic", fx.topic().toString(), "outcome", outcome)
        .timer();
  }

  @Test
  void everyConfirmedEventIsCountedOnce() {
    fx.publish(2_000, 100, 10);
    try (Relay relay = relay().batchSize(50).start()) {
      Await.until(WAIT, "2,000 events confirmed", () -> relay.sentCount() >= 2_000);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      assertThat(events("success")).isNotNull();
      assertThat(events("success").count()).isEqualTo(2_000.0);
      assertThat(duration("success").count()).isEqualTo(sink.sends());
      assertThat(duration("success").totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
          .isPositive();
      assertThat(events("failure").count()).isZero();
      assertThat(duration("failure").count()).isZero();
      assertThat(relay.sentCount()).isEqualTo(2_000);
    }
  }

  @Test
  void failedSendsAreCountedAsFailuresAndTheResendsAsSuccesses() {
    sink.down(true);
    fx.publish(500, 20, 50);
    try (Relay relay =
        relay().batchSize(100).retryBackoff(Duration.ofMillis(5), Duration.ofMillis(20)).start()) {
      Await.until(WAIT, "some failed sends", () -> sink.failedSends() >= 10);
      sink.down(false);
      Await.until(WAIT, "500 events confirmed", () -> relay.sentCount() >= 500);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      assertThat(events("success").count()).isEqualTo(500.0);
      assertThat(duration("failure").count()).isEqualTo(sink.failedSends());
      assertThat(events("failure").count()).isGreaterThanOrEqualTo(sink.failedSends());
      assertThat(duration("success").count()).isEqualTo(sink.sends() - sink.failedSends());
      assertThat(sink.check().duplicates()).isZero();
    }
  }
}
