package io.boxline.opentelemetry;

import io.boxline.BatchHandler;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.HandlerDecision;
import io.boxline.PublishInterceptor;
import io.boxline.TransactionalHandler;
import io.boxline.ValidationException;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * OpenTelemetry tracing for Boxline: the producer's trace context travels in each event's headers
 * ({@code traceparent}, {@code tracestate}) and the handler runs in a consumer span that continues
 * it.
 *
 * <pre>{@code
 * BoxlineTracing tracing = BoxlineTracing.create(openTelemetry);
 * Boxline boxline = Boxline.builder()
 *     .store(store)
 *     .publishInterceptor(tracing.publishInterceptor())   // trace context into event headers
 *     .build()
 *     .start();
 * boxline.consumer("billing")
 *     .handler(tracing.handler("billing", event -> billing.charge(event)))   // runs in a span
 *     .start();
 * }</pre>
 *
 * <p>The handler is wrapped, rather than traced through {@code ConsumerHooks}, so that the span is
 * current on the handler's thread exactly while the handler runs, and ends however it ends. Relays
 * copy event headers to the broker message, so the same trace continues past a Kafka, RabbitMQ or
 * NATS hop.
 */
public final class BoxlineTracing {
  /** How a consumer span relates to the span that published the event. */
  public enum ProducerContext {
    /** The consumer span is a child of the producer's span: one trace end to end (default). */
    CHILD,
    /**
     * The consumer span starts a trace of its own and links to the producer's span: for long-lived
     * or fanned-out flows where one trace per publish would grow without bound.
     */
    LINK
  }

  static final String INSTRUMENTATION = "io.boxline.opentelemetry";
  static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
  static final AttributeKey<String> OPERATION = AttributeKey.stringKey("messaging.operation.type");
  static final AttributeKey<String> DESTINATION =
      AttributeKey.stringKey("messaging.destination.name");
  static final AttributeKey<String> PARTITION =
      AttributeKey.stringKey("messaging.destination.partition.id");
  static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
  static final AttributeKey<String> GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
  static final AttributeKey<Long> BATCH_COUNT =
      AttributeKey.longKey("messaging.batch.message_count");
  static final AttributeKey<String> EVENT_TYPE = AttributeKey.stringKey("boxline.event.type");
  static final AttributeKey<Long> SEQUENCE = AttributeKey.longKey("boxline.event.sequence");
  static final AttributeKey<String> DECISION = AttributeKey.stringKey("boxline.decision");

  private static final TextMapSetter<Map<String, String>> SETTER = Map::put;

  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  private final Tracer tracer;
  private final TextMapPropagator propagator;
  private final ProducerContext producerContext;
  private final PublishInterceptor interceptor;

  private BoxlineTracing(Builder b) {
    this.tracer = b.openTelemetry.getTracer(INSTRUMENTATION);
    this.propagator = b.propagator;
    this.producerContext = b.producerContext;
    this.interceptor = this::inject;
  }

  /** Tracing with the defaults: W3C trace context, consumer spans children of the producer's. */
  public static BoxlineTracing create(OpenTelemetry openTelemetry) {
    return builder(openTelemetry).build();
  }

  public static Builder builder(OpenTelemetry openTelemetry) {
    return new Builder(openTelemetry);
  }

  /**
   * Register with {@code Boxline.builder().publishInterceptor(...)}: writes the trace context
   * current in the publishing thread into each event's headers. Without a valid current span
   * nothing is added, and headers the caller set itself (an event forwarded with its original
   * {@code traceparent}) are kept.
   */
  public PublishInterceptor publishInterceptor() {
    return interceptor;
  }

  private void inject(io.boxline.OutgoingEvent event, Map<String, String> headers) {
    Context current = Context.current();
    if (!Span.fromContext(current).getSpanContext().isValid()) {
      return;
    }
    for (String field : propagator.fields()) {
      if (headers.containsKey(field)) {
        return; // the caller carries a context of its own
      }
    }
    propagator.inject(current, headers, SETTER);
  }

  /** The context the event was published in (its producer's span), or the current one if none. */
  public Context extract(Event event) {
    return propagator.extract(Context.current(), event.headers(), GETTER);
  }

  /** Runs {@code handler} in a consumer span for each event of {@code subscription}. */
  public EventHandler handler(String subscription, EventHandler handler) {
    Objects.requireNonNull(subscription, "subscription");
    Objects.requireNonNull(handler, "handler");
    return event -> {
      Span span = start(subscription, event);
      try (Scope ignored = span.makeCurrent()) {
        handler.handle(event);
      } catch (RuntimeException e) {
        failed(span, e);
        throw e;
      } finally {
        span.end();
      }
    };
  }

  /** Runs {@code handler} in a consumer span, with the handler's transaction, for each event. */
  public TransactionalHandler transactionalHandler(
      String subscription, TransactionalHandler handler) {
    Objects.requireNonNull(subscription, "subscription");
    Objects.requireNonNull(handler, "handler");
    return (event, tx) -> {
      Span span = start(subscription, event);
      try (Scope ignored = span.makeCurrent()) {
        handler.handle(event, tx);
      } catch (RuntimeException | java.sql.SQLException e) {
        failed(span, e);
        throw e;
      } finally {
        span.end();
      }
    };
  }

  /**
   * Runs {@code handler} in one consumer span per batch, which links to the producer span of every
   * event in it (a batch has many parents, so it is never a child of one of them).
   */
  public BatchHandler batchHandler(String subscription, BatchHandler handler) {
    Objects.requireNonNull(subscription, "subscription");
    Objects.requireNonNull(handler, "handler");
    return batch -> {
      if (batch.isEmpty()) {
        handler.handle(batch);
        return;
      }
      Event first = batch.get(0);
      SpanBuilder b =
          tracer
              .spanBuilder("process " + first.topic())
              .setSpanKind(SpanKind.CONSUMER)
              .setParent(Context.current())
              .setAttribute(SYSTEM, "boxline")
              .setAttribute(OPERATION, "process")
              .setAttribute(DESTINATION, first.topic().toString())
              .setAttribute(GROUP, subscription)
              .setAttribute(BATCH_COUNT, (long) batch.size());
      for (Event e : batch) {
        SpanContext producer = Span.fromContext(extract(e)).getSpanContext();
        if (producer.isValid()) {
          b.addLink(producer);
        }
      }
      Span span = b.startSpan();
      try (Scope ignored = span.makeCurrent()) {
        handler.handle(batch);
      } catch (RuntimeException e) {
        failed(span, e);
        throw e;
      } finally {
        span.end();
      }
    };
  }

  private Span start(String subscription, Event event) {
    Context producer = extract(event);
    SpanContext producerSpan = Span.fromContext(producer).getSpanContext();
    SpanBuilder b =
        tracer
            .spanBuilder("process " + event.topic())
            .setSpanKind(SpanKind.CONSUMER)
            .setAttribute(SYSTEM, "boxline")
            .setAttribute(OPERATION, "process")
            .setAttribute(DESTINATION, event.topic().toString())
            .setAttribute(PARTITION, Integer.toString(event.partition()))
            .setAttribute(MESSAGE_ID, event.id().toString())
            .setAttribute(GROUP, subscription)
            .setAttribute(EVENT_TYPE, event.type())
            .setAttribute(SEQUENCE, event.sequence());
    if (producerContext == ProducerContext.CHILD) {
      b.setParent(producer);
    } else {
      b.setParent(Context.current());
      if (producerSpan.isValid()) {
        b.addLink(producerSpan);
      }
    }
    return b.startSpan();
  }

  private static void failed(Span span, Exception e) {
    if (e instanceof HandlerDecision) {
      // The handler decided (retry later, dead-letter, ignore); nothing failed.
      span.setAttribute(DECISION, ((HandlerDecision) e).kind().name());
      if (((HandlerDecision) e).kind() == HandlerDecision.Kind.DEAD_LETTER) {
        span.setStatus(StatusCode.ERROR, e.getMessage());
      }
      return;
    }
    span.recordException(e);
    span.setStatus(StatusCode.ERROR, e.getClass().getSimpleName());
  }

  /** Settings for {@link BoxlineTracing}. */
  public static final class Builder {
    private final OpenTelemetry openTelemetry;
    private TextMapPropagator propagator = W3CTraceContextPropagator.getInstance();
    private ProducerContext producerContext = ProducerContext.CHILD;

    private Builder(OpenTelemetry openTelemetry) {
      this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
    }

    /**
     * How a consumer span relates to the producer's span (default {@link ProducerContext#CHILD}).
     */
    public Builder producerContext(ProducerContext relation) {
      this.producerContext = Objects.requireNonNull(relation, "relation");
      return this;
    }

    /**
     * The propagator that writes and reads the headers (default: W3C trace context, headers {@code
     * traceparent} and {@code tracestate}, which relays copy to broker messages). Use {@code
     * openTelemetry.getPropagators().getTextMapPropagator()} to add baggage and other formats.
     */
    public Builder propagator(TextMapPropagator propagator) {
      this.propagator = Objects.requireNonNull(propagator, "propagator");
      return this;
    }

    public BoxlineTracing build() {
      List<String> fields = List.copyOf(propagator.fields());
      if (fields.isEmpty()) {
        throw new ValidationException(
            "the propagator writes no header fields (a no-op propagator?); use the default W3C"
                + " trace context propagator or a configured one");
      }
      return new BoxlineTracing(this);
    }
  }
}
