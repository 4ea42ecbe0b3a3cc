package io.boxline.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.kafka.testing.EmbeddedKafka;
import io.boxline.opentelemetry.BoxlineTracing;
import io.boxline.relay.Relay;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.testkit.Await;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The producer's trace crosses the Kafka hop: an event published inside a span, with {@link
 * BoxlineTracing#publishInterceptor()}, reaches Kafka with the span's context in {@code
 * ce_traceparent} (CloudEvents Kafka binding, distributed tracing extension), from which a Kafka
 * consumer continues the same trace.
 */
class KafkaTracingTest {
  private static final Duration WAIT = Duration.ofSeconds(90);

  /** Reads the W3C fields from Kafka headers carrying them as CloudEvents attributes. */
  private static final TextMapGetter<Headers> CE_HEADERS =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
          List<String> keys = new ArrayList<>();
          for (Header h : carrier) {
            if (h.key().startsWith("ce_")) {
              keys.add(h.key().substring(3));
            }
          }
          return keys;
        }

        @Override
        public String get(Headers carrier, String key) {
          Header h = carrier == null ? null : carrier.lastHeader("ce_" + key);
          return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
      };

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private SdkTracerProvider tracerProvider;
  private OpenTelemetrySdk otel;
  private EmbeddedKafka kafka;
  private RelayFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    tracerProvider =
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
    otel = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).build();
    BoxlineTracing tracing = BoxlineTracing.create(otel);
    kafka = EmbeddedKafka.start();
    fx =
        RelayFixture.create(
            "kafkatrace", 4, b -> b.publishInterceptor(tracing.publishInterceptor()));
  }

  @AfterEach
  void tearDown() {
    try {
      if (fx != null) {
        fx.close();
      }
    } finally {
      if (kafka != null) {
        kafka.close();
      }
      tracerProvider.close();
    }
  }

  @Test
  void theProducersTraceIdReachesTheKafkaRecord() throws Exception {
    String topic = EmbeddedKafka.uniqueTopic("traced");
    Properties admin = new Properties();
    admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    try (Admin a = Admin.create(admin)) {
      a.createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
    }

    Span producer =
        otel.getTracer("test")
            .spanBuilder("place order")
            .setSpanKind(SpanKind.PRODUCER)
            .startSpan();
    UUID traced;
    try (Scope ignored = producer.makeCurrent()) {
      traced = fx.publishOne("key-1", RelayFixture.payload("key-1", 1), Map.of());
    } finally {
      producer.end();
    }
    UUID untraced = fx.publishOne("key-2", RelayFixture.payload("key-2", 2), Map.of());
    SpanContext published = producer.getSpanContext();
    assertThat(published.isValid()).isTrue();

    Map<String, ConsumerRecord<byte[], byte[]>> records = new ConcurrentHashMap<>();
    try (Relay relay =
            Relay.builder(fx.boxline())
                .subscription(RelayFixture.SUBSCRIPTION)
                .sink(
                    KafkaSink.builder()
                        .bootstrapServers(kafka.bootstrapServers())
                        .topic(topic)
                        .boxline(fx.boxline())
                        .build())
                .start();
        KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < 4; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Await.until(
          WAIT,
          "both records consumed from Kafka",
          () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
              records.put(header(r.headers(), "ce_id"), r);
            }
            return records.size() >= 2;
          });
      // Kafka may hand the records out before the producer's acknowledgement reaches the relay.
      Await.until(WAIT, "both sends confirmed", () -> relay.sentCount() >= 2);
      assertThat(relay.sentCount()).isEqualTo(2);
    }

    ConsumerRecord<byte[], byte[]> record = records.get(traced.toString());
    assertThat(record).as("record of the traced event").isNotNull();
    assertThat(header(record.headers(), "ce_traceparent"))
        .isEqualTo("00-" + published.getTraceId() + "-" + published.getSpanId() + "-01");
    assertThat(records.get(untraced.toString()).headers().lastHeader("ce_traceparent"))
        .as("an event published outside a span carries no trace context")
        .isNull();

    // A Kafka consumer continues the producer's trace from the record's headers.
    Context extracted =
        W3CTraceContextPropagator.getInstance()
            .extract(Context.root(), record.headers(), CE_HEADERS);
    SpanContext remote = Span.fromContext(extracted).getSpanContext();
    assertThat(remote.isRemote()).isTrue();
    assertThat(remote.getTraceId()).isEqualTo(published.getTraceId());
    Span process =
        otel.getTracer("test")
            .spanBuilder("process order")
            .setSpanKind(SpanKind.CONSUMER)
            .setParent(extracted)
            .startSpan();
    process.end();

    List<SpanData> finished = spans.getFinishedSpanItems();
    assertThat(finished)
        .extracting(SpanData::getName)
        .containsExactly("place order", "process order");
    assertThat(finished)
        .allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(published.getTraceId()));
    assertThat(finished.get(1).getParentSpanId()).isEqualTo(published.getSpanId());
  }

  private KafkaConsumer<byte[], byte[]> consumer() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return new KafkaConsumer<>(p);
  }

  private static String header(Headers headers, String name) {
    Header h = headers.lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
