package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class HandlerDecisionTest {
  private static final Instant T0 = Instant.parse("2001-02-03T04:05:06Z");
  private static final Clock FIXED = Clock.fixed(T0, ZoneOffset.UTC);

  @Test
  void retryInKeepsItsDelayUntilAClockResolvesIt() {
    HandlerDecision d = HandlerDecision.retryIn(Duration.ofMinutes(5), "not yet");
    assertThat(d.kind()).isEqualTo(HandlerDecision.Kind.RETRY_AT);
    assertThat(d.retryIn()).isEqualTo(Duration.ofMinutes(5));
    assertThat(d.retryAt(FIXED)).isEqualTo(T0.plus(Duration.ofMinutes(5)));
    assertThat(d.getMessage()).isEqualTo("not yet");
  }

  @Test
  void retryAtIsItsInstantWhateverTheClock() {
    Instant at = T0.plus(Duration.ofHours(1));
    HandlerDecision d = HandlerDecision.retryAt(at, "later");
    assertThat(d.retryAt(FIXED)).isEqualTo(at);
    assertThat(d.retryAt()).isEqualTo(at);
    assertThat(d.retryIn()).isNull();
  }

  @Test
  void otherDecisionsHaveNoRetryTime() {
    assertThat(HandlerDecision.deadLetter("bad").retryAt(FIXED)).isNull();
    assertThat(HandlerDecision.ignore("fine").retryAt()).isNull();
  }
}
