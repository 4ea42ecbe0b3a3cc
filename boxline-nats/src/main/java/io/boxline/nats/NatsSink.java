package io.boxline.nats;

import io.boxline.Event;
import io.boxline.ValidationException;
import io.boxline.nats.internal.JetStreamDelivery;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Sink;
import io.nats.client.Options;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link Sink} that publishes events to NATS JetStream and waits for the stream's acknowledgement
 * of each message.
 *
 * <pre>{@code
 * Sink sink = NatsSink.builder()
 *     .servers("nats://nats-1:4222,nats://nats-2:4222")
 *     .subject(event -> "orders." + event.type())   // default: acme/shop/orders -> acme.shop.orders
 *     .build();
 * }</pre>
 *
 * <p><b>Exactly one copy in the stream.</b> Every message carries {@code Nats-Msg-Id} = the event
 * id, so JetStream drops a message it already stored within the stream's duplicate window (default
 * 2 minutes): events the relay sends again after a timeout or an outage are stored once. Choose a
 * {@code duplicate_window} longer than the outages and retry backoffs you expect; an event sent
 * again after the window is stored twice (at-least-once still holds).
 *
 * <p><b>Messages.</b> Binary mode (default): the payload as data, the CloudEvents attributes as
 * {@code ce-*} headers and {@code content-type} (NATS protocol binding). Structured mode: the
 * CloudEvents JSON document with {@code content-type: application/cloudevents+json}.
 *
 * <p><b>Failures.</b> A timeout, a lost connection, or a JetStream error such as "no stream for
 * this subject" is {@linkplain io.boxline.relay.SinkException.Kind#RETRYABLE retryable}: that event
 * and every later one of the batch are published again after a backoff. A message the server can
 * never take (larger than its maximum payload or the stream's maximum message size, an invalid
 * subject or header) is {@linkplain io.boxline.relay.SinkException.Kind#PERMANENT permanent} and
 * becomes a dead letter. The sink keeps its own connection with the client's automatic reconnect
 * turned off: after a connection loss it opens a new one at the next send, so messages buffered for
 * the old connection can never overtake the ones sent again (order per key holds).
 */
public final class NatsSink implements Sink {
  /** Default bound on waiting for the acknowledgements of one batch. */
  public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(10);

  private final JetStreamDelivery delivery;

  private NatsSink(JetStreamDelivery delivery) {
    this.delivery = delivery;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The default subject: the Boxline topic's full name with {@code /} replaced by {@code .} ({@code
   * acme/shop/orders} → {@code acme.shop.orders}).
   */
  public static String defaultSubject(Event event) {
    return event.topic().toString().replace('/', '.');
  }

  @Override
  public void send(List<Event> events) {
    delivery.send(events);
  }

  /**
   * Acknowledgements the stream marked as duplicates: events sent again that it had already stored,
   * and dropped thanks to {@code Nats-Msg-Id}.
   */
  public long duplicateAcks() {
    return delivery.duplicates();
  }

  @Override
  public String name() {
    return "nats";
  }

  @Override
  public void close() {
    delivery.close();
  }

  /** Settings of a {@link NatsSink}; {@link #build()} validates them. */
  public static final class Builder {
    private String servers;
    private Options options;
    private Function<Event, String> subject = NatsSink::defaultSubject;
    private CloudEventsMapping cloudEvents = CloudEventsMapping.defaults();
    private Duration ackTimeout = DEFAULT_ACK_TIMEOUT;
    private String expectedStream;

    private Builder() {}

    /**
     * NATS servers, {@code nats://host:port[,nats://host:port...]}. One of {@code servers} and
     * {@link #options} is required.
     */
    public Builder servers(String servers) {
      this.servers = servers;
      return this;
    }

    /**
     * Client options of your own (credentials, TLS, servers). The sink uses a copy with automatic
     * reconnect turned off; it reconnects on its own.
     */
    public Builder options(Options options) {
      this.options = Objects.requireNonNull(options, "options");
      return this;
    }

    /** Subject of each event (default {@link NatsSink#defaultSubject}). */
    public Builder subject(Function<Event, String> subject) {
      this.subject = Objects.requireNonNull(subject, "subject");
      return this;
    }

    /** CloudEvents mapping and content mode (default: binary, {@code ce-} headers). */
    public Builder cloudEvents(CloudEventsMapping mapping) {
      this.cloudEvents = Objects.requireNonNull(mapping, "mapping");
      return this;
    }

    /** Longest wait for the acknowledgements of one batch, 100 ms to 10 min (default 10 s). */
    public Builder ackTimeout(Duration timeout) {
      this.ackTimeout = timeout;
      return this;
    }

    /**
     * The stream the subjects must belong to; JetStream refuses (retryably) a message that would
     * land in another one. Default: any stream.
     */
    public Builder expectedStream(String stream) {
      this.expectedStream = stream;
      return this;
    }

    public NatsSink build() {
      if (options == null && (servers == null || servers.isBlank())) {
        throw new ValidationException(
            "NatsSink.builder() needs a server: .servers(\"nats://127.0.0.1:4222\") or"
                + " .options(options)");
      }
      if (options != null && servers != null) {
        throw new ValidationException("set either servers or options, not both");
      }
      if (ackTimeout == null
          || ackTimeout.compareTo(Duration.ofMillis(100)) < 0
          || ackTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new ValidationException(
            "ackTimeout must be between PT0.1S and PT10M, got " + ackTimeout);
      }
      if (expectedStream != null && expectedStream.isBlank()) {
        throw new ValidationException("expectedStream must not be blank");
      }
      Options.Builder ob = options != null ? new Options.Builder(options) : new Options.Builder();
      if (servers != null) {
        try {
          ob.servers(servers.split(","));
        } catch (IllegalArgumentException e) {
          throw new ValidationException("servers '" + servers + "' are invalid: " + e.getMessage());
        }
      }
      ob.noReconnect().reconnectBufferSize(0).connectionName("boxline-relay");
      return new NatsSink(
          new JetStreamDelivery(ob.build(), subject, cloudEvents, ackTimeout, expectedStream));
    }
  }
}
