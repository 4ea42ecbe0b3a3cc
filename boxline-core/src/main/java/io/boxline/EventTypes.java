package io.boxline;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Registry of typed events: Java type ↔ event type name, topic, key function and codec. Immutable.
 */
public final class EventTypes {
  private static final EventTypes EMPTY = new EventTypes(Map.of(), Map.of());

  private final Map<Class<?>, EventType<?>> byClass;
  private final Map<String, EventType<?>> byName;

  private EventTypes(Map<Class<?>, EventType<?>> byClass, Map<String, EventType<?>> byName) {
    this.byClass = byClass;
    this.byName = byName;
  }

  public static EventTypes empty() {
    return EMPTY;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * The registration for exactly this class, or for its nearest registered superclass or interface.
   */
  @SuppressWarnings("unchecked")
  public <T> EventType<T> forClass(Class<T> type) {
    EventType<?> found = byClass.get(type);
    if (found == null) {
      for (Map.Entry<Class<?>, EventType<?>> e : byClass.entrySet()) {
        if (e.getKey().isAssignableFrom(type)) {
          found = e.getValue();
          break;
        }
      }
    }
    if (found == null) {
      throw new ValidationException(
          "no event type is registered for "
              + type.getName()
              + "; register it with EventTypes.builder().register(EventType.of("
              + type.getSimpleName()
              + ".class, \"type.name\", topic)) or publish an OutgoingEvent");
    }
    return (EventType<T>) found;
  }

  public Optional<EventType<?>> forTypeName(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** The names of the registered types whose codec is {@code codec}, sorted. */
  java.util.List<String> typeNamesWithCodec(PayloadCodec codec) {
    return byName.values().stream()
        .filter(t -> t.codec() == codec)
        .map(EventType::type)
        .sorted()
        .toList();
  }

  /** Builder for {@link EventTypes}. */
  public static final class Builder {
    private final Map<Class<?>, EventType<?>> byClass = new LinkedHashMap<>();
    private final Map<String, EventType<?>> byName = new LinkedHashMap<>();

    public Builder register(EventType<?> type) {
      if (byClass.containsKey(type.javaType())) {
        throw new ValidationException(type.javaType().getName() + " is registered twice");
      }
      EventType<?> previous = byName.get(type.type());
      if (previous != null) {
        throw new ValidationException(
            "event type name '"
                + type.type()
                + "' is registered for both "
                + previous.javaType().getName()
                + " and "
                + type.javaType().getName());
      }
      byClass.put(type.javaType(), type);
      byName.put(type.type(), type);
      return this;
    }

    public EventTypes build() {
      return new EventTypes(Map.copyOf(byClass), Map.copyOf(byName));
    }
  }
}
