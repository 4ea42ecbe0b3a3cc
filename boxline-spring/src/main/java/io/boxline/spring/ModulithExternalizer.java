package io.boxline.spring;

import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadCodec;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import java.util.concurrent.CompletableFuture;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.support.DelegatingEventExternalizer;

/**
 * Boxline as the target of Spring Modulith's event externalization: an event Modulith selects
 * ({@code @Externalized("acme/shop/orders::#{customer()}")}) is published to the topic its routing
 * target names, with the routing key as the event's key, in a transaction of its own once the
 * publishing transaction committed; Modulith's publication registry completes the publication when
 * that transaction has committed, and re-submits it otherwise. The payload is encoded with the
 * class's registered {@link EventType}'s codec and type name, else as JSON under the class's simple
 * name.
 */
public final class ModulithExternalizer {
  private ModulithExternalizer() {}

  /** The externalizer bean for Modulith's configuration, publishing through {@code outbox}. */
  public static DelegatingEventExternalizer create(
      EventExternalizationConfiguration configuration, BoxlineOutbox outbox, EventTypes types) {
    return new DelegatingEventExternalizer(
        configuration,
        (target, payload) -> {
          OutgoingEvent event = toEvent(target, payload, types);
          PublishResult r = outbox.inNewTransaction(() -> outbox.publish(event));
          return CompletableFuture.completedFuture(r);
        });
  }

  private static final org.springframework.expression.ExpressionParser SPEL =
      new org.springframework.expression.spel.standard.SpelExpressionParser();

  /**
   * The routing key, a SpEL template ({@code #{customer()}}) evaluated on the event if it is one.
   */
  private static String key(RoutingTarget target, Object payload) {
    String key = target.getKey();
    if (key == null || !target.hasKeyExpression()) {
      return key;
    }
    return SPEL.parseExpression(
            key, org.springframework.expression.ParserContext.TEMPLATE_EXPRESSION)
        .getValue(
            new org.springframework.expression.spel.support.StandardEvaluationContext(payload),
            String.class);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static OutgoingEvent toEvent(RoutingTarget target, Object payload, EventTypes types) {
    String type = payload.getClass().getSimpleName();
    PayloadCodec codec = PayloadCodec.json();
    try {
      EventType registered = types.forClass(payload.getClass());
      type = registered.type();
      codec = registered.codec();
    } catch (RuntimeException notRegistered) {
      // JSON under the class name
    }
    return OutgoingEvent.builder(TopicName.parse(target.getTarget()))
        .type(type)
        .key(key(target, payload))
        .contentType(codec.contentType())
        .payload(codec.encode(payload))
        .build();
  }
}
