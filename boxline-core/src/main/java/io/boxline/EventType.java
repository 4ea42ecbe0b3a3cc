package io.boxline;

import java.util.Objects;
import java.util.function.Function;

/**
 * How a Java type is published: its event type name, topic, key function and codec. Register
 * instances in {@link EventTypes}.
 *
 * @param <T> the Java type
 */
public final class EventType<T> {
  private final Class<T> javaType;
  private final String type;
  private final TopicName topic;
  private final Function<? super T, String> key;
  private final PayloadCodec codec;
  private final String source;

  private EventType(
      Class<T> javaType,
      String type,
      TopicName topic,
      Function<? super T, String> key,
      PayloadCodec codec,
      String source) {
    this.javaType = javaType;
    this.type = type;
    this.topic = topic;
    this.key = key;
    this.codec = codec;
    this.source = source;
  }

  /** Starts a definition: {@code EventType.of(OrderPlaced.class, "order.placed", ORDERS)}. */
  public static <T> EventType<T> of(Class<T> javaType, String type, TopicName topic) {
    Objects.requireNonNull(javaType, "javaType");
    Objects.requireNonNull(topic, "topic");
    if (type == null || type.isBlank()) {
      throw new ValidationException(
          "event type name for " + javaType.getName() + " must not be blank");
    }
    return new EventType<>(javaType, type, topic, null, PayloadCodec.json(), null);
  }

  /** The function that derives the ordering key from an event (default: no key). */
  public EventType<T> key(Function<? super T, String> key) {
    return new EventType<>(javaType, type, topic, key, codec, source);
  }

  /**
   * How events of this type are encoded and decoded (default {@link PayloadCodec#json()}: the JSON
   * codec module on the class path), e.g. {@code JacksonCodec.create(objectMapper)} from {@code
   * boxline-jackson}.
   */
  public EventType<T> codec(PayloadCodec codec) {
    return new EventType<>(javaType, type, topic, key, Objects.requireNonNull(codec), source);
  }

  /** The CloudEvents {@code source} written on these events. */
  public EventType<T> source(String source) {
    return new EventType<>(javaType, type, topic, key, codec, source);
  }

  public Class<T> javaType() {
    return javaType;
  }

  public String type() {
    return type;
  }

  public TopicName topic() {
    return topic;
  }

  public PayloadCodec codec() {
    return codec;
  }

  public String source() {
    return source;
  }

  /** The key for {@code value}, or null when no key function is set. */
  public String keyOf(T value) {
    return key == null ? null : key.apply(value);
  }
}
