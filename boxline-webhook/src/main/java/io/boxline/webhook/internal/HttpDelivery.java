package io.boxline.webhook.internal;

import io.boxline.Event;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.SinkException;
import io.boxline.webhook.WebhookSignature;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Builds, signs and sends the requests of a {@code WebhookSink}, and classifies the outcomes. */
public final class HttpDelivery {
  private static final int REASON_BODY_CHARS = 300;

  private final HttpClient client;
  private final URI url;
  private final boolean batch;
  private final CloudEventsMapping mapping;
  private final Map<String, String> headers;
  private final byte[] secret;
  private final String signatureHeader;
  private final byte[] standardKey;
  private final Clock clock;
  private final Duration requestTimeout;
  private volatile boolean closed;

  public HttpDelivery(
      HttpClient client,
      URI url,
      boolean batch,
      CloudEventsMapping mapping,
      Map<String, String> headers,
      byte[] secret,
      String signatureHeader,
      byte[] standardKey,
      Clock clock,
      Duration requestTimeout) {
    this.client = client;
    this.url = url;
    this.batch = batch;
    this.mapping = mapping;
    this.headers = headers;
    this.secret = secret;
    this.signatureHeader = signatureHeader;
    this.standardKey = standardKey;
    this.clock = clock;
    this.requestTimeout = requestTimeout;
  }

  /** What one request came to. */
  record Outcome(SinkException.Kind failure, String reason, Throwable cause) {
    static final Outcome OK = new Outcome(null, null, null);

    boolean ok() {
      return failure == null;
    }
  }

  public void send(List<Event> events) {
    if (closed) {
      throw SinkException.retryable(events, "the webhook sink is closed", null);
    }
    if (events.isEmpty()) {
      return;
    }
    if (!batch) {
      sendOneByOne(events, false);
      return;
    }
    Outcome o =
        post(
            batchId(events),
            mapping.toJsonBatch(events),
            CloudEventsMapping.JSON_BATCH_CONTENT_TYPE,
            null);
    if (o.ok()) {
      return;
    }
    if (o.failure() == SinkException.Kind.PERMANENT && events.size() > 1) {
      sendOneByOne(events, true); // find the event(s) the endpoint refuses
      return;
    }
    throw SinkException.builder()
        .failed(events.get(0), o.failure(), o.reason())
        .retryable(events.subList(1, events.size()), o.reason())
        .cause(o.cause())
        .build();
  }

  /**
   * One request per event, in order. A permanent failure is reported and the next event sent; a
   * retryable one stops here, and it and every later event are reported retryable.
   */
  private void sendOneByOne(List<Event> events, boolean asBatches) {
    SinkException.Builder failures = SinkException.builder();
    for (int i = 0; i < events.size(); i++) {
      Event e = events.get(i);
      Outcome o = asBatches ? postBatchOfOne(e) : postEvent(e);
      if (o.ok()) {
        continue;
      }
      failures.cause(o.cause());
      if (o.failure() == SinkException.Kind.PERMANENT) {
        failures.permanent(e, o.reason());
        continue;
      }
      failures.retryable(e, o.reason());
      failures.retryable(
          events.subList(i + 1, events.size()),
          "not sent: an earlier event of the batch failed (" + o.reason() + ")");
      break;
    }
    if (!failures.isEmpty()) {
      throw failures.build();
    }
  }

  private Outcome postBatchOfOne(Event e) {
    return post(
        batchId(List.of(e)),
        mapping.toJsonBatch(List.of(e)),
        CloudEventsMapping.JSON_BATCH_CONTENT_TYPE,
        null);
  }

  private Outcome postEvent(Event e) {
    if (mapping.mode() == CloudEventsMapping.Mode.STRUCTURED) {
      return post(e.id().toString(), mapping.toJson(e), CloudEventsMapping.JSON_CONTENT_TYPE, null);
    }
    String contentType = e.contentType() == null ? "application/octet-stream" : e.contentType();
    byte[] body = e.payload() == null ? new byte[0] : e.payload();
    return post(e.id().toString(), body, contentType, mapping.binaryAttributes(e));
  }

  /**
   * The {@code webhook-id} of a batch request: the same for the same events, so a receiver
   * recognises a batch sent again.
   */
  private static String batchId(List<Event> events) {
    StringBuilder ids = new StringBuilder();
    for (Event e : events) {
      ids.append(e.id()).append(',');
    }
    return "batch-" + UUID.nameUUIDFromBytes(ids.toString().getBytes(StandardCharsets.UTF_8));
  }

  private Outcome post(
      String messageId, byte[] body, String contentType, Map<String, String> ceAttributes) {
    HttpRequest.Builder rb =
        HttpRequest.newBuilder(url)
            .timeout(requestTimeout)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .header("Content-Type", contentType);
    headers.forEach(rb::header);
    if (ceAttributes != null) {
      ceAttributes.forEach((name, value) -> rb.header("ce-" + name, HeaderValues.encode(value)));
    }
    if (secret != null) {
      rb.header(signatureHeader, WebhookSignature.sign(secret, body));
    }
    if (standardKey != null) {
      // Signed at each attempt: a retry carries a fresh timestamp and the same id.
      long timestamp = clock.instant().getEpochSecond();
      rb.header("webhook-id", messageId);
      rb.header("webhook-timestamp", Long.toString(timestamp));
      rb.header(
          "webhook-signature",
          WebhookSignature.signStandard(standardKey, messageId, timestamp, body));
    }
    HttpRequest request;
    try {
      request = rb.build();
    } catch (IllegalArgumentException e) {
      return new Outcome(
          SinkException.Kind.PERMANENT, "cannot build the request: " + e.getMessage(), e);
    }
    try {
      HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      return classify(response.statusCode(), response.body());
    } catch (HttpConnectTimeoutException e) {
      return new Outcome(SinkException.Kind.RETRYABLE, "connect to " + url + " timed out", e);
    } catch (HttpTimeoutException e) {
      return new Outcome(
          SinkException.Kind.RETRYABLE, "no response within " + requestTimeout + " from " + url, e);
    } catch (IOException e) {
      return new Outcome(SinkException.Kind.RETRYABLE, "POST " + url + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome(SinkException.Kind.RETRYABLE, "interrupted while sending", e);
    }
  }

  /** 2xx confirms; 408, 429 and 5xx are retryable; everything else is permanent. */
  static Outcome classify(int status, byte[] body) {
    if (status >= 200 && status < 300) {
      return Outcome.OK;
    }
    String reason = "HTTP " + status + snippet(body);
    if (status == 408 || status == 429 || (status >= 500 && status < 600)) {
      return new Outcome(SinkException.Kind.RETRYABLE, reason, null);
    }
    if (status >= 300 && status < 400) {
      reason = reason + " (redirects are not followed; configure the final URL)";
    }
    return new Outcome(SinkException.Kind.PERMANENT, reason, null);
  }

  private static String snippet(byte[] body) {
    if (body == null || body.length == 0) {
      return "";
    }
    String text = new String(body, StandardCharsets.UTF_8).strip();
    if (text.isEmpty()) {
      return "";
    }
    if (text.length() > REASON_BODY_CHARS) {
      text = text.substring(0, REASON_BODY_CHARS) + "…";
    }
    return ": " + text;
  }

  public void close() {
    closed = true;
  }
}
