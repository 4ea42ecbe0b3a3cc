package io.boxline;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Routes events to handlers by event type, decoding each payload into its registered Java type. An
 * event whose type has no handler is dead-lettered (never dropped silently) unless {@link
 * Builder#otherwise} handles it: {@code otherwise(e -> {})} ignores unknown types, and throwing
 * {@link HandlerDecision#retryIn} waits for a deployment that knows them.
 */
public final class TypedHandlers implements EventHandler {
  private final EventTypes types;
  private final Map<String, Consumer<Object>> handlers;
  private final EventHandler otherwise;

  private TypedHandlers(
      EventTypes types, Map<String, Consumer<Object>> handlers, EventHandler otherwise) {
    this.types = types;
    this.handlers = handlers;
    this.otherwise = otherwise;
  }

  public static Builder builder(EventTypes types) {
    return new Builder(types);
  }

  @Override
  public void handle(Event event) {
    Consumer<Object> h = handlers.get(event.type());
    if (h != null) {
      h.accept(event.payloadAs(types));
    } else if (otherwise != null) {
      otherwise.handle(event);
    } else {
      // Never dropped silently: dead-lettered, where it can be found and redriven once a handler
      // exists.
      throw HandlerDecision.deadLetter(
          "no handler for event type '"
              + event.type()
              + "'; register one with on(...) or otherwise(...)");
    }
  }

  /** Builder for {@link TypedHandlers}. */
  public static final class Builder {
    private final EventTypes types;
    private final Map<String, Consumer<Object>> handlers = new LinkedHashMap<>();
    private EventHandler otherwise;

    private Builder(EventTypes types) {
      this.types = types;
    }

    /** Handles events registered for {@code javaType}, decoded. */
    @SuppressWarnings("unchecked")
    public <T> Builder on(Class<T> javaType, Consumer<? super T> handler) {
      String name = types.forClass(javaType).type();
      if (handlers.putIfAbsent(name, v -> handler.accept((T) v)) != null) {
        throw new ValidationException(
            "a handler for event type '" + name + "' is already registered");
      }
      return this;
    }

    /** Handles events of every type that has no typed handler. */
    public Builder otherwise(EventHandler handler) {
      this.otherwise = handler;
      return this;
    }

    public TypedHandlers build() {
      return new TypedHandlers(types, Map.copyOf(handlers), otherwise);
    }
  }
}
