package io.boxline.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.DeadLetter;
import io.boxline.ValidationException;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Relay;
import io.boxline.relay.testing.OrderCheck;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WebhookSinkTest {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final String SECRET = "s3cr3t-for-tests";
  private static final Pattern N = Pattern.compile("\"n\":(\\d+)");
  private static final ObjectMapper JSON = new ObjectMapper();

  private RelayFixture fx;
  private final OrderCheck check = new OrderCheck();
  private final AtomicInteger badSignatures = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();

  @BeforeEach
  void setUp() {
    fx = RelayFixture.create("webhook", 4);
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  private static long n(String body) {
    Matcher m = N.matcher(body);
    if (!m.find()) {
      throw new IllegalStateException("no n in " + body);
    }
    return Long.parseLong(m.group(1));
  }

  /** Records a binary-mode request and checks its signature. */
  private void recordBinary(TestEndpoint.Request r) {
    if (!WebhookSignature.verify(SECRET, r.body(), r.header("X-Boxline-Signature"))) {
      badSignatures.incrementAndGet();
    }
    check.record(
        r.header("ce-id"), r.header("ce-subject"), Long.parseLong(r.header("ce-boxlinesequence")));
  }

  private Relay.Builder relay(WebhookSink sink) {
    return Relay.builder(fx.boxline())
        .subscription(RelayFixture.SUBSCRIPTION)
        .sink(sink)
        .retryBackoff(Duration.ofMillis(10), Duration.ofMillis(200));
  }

  @Test
  void relaysTenThousandSignedEventsInOrderPerKey() throws IOException {
    AtomicInteger traced = new AtomicInteger();
    AtomicInteger wrongHeaders = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  requests.incrementAndGet();
                  if (!"Bearer t0ken".equals(r.header("Authorization"))
                      || !"application/json".equals(r.header("Content-Type"))
                      || !"1.0".equals(r.header("ce-specversion"))
                      || !RelayFixture.TYPE.equals(r.header("ce-type"))
                      || !"/relay/test/events".equals(r.header("ce-source"))) {
                    wrongHeaders.incrementAndGet();
                  }
                  if (r.header("ce-traceparent") != null
                      && r.header("ce-traceparent").equals(RelayFixture.traceparent(n(r.text())))) {
                    traced.incrementAndGet();
                  }
                  recordBinary(r);
                  return TestEndpoint.Response.OK;
                })
            .start()) {
      List<UUID> ids = fx.publish(10_000, 100, 500);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .header("Authorization", "Bearer t0ken")
              .signingSecret(SECRET)
              .build();
      try (Relay relay = relay(sink).batchSize(200).start()) {
        Await.until(WAIT, "10,000 events posted", check::distinct, n -> n >= 10_000);
        Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
        assertThat(relay.deadLetterCount()).isZero();
      }
      assertThat(check.missing(ids)).isEmpty();
      assertThat(check.violations()).isEmpty();
      // At least once: on a loaded machine the relay can miss a check-in deadline, lose its
      // partitions and post again what it had not committed yet, at most one batch per partition.
      int inFlight = 4 * 200;
      assertThat(check.duplicates()).isLessThanOrEqualTo(inFlight);
      assertThat(check.keys()).isEqualTo(100);
      assertThat(badSignatures).hasValue(0);
      assertThat(wrongHeaders).hasValue(0);
      assertThat(traced.get()).isBetween(1_000, 1_000 + inFlight);
      assertThat(requests.get()).isBetween(10_000, 10_000 + inFlight);
    }
  }

  /** Whether a request carries a valid Standard Webhooks signature, as a receiver checks it. */
  private static boolean standardSigned(
      TestEndpoint.Request r, String secret, java.time.Clock clock) {
    return WebhookSignature.verifyStandard(
        secret,
        r.header("webhook-id"),
        r.header("webhook-timestamp"),
        r.body(),
        r.header("webhook-signature"),
        Duration.ofMinutes(5),
        clock);
  }

  @Test
  void signsTheStandardWebhooksWayWithTheEventIdAndTheSameIdWhenABatchIsSentAgain()
      throws IOException {
    String secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    java.time.Clock clock =
        java.time.Clock.fixed(
            java.time.Instant.ofEpochSecond(1_800_000_000), java.time.ZoneOffset.UTC);
    AtomicInteger unverified = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  requests.incrementAndGet();
                  if (!standardSigned(r, secret, clock)
                      || !r.header("webhook-id").equals(r.header("ce-id"))
                      || !"1800000000".equals(r.header("webhook-timestamp"))) {
                    unverified.incrementAndGet();
                  }
                  recordBinary(r);
                  return TestEndpoint.Response.OK;
                })
            .start()) {
      List<UUID> ids = fx.publish(20, 5, 10);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .signingSecret(SECRET)
              .standardWebhooksSecret(secret)
              .clock(clock)
              .build();
      try (Relay relay = relay(sink).start()) {
        Await.until(WAIT, "20 events posted", check::distinct, n -> n >= 20);
        Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      }
      assertThat(check.missing(ids)).isEmpty();
      assertThat(unverified).hasValue(0);
      assertThat(badSignatures).hasValue(0);
    }

    // Batch delivery: the first attempt fails, the retry carries the same webhook-id.
    List<String> batchIds = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  batchIds.add(r.header("webhook-id"));
                  if (!standardSigned(r, secret, clock)) {
                    unverified.incrementAndGet();
                  }
                  return attempts.incrementAndGet() == 1
                      ? new TestEndpoint.Response(503, "busy")
                      : TestEndpoint.Response.OK;
                })
            .start()) {
      fx.publish(20, 1, 1, 1);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .delivery(WebhookSink.Delivery.BATCH)
              .standardWebhooksSecret(secret)
              .clock(clock)
              .build();
      try (Relay relay = relay(sink).start()) {
        // The backlog alone can read 0 before the sequencer has moved the new events into the log.
        Await.until(
            WAIT,
            "the batch delivered on its second attempt",
            () -> attempts.get() >= 2 && fx.backlog() == 0);
      }
      assertThat(batchIds).hasSizeGreaterThanOrEqualTo(2);
      assertThat(batchIds.get(0)).startsWith("batch-").isEqualTo(batchIds.get(1));
      assertThat(unverified).hasValue(0);
    }
  }

  /** Events answered 503, 429, 408 or too late on their first request (n % 50 == 4 hangs). */
  private static boolean failsOnce(long n) {
    long m = n % 25;
    return (m >= 1 && m <= 3) || n % 50 == 4;
  }

  @Test
  void retriesFailuresTimeoutsAndThrottlingAndDeadLettersRejections() throws IOException {
    Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
    CountDownLatch never = new CountDownLatch(1);
    AtomicInteger hangs = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  long n = n(r.text());
                  if (n % 97 == 5) {
                    return new TestEndpoint.Response(422, "{\"error\":\"amount missing\"}");
                  }
                  if (failsOnce(n) && failedOnce.add(n)) {
                    switch ((int) (n % 25)) {
                      case 1:
                        return new TestEndpoint.Response(503, "down for maintenance");
                      case 2:
                        return new TestEndpoint.Response(429, null);
                      case 3:
                        return new TestEndpoint.Response(408, null);
                      default:
                        hangs.incrementAndGet();
                        try {
                          // Answer far too late: the client's request timeout fires first.
                          never.await(3, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return new TestEndpoint.Response(500, "too late");
                    }
                  }
                  recordBinary(r);
                  return new TestEndpoint.Response(200, "ok");
                })
            .start()) {
      List<UUID> ids = fx.publish(500, 20, 100);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .signingSecret(SECRET)
              .requestTimeout(Duration.ofMillis(250))
              .build();
      try (Relay relay = relay(sink).start()) {
        Await.until(WAIT, "every accepted event posted", check::distinct, n -> n >= 494);
        Await.until(WAIT, "6 dead letters", () -> fx.deadLetters().size(), n -> n >= 6);
        Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
        long failing = 0;
        for (long n = 0; n < 500; n++) {
          failing += n % 97 != 5 && failsOnce(n) ? 1 : 0;
        }
        // every scripted failure stops its send, so each one costs at least one resend
        assertThat(relay.retryCount()).isGreaterThanOrEqualTo(failing);
        assertThat(failedOnce).hasSize((int) failing);
      }
      List<DeadLetter> dead = fx.deadLetters();
      assertThat(dead).hasSize(6);
      assertThat(dead)
          .allSatisfy(
              d -> {
                assertThat(n(new String(d.event().payload(), StandardCharsets.UTF_8)) % 97)
                    .isEqualTo(5);
                assertThat(d.lastError()).contains("HTTP 422: {\"error\":\"amount missing\"}");
              });
      assertThat(check.missing(ids)).hasSize(6);
      assertThat(check.violations()).isEmpty();
      assertThat(check.duplicates()).isZero();
      assertThat(hangs.get()).isEqualTo(10);
      assertThat(badSignatures).hasValue(0);
      never.countDown();
    }
  }

  @Test
  void anEndpointOutageStallsTheRelayAndNothingIsLost() throws IOException {
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  recordBinary(r);
                  return TestEndpoint.Response.OK;
                })
            .start()) {
      List<UUID> first = fx.publish(0, 1_000, 50, 100);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .signingSecret(SECRET)
              .connectTimeout(Duration.ofSeconds(1))
              .build();
      try (Relay relay = relay(sink).start()) {
        Await.until(WAIT, "first 1,000 posted", check::distinct, n -> n >= 1_000);
        endpoint.stop();
        List<UUID> second = fx.publish(1_000, 1_000, 50, 100);
        Await.until(WAIT, "relay stalled on the outage", relay::isStalled);
        Await.until(WAIT, "several failed sends", relay::retryCount, n -> n >= 10);
        assertThat(fx.backlog()).as("cursor waits for the endpoint").isGreaterThan(0);
        int during = check.distinct();
        assertThat(during).isLessThan(2_000);

        endpoint.start(); // same port
        Await.until(WAIT, "everything posted after the outage", check::distinct, n -> n >= 2_000);
        Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
        assertThat(check.missing(first)).isEmpty();
        assertThat(check.missing(second)).isEmpty();
        assertThat(check.violations()).isEmpty();
        assertThat(check.duplicates()).isZero();
        assertThat(fx.deadLetters()).isEmpty();
      }
    }
  }

  @Test
  void batchDeliveryPostsCloudEventsJsonBatches() throws IOException {
    AtomicInteger batches = new AtomicInteger();
    AtomicInteger multi = new AtomicInteger();
    AtomicInteger wrongType = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  if (!WebhookSignature.verify(SECRET, r.body(), r.header("X-Sig"))) {
                    badSignatures.incrementAndGet();
                  }
                  if (!CloudEventsMapping.JSON_BATCH_CONTENT_TYPE.equals(
                      r.header("Content-Type"))) {
                    wrongType.incrementAndGet();
                  }
                  JsonNode array;
                  try {
                    array = JSON.readTree(r.body());
                  } catch (IOException e) {
                    return new TestEndpoint.Response(400, "not JSON");
                  }
                  // Reject the batch when it holds a poisoned event: the sink must narrow it down.
                  for (JsonNode ce : array) {
                    if (ce.get("data").get("n").asLong() % 211 == 17) {
                      return new TestEndpoint.Response(400, "poisoned");
                    }
                  }
                  batches.incrementAndGet();
                  if (array.size() > 1) {
                    multi.incrementAndGet();
                  }
                  for (JsonNode ce : array) {
                    check.record(
                        ce.get("id").asText(),
                        ce.get("subject").asText(),
                        Long.parseLong(ce.get("boxlinesequence").asText()));
                  }
                  return TestEndpoint.Response.OK;
                })
            .start()) {
      List<UUID> ids = fx.publish(2_000, 40, 250);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .delivery(WebhookSink.Delivery.BATCH)
              .signingSecret(SECRET)
              .signatureHeader("X-Sig")
              .build();
      try (Relay relay = relay(sink).batchSize(100).start()) {
        Await.until(WAIT, "accepted events posted", check::distinct, n -> n >= 1_990);
        Await.until(
            WAIT, "poisoned events dead-lettered", () -> fx.deadLetters().size(), n -> n >= 10);
        Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
        assertThat(relay.deadLetterCount()).isEqualTo(10);
      }
      assertThat(fx.deadLetters())
          .hasSize(10)
          .allSatisfy(d -> assertThat(d.lastError()).contains("HTTP 400: poisoned"));
      assertThat(check.missing(ids)).hasSize(10);
      assertThat(check.violations()).isEmpty();
      assertThat(check.duplicates()).isZero();
      assertThat(multi.get()).isGreaterThan(0);
      assertThat(batches.get()).isLessThan(1_000);
      assertThat(badSignatures).hasValue(0);
      assertThat(wrongType).hasValue(0);
    }
  }

  @Test
  void structuredModeSendsOneCloudEventsDocumentPerEvent() throws IOException {
    AtomicInteger wrongType = new AtomicInteger();
    try (TestEndpoint endpoint =
        new TestEndpoint(
                r -> {
                  if (!CloudEventsMapping.JSON_CONTENT_TYPE.equals(r.header("Content-Type"))
                      || r.header("ce-id") != null) {
                    wrongType.incrementAndGet();
                  }
                  try {
                    JsonNode ce = JSON.readTree(r.body());
                    check.record(
                        ce.get("id").asText(),
                        ce.get("subject").asText(),
                        Long.parseLong(ce.get("boxlinesequence").asText()));
                  } catch (IOException e) {
                    return new TestEndpoint.Response(400, "not JSON");
                  }
                  return TestEndpoint.Response.OK;
                })
            .start()) {
      List<UUID> ids = fx.publish(200, 10, 100);
      WebhookSink sink =
          WebhookSink.builder()
              .url(endpoint.url())
              .cloudEvents(
                  CloudEventsMapping.builder().mode(CloudEventsMapping.Mode.STRUCTURED).build())
              .build();
      try (Relay relay = relay(sink).start()) {
        Await.until(WAIT, "200 documents posted", check::distinct, n -> n >= 200);
        // The relay counts an event once its response is back, just after the endpoint saw it.
        Await.until(WAIT, "200 counted as sent", relay::sentCount, n -> n >= 200);
      }
      assertThat(check.missing(ids)).isEmpty();
      assertThat(check.violations()).isEmpty();
      assertThat(wrongType).hasValue(0);
    }
  }

  @Test
  void signaturesVerify() {
    byte[] body = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);
    String sig = WebhookSignature.sign(SECRET, body);
    assertThat(sig).startsWith("sha256=").hasSize(7 + 64);
    assertThat(WebhookSignature.verify(SECRET, body, sig)).isTrue();
    assertThat(WebhookSignature.verify("other", body, sig)).isFalse();
    assertThat(WebhookSignature.verify(SECRET, "{\"a\":2}".getBytes(StandardCharsets.UTF_8), sig))
        .isFalse();
    assertThat(WebhookSignature.verify(SECRET, body, null)).isFalse();
    // RFC 4231 test case 2
    assertThat(
            WebhookSignature.sign(
                "Jefe", "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII)))
        .isEqualTo("sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  }

  @Test
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> WebhookSink.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessage("WebhookSink.builder() needs a url: .url(\"https://example.com/hooks\")");
    assertThatThrownBy(() -> WebhookSink.builder().url("ftp://example.com/x").build())
        .hasMessage("webhook url must be an absolute http or https URL, got 'ftp://example.com/x'");
    assertThatThrownBy(() -> WebhookSink.builder().url("/relative").build())
        .hasMessage("webhook url must be an absolute http or https URL, got '/relative'");
    assertThatThrownBy(() -> WebhookSink.builder().header("Content-Type", "text/plain"))
        .hasMessage(
            "header 'Content-Type' is set by the webhook sink or the HTTP client; remove it");
    assertThatThrownBy(() -> WebhookSink.builder().header("Bad Name", "x"))
        .hasMessage("'Bad Name' is not a valid HTTP header name");
    assertThatThrownBy(() -> WebhookSink.builder().header("X-A", "line\nbreak"))
        .hasMessage("header 'X-A' needs a value without control characters");
    assertThatThrownBy(() -> WebhookSink.builder().signingSecret(""))
        .hasMessage("signingSecret must not be empty");
    assertThatThrownBy(
            () ->
                WebhookSink.builder()
                    .url("http://localhost/x")
                    .requestTimeout(Duration.ZERO)
                    .build())
        .hasMessage("requestTimeout must be between PT0.001S and PT10M, got PT0S");
    assertThatThrownBy(
            () -> WebhookSink.builder().url("http://localhost/x").connectTimeout(null).build())
        .hasMessage("connectTimeout must not be null");
  }
}
