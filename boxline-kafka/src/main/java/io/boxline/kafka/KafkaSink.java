package io.boxline.kafka;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.ValidationException;
import io.boxline.kafka.internal.KafkaDelivery;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Sink;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * A {@link Sink} that produces events to Apache Kafka with an idempotent producer ({@code
 * enable.idempotence=true}, {@code acks=all}), waiting for every record's acknowledgement.
 *
 * <pre>{@code
 * Sink sink = KafkaSink.builder()
 *     .bootstrapServers("kafka-1:9092,kafka-2:9092")
 *     .boxline(boxline)                          // keep Boxline partitions when counts match
 *     .topic(event -> "orders")                  // default: acme/shop/orders -> acme.shop.orders
 *     .build();
 * }</pre>
 *
 * <p><b>Records.</b> Key: the event key (UTF-8), null for keyless events. Value: the payload, with
 * the CloudEvents attributes as {@code ce_*} headers and {@code content-type} (Kafka protocol
 * binding, binary mode); or, in structured mode, the CloudEvents JSON document with {@code
 * content-type: application/cloudevents+json}. The record timestamp is the producer's clock; the
 * event's creation time travels in {@code ce_time}.
 *
 * <p><b>Partitions.</b> With {@link Builder#boxline} set, a record goes to the partition with the
 * Boxline partition's number when the Kafka topic has exactly as many partitions as the Boxline
 * topic, so Kafka partitions mirror Boxline's; otherwise (and without {@code boxline}) Kafka's
 * partitioner picks it from the key, which keeps all events of a key in one partition. The choice
 * is made once per topic and logged.
 *
 * <p><b>Failures.</b> By default the producer retries a record for as long as it takes (Kafka's
 * {@code delivery.timeout.ms} unbounded): a broker outage stalls the relay until the broker is
 * back, and Kafka's idempotent producer keeps every partition's records in order meanwhile. A
 * bounded {@link Builder#sendTimeout} gives up on a record after that long; across a longer outage
 * Kafka may then expire an earlier record while a later one of the same partition still gets
 * through, and the resent earlier record lands after it — per-key order is no longer guaranteed. A
 * record that fails with a retriable Kafka error, a timeout, or an authorisation or configuration
 * error is {@linkplain io.boxline.relay.SinkException.Kind#RETRYABLE retryable}, and so is every
 * later record of the batch (they are produced again, so per-key order holds); the relay resends
 * them after a backoff. A record Kafka can never take (too large, invalid) is {@linkplain
 * io.boxline.relay.SinkException.Kind#PERMANENT permanent} and becomes a dead letter. After a fatal
 * producer error the sink replaces its producer.
 */
public final class KafkaSink implements Sink {
  /** How long a send may wait for topic metadata or buffer space ({@code max.block.ms}). */
  public static final Duration DEFAULT_BLOCK_TIMEOUT = Duration.ofMinutes(1);

  /** Default bound on {@link #close()}. */
  public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);

  private static final Set<String> OWN_SETTINGS =
      Set.of(
          ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
          ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
          ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
          ProducerConfig.ACKS_CONFIG,
          ProducerConfig.TRANSACTIONAL_ID_CONFIG);

  private final KafkaDelivery delivery;

  private KafkaSink(KafkaDelivery delivery) {
    this.delivery = delivery;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The default topic mapping: the Boxline topic's full name with {@code /} replaced by {@code .}
   * ({@code acme/shop/orders} → {@code acme.shop.orders}).
   */
  public static String defaultTopic(Event event) {
    return event.topic().toString().replace('/', '.');
  }

  @Override
  public void send(List<Event> events) {
    delivery.send(events);
  }

  @Override
  public String name() {
    return "kafka";
  }

  @Override
  public void close() {
    delivery.close();
  }

  /** Settings of a {@link KafkaSink}; {@link #build()} validates them and creates the producer. */
  public static final class Builder {
    private String bootstrapServers;
    private Function<Event, String> topic = KafkaSink::defaultTopic;
    private Boxline boxline;
    private CloudEventsMapping cloudEvents = CloudEventsMapping.defaults();
    private Duration sendTimeout; // null: unbounded delivery
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
    private final Map<String, Object> properties = new LinkedHashMap<>();

    private Builder() {}

    /** Kafka brokers to bootstrap from, {@code host:port[,host:port...]} (required). */
    public Builder bootstrapServers(String servers) {
      this.bootstrapServers = servers;
      return this;
    }

    /** Kafka topic of each event (default {@link KafkaSink#defaultTopic}). */
    public Builder topic(Function<Event, String> topic) {
      this.topic = Objects.requireNonNull(topic, "topic");
      return this;
    }

    /** Every event to one Kafka topic. */
    public Builder topic(String topic) {
      Objects.requireNonNull(topic, "topic");
      this.topic = e -> topic;
      return this;
    }

    /**
     * The Boxline instance whose topics are relayed, to look up their partition counts: records
     * then keep their Boxline partition number when the Kafka topic has as many partitions. Without
     * it Kafka's partitioner chooses from the key.
     */
    public Builder boxline(Boxline boxline) {
      this.boxline = Objects.requireNonNull(boxline, "boxline");
      return this;
    }

    /** CloudEvents mapping and content mode (default: binary, {@code ce_} headers). */
    public Builder cloudEvents(CloudEventsMapping mapping) {
      this.cloudEvents = Objects.requireNonNull(mapping, "mapping");
      return this;
    }

    /**
     * Bounds how long the producer keeps trying one record, retries included, before the relay sees
     * a retryable failure ({@code delivery.timeout.ms}), 2 s to 1 day; also how long a send waits
     * for topic metadata ({@code max.block.ms}). Default: no bound on delivery (an outage stalls
     * the relay, order kept) and 1 min for metadata. A bound trades per-key order across outages
     * longer than it for seeing the failure: see the class comment.
     */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /** Bounded wait for outstanding records when the sink closes (default 10 s, 0 to 10 min). */
    public Builder closeTimeout(Duration timeout) {
      this.closeTimeout = timeout;
      return this;
    }

    /**
     * Any other producer setting ({@code compression.type}, {@code linger.ms}, security, ...).
     * Serializers, {@code enable.idempotence}, {@code acks} and {@code transactional.id} are the
     * sink's own and refused.
     */
    public Builder property(String name, Object value) {
      Objects.requireNonNull(name, "name");
      if (OWN_SETTINGS.contains(name)) {
        throw new ValidationException(
            "producer setting '" + name + "' is fixed by the Kafka sink and cannot be changed");
      }
      properties.put(name, Objects.requireNonNull(value, name));
      return this;
    }

    public KafkaSink build() {
      if (bootstrapServers == null || bootstrapServers.isBlank()) {
        throw new ValidationException(
            "KafkaSink.builder() needs bootstrap servers: .bootstrapServers(\"kafka:9092\")");
      }
      if (sendTimeout != null
          && (sendTimeout.compareTo(Duration.ofSeconds(2)) < 0
              || sendTimeout.compareTo(Duration.ofDays(1)) > 0)) {
        throw new ValidationException(
            "sendTimeout must be between PT2S and PT24H, got " + sendTimeout);
      }
      if (closeTimeout == null
          || closeTimeout.isNegative()
          || closeTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new ValidationException(
            "closeTimeout must be between PT0S and PT10M, got " + closeTimeout);
      }
      return new KafkaSink(
          new KafkaDelivery(producerSettings(), topic, boxline, cloudEvents, closeTimeout));
    }

    private Map<String, Object> producerSettings() {
      Map<String, Object> p = new LinkedHashMap<>();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
      p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
      p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
      long deliveryMs = sendTimeout == null ? Integer.MAX_VALUE : sendTimeout.toMillis();
      long requestMs = Math.max(1000, Math.min(30_000, deliveryMs / 2));
      p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) requestMs);
      p.put(
          ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE, deliveryMs));
      p.put(
          ProducerConfig.MAX_BLOCK_MS_CONFIG,
          (sendTimeout == null ? DEFAULT_BLOCK_TIMEOUT : sendTimeout).toMillis());
      p.putAll(properties);
      p.put(
          ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
          "org.apache.kafka.common.serialization.ByteArraySerializer");
      p.put(
          ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
          "org.apache.kafka.common.serialization.ByteArraySerializer");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      return p;
    }
  }
}
