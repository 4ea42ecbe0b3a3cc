package io.boxline;

import java.util.Map;

/**
 * Adds headers to every event a {@link Publisher} writes, for example the W3C trace context of the
 * caller's current span ({@code boxline-opentelemetry}), a tenant or a correlation id. Register
 * with {@link Boxline.Builder#publishInterceptor(PublishInterceptor)}; several run in registration
 * order.
 *
 * <p>Called once per event, in the publishing thread, before the event is written in the caller's
 * transaction, so thread-local context (the current span, a request scope) is visible. Events
 * published with SQL ({@code boxline.publish(...)}) do not pass through it. An exception thrown
 * here reaches the caller of {@code publish} and nothing of that call is written.
 */
@FunctionalInterface
public interface PublishInterceptor {
  /**
   * @param event the event as the caller built it; {@link OutgoingEvent#headers()} holds the
   *     headers the caller set
   * @param headers a mutable copy of those headers (and of what earlier interceptors added); what
   *     it holds afterwards is written. Names and values must not be null.
   */
  void beforePublish(OutgoingEvent event, Map<String, String> headers);
}
