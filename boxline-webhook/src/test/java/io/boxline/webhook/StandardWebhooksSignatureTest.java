package io.boxline.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.ValidationException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class StandardWebhooksSignatureTest {
  // The example of the Standard Webhooks specification: any receiver's library accepts this.
  private static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  private static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  private static final long TIMESTAMP = 1614265330;
  private static final byte[] BODY = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
  private static final String SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  private static final Duration FIVE_MINUTES = Duration.ofMinutes(5);

  private static Clock at(long epochSecond) {
    return Clock.fixed(Instant.ofEpochSecond(epochSecond), ZoneOffset.UTC);
  }

  @Test
  void signsTheSpecificationsExample() {
    assertThat(
            WebhookSignature.signStandard(
                WebhookSignature.standardKey(SECRET), ID, TIMESTAMP, BODY))
        .isEqualTo(SIGNATURE);
    // The secret without its prefix is the same key.
    assertThat(WebhookSignature.standardKey(SECRET.substring(6)))
        .isEqualTo(WebhookSignature.standardKey(SECRET));
  }

  @Test
  void verifiesOnlyTheExactMessageWithinTheTolerance() {
    String ts = Long.toString(TIMESTAMP);
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET, ID, ts, BODY, SIGNATURE, FIVE_MINUTES, at(TIMESTAMP + 299)))
        .isTrue();
    // Several signatures (key rotation): one valid is enough.
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET,
                ID,
                ts,
                BODY,
                "v1,bm90IHRoaXMgb25l " + SIGNATURE,
                FIVE_MINUTES,
                at(TIMESTAMP)))
        .isTrue();
    // A replay after the tolerance, a changed body, id or timestamp, or no header: refused.
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET, ID, ts, BODY, SIGNATURE, FIVE_MINUTES, at(TIMESTAMP + 301)))
        .isFalse();
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET,
                ID,
                ts,
                "{\"test\": 2432232315}".getBytes(StandardCharsets.UTF_8),
                SIGNATURE,
                FIVE_MINUTES,
                at(TIMESTAMP)))
        .isFalse();
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET, ID + "x", ts, BODY, SIGNATURE, FIVE_MINUTES, at(TIMESTAMP)))
        .isFalse();
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET,
                ID,
                Long.toString(TIMESTAMP + 1),
                BODY,
                SIGNATURE,
                FIVE_MINUTES,
                at(TIMESTAMP)))
        .isFalse();
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET, ID, ts, BODY, null, FIVE_MINUTES, at(TIMESTAMP)))
        .isFalse();
    assertThat(
            WebhookSignature.verifyStandard(
                SECRET, ID, "soon", BODY, SIGNATURE, FIVE_MINUTES, at(TIMESTAMP)))
        .isFalse();
  }

  @Test
  void aSecretThatIsNotBase64IsRefusedWithTheFormatItNeeds() {
    assertThatThrownBy(() -> WebhookSink.builder().standardWebhooksSecret("whsec_not base64!"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("must be base64, optionally after 'whsec_'");
    assertThatThrownBy(() -> WebhookSink.builder().standardWebhooksSecret(""))
        .isInstanceOf(ValidationException.class)
        .hasMessage("the Standard Webhooks secret must not be empty");
  }
}
