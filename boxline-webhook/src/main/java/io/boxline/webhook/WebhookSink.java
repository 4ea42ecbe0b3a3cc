package io.boxline.webhook;

import io.boxline.Event;
import io.boxline.ValidationException;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Sink;
import io.boxline.relay.SinkException;
import io.boxline.webhook.internal.HttpDelivery;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A {@link Sink} that POSTs events to an HTTP endpoint as CloudEvents, with {@code
 * java.net.http.HttpClient}.
 *
 * <pre>{@code
 * Sink sink = WebhookSink.builder()
 *     .url(URI.create("https://partner.example/hooks/orders"))
 *     .header("Authorization", "Bearer " + token)
 *     .signingSecret(secret)                       // X-Boxline-Signature: sha256=<hex>
 *     .build();
 * }</pre>
 *
 * <p><b>Delivery.</b> {@link Delivery#PER_EVENT} (default) sends one request per event, one after
 * the other so order per key holds; the CloudEvents mapping's mode decides the body: binary (the
 * payload, attributes in {@code ce-*} headers, {@code Content-Type} from the event) or structured
 * ({@code application/cloudevents+json}). {@link Delivery#BATCH} sends the whole batch in one
 * request in the CloudEvents JSON batch format ({@code application/cloudevents-batch+json}).
 *
 * <p><b>Failure classification.</b> 2xx confirms. 408, 429, 5xx, timeouts and connection errors are
 * {@linkplain SinkException.Kind#RETRYABLE retryable}: the event and every later one of the batch
 * are sent again, so the receiver never sees a later event before an earlier one of the same batch.
 * Any other status (4xx, and 1xx/3xx — redirects are not followed) is {@linkplain
 * SinkException.Kind#PERMANENT permanent}: the event becomes a dead letter and the next one is
 * sent. In batch delivery a permanent rejection of a batch of several events is narrowed down by
 * sending them again one per request, so one bad event does not dead-letter its neighbours.
 *
 * <p><b>Signature.</b> With a signing secret every request carries {@code X-Boxline-Signature:
 * sha256=<hex>} (header name configurable), the HMAC-SHA256 of the exact body bytes; receivers
 * check it with {@link WebhookSignature#verify}. With {@link Builder#standardWebhooksSecret} it is
 * also signed as Standard Webhooks specify, with a timestamp that bounds replays.
 */
public final class WebhookSink implements Sink {
  /** How events are grouped into requests. */
  public enum Delivery {
    /** One request per event, in order (default). */
    PER_EVENT,
    /** One request per relay batch, as a CloudEvents JSON batch. */
    BATCH
  }

  /** Default header that carries the body signature. */
  public static final String DEFAULT_SIGNATURE_HEADER = "X-Boxline-Signature";

  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private static final Set<String> RESTRICTED =
      Set.of("connection", "content-length", "expect", "host", "upgrade", "content-type");
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+\\-.^_`|~0-9A-Za-z]+");

  private final HttpDelivery delivery;

  private WebhookSink(HttpDelivery delivery) {
    this.delivery = delivery;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public void send(List<Event> events) {
    delivery.send(events);
  }

  @Override
  public String name() {
    return "webhook";
  }

  @Override
  public void close() {
    delivery.close();
  }

  /** Settings of a {@link WebhookSink}; {@link #build()} validates them. */
  public static final class Builder {
    private URI url;
    private Delivery mode = Delivery.PER_EVENT;
    private CloudEventsMapping cloudEvents = CloudEventsMapping.defaults();
    private final Map<String, String> headers = new LinkedHashMap<>();
    private byte[] secret;
    private String signatureHeader = DEFAULT_SIGNATURE_HEADER;
    private byte[] standardKey;
    private Clock clock = Clock.systemUTC();
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private HttpClient client;

    private Builder() {}

    /** The endpoint (required): an absolute {@code http} or {@code https} URI. */
    public Builder url(URI url) {
      this.url = url;
      return this;
    }

    /** {@link #url(URI)} from a string. */
    public Builder url(String url) {
      try {
        this.url = URI.create(url);
      } catch (IllegalArgumentException e) {
        throw new ValidationException("webhook url '" + url + "' is not a URI: " + e.getMessage());
      }
      return this;
    }

    /** One request per event (default) or per batch. */
    public Builder delivery(Delivery delivery) {
      this.mode = Objects.requireNonNull(delivery, "delivery");
      return this;
    }

    /**
     * How events become CloudEvents (default {@link CloudEventsMapping#defaults()}: binary mode).
     * Its mode applies to per-event delivery; batch delivery is always structured.
     */
    public Builder cloudEvents(CloudEventsMapping mapping) {
      this.cloudEvents = Objects.requireNonNull(mapping, "mapping");
      return this;
    }

    /**
     * A header sent with every request (e.g. {@code Authorization}). Not allowed: {@code
     * Content-Type} (set from the event), {@code Connection}, {@code Content-Length}, {@code
     * Expect}, {@code Host}, {@code Upgrade}.
     */
    public Builder header(String name, String value) {
      if (name == null || !TOKEN.matcher(name).matches()) {
        throw new ValidationException("'" + name + "' is not a valid HTTP header name");
      }
      if (RESTRICTED.contains(name.toLowerCase(Locale.ROOT))) {
        throw new ValidationException(
            "header '" + name + "' is set by the webhook sink or the HTTP client; remove it");
      }
      if (value == null || value.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
        throw new ValidationException(
            "header '" + name + "' needs a value without control characters");
      }
      headers.put(name, value);
      return this;
    }

    /** {@link #header} for each entry. */
    public Builder headers(Map<String, String> values) {
      values.forEach(this::header);
      return this;
    }

    /** Signs every body with HMAC-SHA256 and this secret (default: no signature). */
    public Builder signingSecret(byte[] secret) {
      if (secret == null || secret.length == 0) {
        throw new ValidationException("signingSecret must not be empty");
      }
      this.secret = secret.clone();
      return this;
    }

    /** {@link #signingSecret(byte[])} with the UTF-8 bytes of {@code secret}. */
    public Builder signingSecret(String secret) {
      return signingSecret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Signs every request the <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> way
     * as well (default: not): headers {@code webhook-id} (the event id; for a batch request an id
     * derived from its events' ids), {@code webhook-timestamp} (unix seconds at each attempt) and
     * {@code webhook-signature} ({@code v1,<base64 HMAC-SHA256 of id.timestamp.body>}). Receivers
     * verify with any Standard Webhooks library, or {@link WebhookSignature#verifyStandard}, and
     * refuse requests whose timestamp is too old (replays).
     *
     * @param secret {@code whsec_} and the key in base64, as those libraries generate it
     */
    public Builder standardWebhooksSecret(String secret) {
      this.standardKey = WebhookSignature.standardKey(secret);
      return this;
    }

    /** Clock of the {@code webhook-timestamp} header (default the system clock; for tests). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Header that carries the signature (default {@value #DEFAULT_SIGNATURE_HEADER}). */
    public Builder signatureHeader(String name) {
      if (name == null || !TOKEN.matcher(name).matches()) {
        throw new ValidationException("'" + name + "' is not a valid HTTP header name");
      }
      this.signatureHeader = name;
      return this;
    }

    /**
     * Longest wait for a TCP connection, 1 ms to 10 min (default 5 s). Ignored with {@link
     * #httpClient}.
     */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    /**
     * Longest wait for a response to one request, 1 ms to 10 min (default 30 s); a timeout is
     * retryable.
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = timeout;
      return this;
    }

    /**
     * A client of your own (TLS settings, proxy, authenticator); default: a new one with {@link
     * #connectTimeout}, HTTP/1.1, no redirects. Not closed by the sink.
     */
    public Builder httpClient(HttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    public WebhookSink build() {
      if (url == null) {
        throw new ValidationException(
            "WebhookSink.builder() needs a url: .url(\"https://example.com/hooks\")");
      }
      String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
      if (!url.isAbsolute()
          || !(scheme.equals("http") || scheme.equals("https"))
          || url.getHost() == null) {
        throw new ValidationException(
            "webhook url must be an absolute http or https URL, got '" + url + "'");
      }
      requireRange("connectTimeout", connectTimeout);
      requireRange("requestTimeout", requestTimeout);
      HttpClient c =
          client == null
              ? HttpClient.newBuilder()
                  .connectTimeout(connectTimeout)
                  .version(HttpClient.Version.HTTP_1_1)
                  .followRedirects(HttpClient.Redirect.NEVER)
                  .build()
              : client;
      return new WebhookSink(
          new HttpDelivery(
              c,
              url,
              mode == Delivery.BATCH,
              cloudEvents,
              Map.copyOf(headers),
              secret,
              signatureHeader,
              standardKey,
              clock,
              requestTimeout));
    }

    private static void requireRange(String name, Duration d) {
      if (d == null) {
        throw new ValidationException(name + " must not be null");
      }
      if (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new ValidationException(name + " must be between PT0.001S and PT10M, got " + d);
      }
    }
  }
}
