package io.boxline;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * An event as delivered to a handler: its identity (id, topic, partition, sequence) and content.
 *
 * @param id stable id, the same on every delivery (use it to de-duplicate)
 * @param topic the topic
 * @param partition the partition
 * @param sequence gap-free position in the partition, starting at 1
 * @param key ordering key or null
 * @param type event type name
 * @param source CloudEvents source, or null
 * @param contentType payload media type
 * @param payload payload bytes (do not modify)
 * @param headers headers, including trace context when present
 * @param createdAt when the producer's transaction wrote it (database clock)
 * @param deliverAt when it is to be delivered, or null for at once (delayed delivery)
 */
public record Event(
    UUID id,
    TopicName topic,
    int partition,
    long sequence,
    String key,
    String type,
    String source,
    String contentType,
    byte[] payload,
    Map<String, String> headers,
    Instant createdAt,
    Instant deliverAt) {

  /**
   * Decodes the payload with the default JSON codec, {@link PayloadCodec#json()} (the codec module
   * on the class path: {@code boxline-jackson} or {@code boxline-jackson3}).
   */
  public <T> T payloadAs(Class<T> javaType) {
    return PayloadCodec.json().decode(payload, javaType);
  }

  /** Decodes the payload with the codec and Java type registered for this event's type. */
  public Object payloadAs(EventTypes types) {
    EventType<?> t =
        types
            .forTypeName(type)
            .orElseThrow(
                () ->
                    new ValidationException(
                        "no Java type is registered for event type '" + type + "'"));
    return t.codec().decode(payload, t.javaType());
  }

  @Override
  public String toString() {
    return "Event[" + topic + "#" + partition + "@" + sequence + " " + type + " id=" + id + " key="
        + key + "]";
  }
}
