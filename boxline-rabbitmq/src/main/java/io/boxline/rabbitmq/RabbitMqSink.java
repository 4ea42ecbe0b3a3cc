package io.boxline.rabbitmq;

import com.rabbitmq.client.ConnectionFactory;
import io.boxline.Event;
import io.boxline.ValidationException;
import io.boxline.rabbitmq.internal.AmqpDelivery;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Sink;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link Sink} that publishes events to RabbitMQ (AMQP 0-9-1) with publisher confirms: a send
 * returns once the broker confirmed every message ({@code waitForConfirmsOrDie} with a timeout).
 *
 * <pre>{@code
 * Sink sink = RabbitMqSink.builder()
 *     .uri("amqp://relay:secret@rabbit:5672/shop")
 *     .exchange(event -> "orders")                 // default: acme/shop/orders -> acme.shop.orders
 *     .routingKey(event -> "order." + event.type())  // default: the event key
 *     .build();
 * }</pre>
 *
 * <p><b>Messages.</b> Persistent (delivery mode 2) unless told otherwise; {@code message-id} is the
 * event id, {@code type} the event type, {@code timestamp} the creation time. In binary mode
 * (default) the body is the payload, {@code content-type} the event's, and the CloudEvents
 * attributes are headers named {@code cloudEvents_<attribute>} (the AMQP binding's prefix; {@link
 * Builder#headerPrefix} selects the older {@code cloudEvents:}). In structured mode the body is the
 * CloudEvents JSON document ({@code application/cloudevents+json}).
 *
 * <p><b>Failures.</b> A connection or channel failure, a negative acknowledgement or a confirm
 * timeout makes the whole batch {@linkplain io.boxline.relay.SinkException.Kind#RETRYABLE
 * retryable} (the broker does not say which of the unconfirmed messages it kept, so they are all
 * published again: at-least-once, duplicates possible, order per key kept). Messages are published
 * {@linkplain Builder#mandatory mandatory}: a message no queue is bound for comes back and counts
 * as retryable too, so nothing is dropped while bindings are missing. An event the exchange or
 * routing key function cannot map is {@linkplain io.boxline.relay.SinkException.Kind#PERMANENT
 * permanent} (dead letter). Connections are opened lazily and replaced after failures; the sink
 * uses its own connection with automatic recovery off, and one channel per concurrent send.
 */
public final class RabbitMqSink implements Sink {
  /** Default bound on waiting for the broker's confirms of one batch. */
  public static final Duration DEFAULT_CONFIRM_TIMEOUT = Duration.ofSeconds(30);

  /** Header prefix of the CloudEvents AMQP binding. */
  public static final String HEADER_PREFIX = "cloudEvents_";

  /** The prefix older CloudEvents AMQP binding versions used. */
  public static final String LEGACY_HEADER_PREFIX = "cloudEvents:";

  private final AmqpDelivery delivery;

  private RabbitMqSink(AmqpDelivery delivery) {
    this.delivery = delivery;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The default exchange mapping: the Boxline topic's full name with {@code /} replaced by {@code
   * .} ({@code acme/shop/orders} → {@code acme.shop.orders}).
   */
  public static String defaultExchange(Event event) {
    return event.topic().toString().replace('/', '.');
  }

  /** The default routing key: the event key, or the empty string for keyless events. */
  public static String defaultRoutingKey(Event event) {
    return event.key() == null ? "" : event.key();
  }

  @Override
  public void send(List<Event> events) {
    delivery.send(events);
  }

  @Override
  public String name() {
    return "rabbitmq";
  }

  @Override
  public void close() {
    delivery.close();
  }

  /** Settings of a {@link RabbitMqSink}; {@link #build()} validates them. */
  public static final class Builder {
    private ConnectionFactory factory;
    private String uri;
    private Function<Event, String> exchange = RabbitMqSink::defaultExchange;
    private Function<Event, String> routingKey = RabbitMqSink::defaultRoutingKey;
    private CloudEventsMapping cloudEvents = CloudEventsMapping.defaults();
    private String headerPrefix = HEADER_PREFIX;
    private Duration confirmTimeout = DEFAULT_CONFIRM_TIMEOUT;
    private boolean persistent = true;
    private boolean mandatory = true;

    private Builder() {}

    /**
     * Where to connect, {@code amqp[s]://user:password@host:port/vhost} (vhost URL-encoded, {@code
     * %2F} for {@code /}). One of {@code uri} and {@link #connectionFactory} is required.
     */
    public Builder uri(String uri) {
      this.uri = uri;
      return this;
    }

    /**
     * A connection factory with your settings (TLS, credentials, timeouts). The sink works on a
     * copy with automatic connection recovery turned off: it reconnects on its own.
     */
    public Builder connectionFactory(ConnectionFactory factory) {
      this.factory = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /** Exchange of each event (default {@link RabbitMqSink#defaultExchange}). */
    public Builder exchange(Function<Event, String> exchange) {
      this.exchange = Objects.requireNonNull(exchange, "exchange");
      return this;
    }

    /** Routing key of each event (default {@link RabbitMqSink#defaultRoutingKey}). */
    public Builder routingKey(Function<Event, String> routingKey) {
      this.routingKey = Objects.requireNonNull(routingKey, "routingKey");
      return this;
    }

    /** CloudEvents mapping and content mode (default: binary). */
    public Builder cloudEvents(CloudEventsMapping mapping) {
      this.cloudEvents = Objects.requireNonNull(mapping, "mapping");
      return this;
    }

    /**
     * Prefix of CloudEvents attribute headers: {@value RabbitMqSink#HEADER_PREFIX} (default) or
     * {@value RabbitMqSink#LEGACY_HEADER_PREFIX}.
     */
    public Builder headerPrefix(String prefix) {
      if (!HEADER_PREFIX.equals(prefix) && !LEGACY_HEADER_PREFIX.equals(prefix)) {
        throw new ValidationException(
            "headerPrefix must be \""
                + HEADER_PREFIX
                + "\" or \""
                + LEGACY_HEADER_PREFIX
                + "\", got \""
                + prefix
                + "\"");
      }
      this.headerPrefix = prefix;
      return this;
    }

    /** Longest wait for the confirms of one batch, 100 ms to 1 hour (default 30 s). */
    public Builder confirmTimeout(Duration timeout) {
      this.confirmTimeout = timeout;
      return this;
    }

    /** Whether messages are persistent, delivery mode 2 (default true). */
    public Builder persistent(boolean persistent) {
      this.persistent = persistent;
      return this;
    }

    /**
     * Whether messages are published mandatory (default true): a message that no queue takes comes
     * back and the relay publishes it again later, so it waits for a binding instead of being
     * dropped. Turn it off for exchanges where dropping unrouted messages is intended.
     */
    public Builder mandatory(boolean mandatory) {
      this.mandatory = mandatory;
      return this;
    }

    public RabbitMqSink build() {
      if (factory == null && (uri == null || uri.isBlank())) {
        throw new ValidationException(
            "RabbitMqSink.builder() needs a broker: .uri(\"amqp://user:password@host:5672/vhost\")"
                + " or .connectionFactory(factory)");
      }
      if (factory != null && uri != null) {
        throw new ValidationException("set either uri or connectionFactory, not both");
      }
      if (confirmTimeout == null
          || confirmTimeout.compareTo(Duration.ofMillis(100)) < 0
          || confirmTimeout.compareTo(Duration.ofHours(1)) > 0) {
        throw new ValidationException(
            "confirmTimeout must be between PT0.1S and PT1H, got " + confirmTimeout);
      }
      ConnectionFactory f;
      if (factory != null) {
        f = factory.clone();
      } else {
        f = new ConnectionFactory();
        try {
          f.setUri(uri);
        } catch (Exception e) {
          // the URI may hold a password: name only what is wrong
          throw new ValidationException(
              "uri is not an AMQP URI (amqp://user:password@host:port/vhost): "
                  + e.getClass().getSimpleName());
        }
      }
      f.setAutomaticRecoveryEnabled(false);
      f.setTopologyRecoveryEnabled(false);
      return new RabbitMqSink(
          new AmqpDelivery(
              f,
              exchange,
              routingKey,
              cloudEvents,
              headerPrefix,
              confirmTimeout,
              persistent,
              mandatory));
    }
  }
}
