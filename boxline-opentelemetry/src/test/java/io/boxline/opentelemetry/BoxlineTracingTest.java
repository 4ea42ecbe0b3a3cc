package io.boxline.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.RetryPolicy;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class BoxlineTracingTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TopicName TOPIC = TopicName.of("acme", "orders");

  private InMemorySpanExporter exporter;
  private SdkTracerProvider provider;
  private OpenTelemetrySdk otel;
  private Tracer tracer;

  @BeforeEach
  void sdk() {
    exporter = InMemorySpanExporter.create();
    provider =
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
    tracer = otel.getTracer("test");
  }

  @AfterEach
  void closeSdk() {
    provider.close();
  }

  @Test
  void theHandlerRunsInAChildOfTheProducersSpan() {
    try (TestDatabase db = TestDatabase.create("otelchild")) {
      BoxlineTracing tracing = BoxlineTracing.create(otel);
      Boxline boxline = db.boxline(b -> b.publishInterceptor(tracing.publishInterceptor()));
      setUp(boxline);

      Span producer = tracer.spanBuilder("checkout").startSpan();
      try (Scope ignored = producer.makeCurrent()) {
        publish(boxline, "k1");
      } finally {
        producer.end();
      }
      List<String> traceInHandler = new CopyOnWriteArrayList<>();
      List<Map<String, String>> headers = new CopyOnWriteArrayList<>();
      boxline
          .consumer("billing")
          .handler(
              tracing.handler(
                  "billing",
                  e -> {
                    headers.add(e.headers());
                    traceInHandler.add(Span.current().getSpanContext().getTraceId());
                  }))
          .start();
      SpanData consumer = awaitSpan(s -> s.getKind() == SpanKind.CONSUMER);

      String traceId = producer.getSpanContext().getTraceId();
      assertThat(consumer.getTraceId()).isEqualTo(traceId);
      assertThat(consumer.getParentSpanId()).isEqualTo(producer.getSpanContext().getSpanId());
      assertThat(traceInHandler).containsExactly(traceId);
      assertThat(headers.get(0))
          .containsEntry(
              "traceparent", "00-" + traceId + "-" + producer.getSpanContext().getSpanId() + "-01");
      assertThat(consumer.getName()).isEqualTo("process acme/orders");
      assertThat(consumer.getAttributes().get(BoxlineTracing.SYSTEM)).isEqualTo("boxline");
      assertThat(consumer.getAttributes().get(BoxlineTracing.DESTINATION)).isEqualTo("acme/orders");
      assertThat(consumer.getAttributes().get(BoxlineTracing.GROUP)).isEqualTo("billing");
      assertThat(consumer.getAttributes().get(BoxlineTracing.EVENT_TYPE)).isEqualTo("order.placed");
      assertThat(consumer.getAttributes().get(BoxlineTracing.SEQUENCE)).isEqualTo(1L);
      assertThat(consumer.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }
  }

  @Test
  void linkModeStartsANewTraceThatLinksToTheProducer() {
    try (TestDatabase db = TestDatabase.create("otellink")) {
      BoxlineTracing tracing =
          BoxlineTracing.builder(otel).producerContext(BoxlineTracing.ProducerContext.LINK).build();
      Boxline boxline = db.boxline(b -> b.publishInterceptor(tracing.publishInterceptor()));
      setUp(boxline);
      Span producer = tracer.spanBuilder("checkout").startSpan();
      try (Scope ignored = producer.makeCurrent()) {
        publish(boxline, "k1");
      } finally {
        producer.end();
      }
      boxline.consumer("billing").handler(tracing.handler("billing", e -> {})).start();
      SpanData consumer = awaitSpan(s -> s.getKind() == SpanKind.CONSUMER);

      assertThat(consumer.getTraceId()).isNotEqualTo(producer.getSpanContext().getTraceId());
      assertThat(consumer.getParentSpanContext().isValid()).isFalse();
      assertThat(consumer.getLinks()).hasSize(1);
      assertThat(consumer.getLinks().get(0).getSpanContext().getTraceId())
          .isEqualTo(producer.getSpanContext().getTraceId());
      assertThat(consumer.getLinks().get(0).getSpanContext().getSpanId())
          .isEqualTo(producer.getSpanContext().getSpanId());
    }
  }

  @Test
  void withoutACurrentSpanNoHeaderIsAddedAndTheConsumerSpanIsARoot() {
    try (TestDatabase db = TestDatabase.create("otelnone")) {
      BoxlineTracing tracing = BoxlineTracing.create(otel);
      Boxline boxline = db.boxline(b -> b.publishInterceptor(tracing.publishInterceptor()));
      setUp(boxline);
      publish(boxline, "k1");
      List<Map<String, String>> headers = new CopyOnWriteArrayList<>();
      boxline
          .consumer("billing")
          .handler(tracing.handler("billing", e -> headers.add(e.headers())))
          .start();
      SpanData consumer = awaitSpan(s -> s.getKind() == SpanKind.CONSUMER);
      assertThat(headers).hasSize(1);
      assertThat(headers.get(0)).doesNotContainKeys("traceparent", "tracestate");
      assertThat(consumer.getParentSpanContext().isValid()).isFalse();
    }
  }

  @Test
  void aFailedAttemptIsAnErrorSpanAndTheRetryStaysInTheProducersTrace() {
    try (TestDatabase db = TestDatabase.create("otelretry")) {
      BoxlineTracing tracing = BoxlineTracing.create(otel);
      Boxline boxline = db.boxline(b -> b.publishInterceptor(tracing.publishInterceptor()));
      setUp(boxline);
      Span producer = tracer.spanBuilder("checkout").startSpan();
      try (Scope ignored = producer.makeCurrent()) {
        publish(boxline, "k1");
      } finally {
        producer.end();
      }
      AtomicInteger attempts = new AtomicInteger();
      boxline
          .consumer("billing")
          .retryPolicy(RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20)))
          .handler(
              tracing.handler(
                  "billing",
                  e -> {
                    if (attempts.incrementAndGet() == 1) {
                      throw new IllegalStateException("first attempt fails (expected)");
                    }
                  }))
          .start();
      Await.until(WAIT, "two consumer spans", () -> consumerSpans().size(), n -> n == 2);
      List<SpanData> spans = consumerSpans();
      assertThat(spans)
          .extracting(SpanData::getTraceId)
          .containsOnly(producer.getSpanContext().getTraceId());
      assertThat(spans)
          .extracting(s -> s.getStatus().getStatusCode())
          .containsExactlyInAnyOrder(StatusCode.ERROR, StatusCode.UNSET);
      SpanData failed =
          spans.stream()
              .filter(s -> s.getStatus().getStatusCode() == StatusCode.ERROR)
              .findFirst()
              .get();
      assertThat(failed.getEvents()).extracting(e -> e.getName()).contains("exception");
    }
  }

  @Test
  void aBatchSpanLinksToEveryProducer() {
    try (TestDatabase db = TestDatabase.create("otelbatch")) {
      BoxlineTracing tracing = BoxlineTracing.create(otel);
      Boxline boxline = db.boxline(b -> b.publishInterceptor(tracing.publishInterceptor()));
      boxline.admin().createNamespace(NamespacePath.of("acme"));
      boxline.admin().createTopic(TOPIC, 1);
      boxline
          .admin()
          .createSubscription(
              SubscriptionSpec.of("billing", TOPIC).startAt(StartPosition.earliest()));
      Map<String, String> producers = new ConcurrentHashMap<>();
      for (String key : List.of("a", "b", "c")) {
        Span producer = tracer.spanBuilder("checkout-" + key).startSpan();
        try (Scope ignored = producer.makeCurrent()) {
          publish(boxline, key);
        } finally {
          producer.end();
        }
        producers.put(
            producer.getSpanContext().getSpanId(), producer.getSpanContext().getTraceId());
      }
      AtomicInteger handled = new AtomicInteger();
      boxline
          .consumer("billing")
          .batchSize(10)
          .batchHandler(tracing.batchHandler("billing", batch -> handled.addAndGet(batch.size())))
          .start();
      Await.until(WAIT, "3 events handled", () -> handled.get() == 3);
      Await.until(WAIT, "batch spans ended", () -> linksOfConsumerSpans().size(), n -> n == 3);
      assertThat(linksOfConsumerSpans()).isEqualTo(producers);
    }
  }

  // ------------------------------------------------------------------ helpers

  private static void setUp(Boxline boxline) {
    boxline.admin().createNamespace(NamespacePath.of("acme"));
    boxline.admin().createTopic(TOPIC, 2);
    boxline
        .admin()
        .createSubscription(
            SubscriptionSpec.of("billing", TOPIC).startAt(StartPosition.earliest()));
  }

  private static void publish(Boxline boxline, String key) {
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publish(
                    tx,
                    OutgoingEvent.builder(TOPIC)
                        .type("order.placed")
                        .key(key)
                        .payload("{}".getBytes(StandardCharsets.UTF_8))
                        .build()));
  }

  private List<SpanData> consumerSpans() {
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getKind() == SpanKind.CONSUMER)
        .toList();
  }

  /** Span id → trace id of every span the consumer spans link to. */
  private Map<String, String> linksOfConsumerSpans() {
    return consumerSpans().stream()
        .flatMap(s -> s.getLinks().stream())
        .collect(
            Collectors.toMap(
                l -> l.getSpanContext().getSpanId(), l -> l.getSpanContext().getTraceId()));
  }

  private SpanData awaitSpan(Predicate<SpanData> which) {
    Await.until(
        WAIT, "a finished span", () -> exporter.getFinishedSpanItems().stream().anyMatch(which));
    return exporter.getFinishedSpanItems().stream().filter(which).findFirst().get();
  }
}
