package io.boxline.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The core's publish interceptor contract, exercised with the tracing interceptor. */
class PublishInterceptorTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TopicName TOPIC = TopicName.of("acme", "orders");
  private static final String CALLER_PARENT =
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  @Test
  void interceptorsRunInOrderAndKeepTheCallersOwnTraceContext() throws Exception {
    try (TestDatabase db = TestDatabase.create("interceptors");
        SdkTracerProvider provider = SdkTracerProvider.builder().build()) {
      OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
      BoxlineTracing tracing = BoxlineTracing.create(otel);
      Boxline boxline =
          db.boxline(
              b ->
                  b.publishInterceptor((e, h) -> h.put("tenant", "acme"))
                      .publishInterceptor(tracing.publishInterceptor())
                      .publishInterceptor((e, h) -> h.put("seen", h.getOrDefault("tenant", "-"))));
      setUp(boxline);
      Span span = otel.getTracer("test").spanBuilder("caller").startSpan();
      try (Scope ignored = span.makeCurrent()) {
        publish(boxline, OutgoingEvent.builder(TOPIC).type("t").key("a").build());
        publish(
            boxline,
            OutgoingEvent.builder(TOPIC)
                .type("t")
                .key("b")
                .header("traceparent", CALLER_PARENT)
                .build());
      } finally {
        span.end();
      }
      List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
      boxline.consumer("s").handler(e -> seen.add(e.headers())).start();
      Await.until(WAIT, "both events handled", () -> seen.size() == 2);
      Map<String, String> first =
          seen.stream().filter(h -> !h.get("traceparent").equals(CALLER_PARENT)).findFirst().get();
      assertThat(first)
          .containsEntry("tenant", "acme")
          .containsEntry("seen", "acme")
          .containsEntry(
              "traceparent",
              "00-"
                  + span.getSpanContext().getTraceId()
                  + "-"
                  + span.getSpanContext().getSpanId()
                  + "-01");
      assertThat(seen).filteredOn(h -> h.get("traceparent").equals(CALLER_PARENT)).hasSize(1);
    }
  }

  @Test
  void aNullHeaderIsRejectedAndAnInterceptorsExceptionReachesTheCaller() throws Exception {
    try (TestDatabase db = TestDatabase.create("interceptorfail")) {
      Boxline nulls = db.boxline(b -> b.publishInterceptor((e, h) -> h.put("tenant", null)));
      setUp(nulls);
      assertThatThrownBy(
              () -> publish(nulls, OutgoingEvent.builder(TOPIC).type("t").key("a").build()))
          .isInstanceOf(ValidationException.class)
          .hasMessage(
              "a publish interceptor set header tenant = null on an event of topic 'acme/orders';"
                  + " header names and values must not be null");

      IllegalStateException boom = new IllegalStateException("no tenant in scope");
      Boxline failing =
          db.boxline(
              b ->
                  b.publishInterceptor(
                      (e, h) -> {
                        throw boom;
                      }));
      try (Connection tx = db.dataSource().getConnection()) {
        tx.setAutoCommit(false);
        assertThatThrownBy(
                () ->
                    failing
                        .publisher()
                        .publish(tx, OutgoingEvent.builder(TOPIC).type("t").key("a").build()))
            .isSameAs(boom);
        tx.commit();
      }
      assertThat(failing.admin().outboxBacklog().events()).isZero();
      assertThat(failing.admin().lag("s")).allSatisfy(l -> assertThat(l.lastSequence()).isZero());
    }
  }

  @Test
  void builderRejectsAPropagatorWithoutFields() {
    assertThatThrownBy(
            () ->
                BoxlineTracing.builder(io.opentelemetry.api.OpenTelemetry.noop())
                    .propagator(io.opentelemetry.context.propagation.TextMapPropagator.noop())
                    .build())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "the propagator writes no header fields (a no-op propagator?); use the default W3C"
                + " trace context propagator or a configured one");
  }

  private static void setUp(Boxline boxline) {
    boxline.admin().createNamespace(NamespacePath.of("acme"));
    boxline.admin().createTopic(TOPIC, 2);
    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of("s", TOPIC).startAt(StartPosition.earliest()));
  }

  private static void publish(Boxline boxline, OutgoingEvent event) {
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, event));
  }
}
