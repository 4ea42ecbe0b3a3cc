package io.boxline.spring;

import io.boxline.ConsumerBuilder;

/**
 * Adjusts the consumer {@link BoxlineListenerRegistrar} builds for a listener bean, after the
 * defaults and the annotation's attributes and before it starts: a retry policy with backoff, a
 * retry policy per event type, an inbox, hooks, a weight. Beans of this type are applied in their
 * order.
 */
@FunctionalInterface
public interface ConsumerCustomizer {
  void customize(String subscription, ConsumerBuilder consumer);
}
