package io.boxline.spring;

import io.boxline.EventTypes;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;

/**
 * Writes objects the application publishes with Spring's {@code ApplicationEventPublisher} to
 * Boxline when their class is a registered {@code EventType}, in the publishing transaction (the
 * listener runs on the publishing thread): {@code publisher.publishEvent(new OrderPlaced(…))}
 * inside a {@code @Transactional} method commits or rolls back with it. Other objects pass by.
 * Outside a transaction the publish fails as {@link BoxlineOutbox#publish} does.
 */
public final class ApplicationEventBridge
    implements ApplicationListener<PayloadApplicationEvent<?>> {
  private final BoxlineOutbox outbox;
  private final EventTypes types;
  private final Map<Class<?>, Boolean> registered = new ConcurrentHashMap<>();

  public ApplicationEventBridge(BoxlineOutbox outbox, EventTypes types) {
    this.outbox = Objects.requireNonNull(outbox, "outbox");
    this.types = Objects.requireNonNull(types, "types");
  }

  @Override
  public void onApplicationEvent(PayloadApplicationEvent<?> event) {
    Object payload = event.getPayload();
    if (registered.computeIfAbsent(payload.getClass(), this::isRegistered)) {
      outbox.publish(payload);
    }
  }

  private boolean isRegistered(Class<?> type) {
    try {
      types.forClass(type);
      return true;
    } catch (RuntimeException notRegistered) {
      return false;
    }
  }
}
