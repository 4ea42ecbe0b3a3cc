package io.boxline.spi;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * An event read from the log.
 *
 * <p>A store never fails a read because of what one row holds: a row it cannot decode (headers that
 * are not a JSON object of strings, an empty type; written by hand, by a trigger or by another
 * version) comes back with {@code malformed} saying what is wrong, and the consumer fails each
 * attempt at it, so that it is dead-lettered under the retry policy while the rest of the partition
 * flows.
 *
 * @param headers the decoded headers (empty when {@code malformed} is set)
 * @param malformed why the row cannot be delivered as it is, or null when it is well formed
 */
public record StoredEvent(
    UUID id,
    long sequence,
    String key,
    String type,
    String source,
    String contentType,
    byte[] payload,
    Map<String, String> headers,
    Instant createdAt,
    Instant deliverAt,
    String malformed) {

  /** A well-formed event. */
  public StoredEvent(
      UUID id,
      long sequence,
      String key,
      String type,
      String source,
      String contentType,
      byte[] payload,
      Map<String, String> headers,
      Instant createdAt,
      Instant deliverAt) {
    this(
        id, sequence, key, type, source, contentType, payload, headers, createdAt, deliverAt, null);
  }

  /** This event at {@code sequence} (the sequencer numbers an outbox row it read). */
  /** The event as handlers see it, in {@code topic}'s {@code partition}. */
  public io.boxline.Event toEvent(io.boxline.TopicName topic, int partition) {
    return new io.boxline.Event(
        id,
        topic,
        partition,
        sequence,
        key,
        type,
        source,
        contentType,
        payload,
        headers,
        createdAt,
        deliverAt);
  }

  public StoredEvent withSequence(long sequence) {
    return new StoredEvent(
        id,
        sequence,
        key,
        type,
        source,
        contentType,
        payload,
        headers,
        createdAt,
        deliverAt,
        malformed);
  }
}
