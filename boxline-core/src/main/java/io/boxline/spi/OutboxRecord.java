package io.boxline.spi;

import java.util.Map;
import java.util.UUID;

/**
 * One event to append to the outbox. {@code partition} is -1 when the store should let the
 * sequencer assign it (the SQL-level publish path); the Java publisher always assigns it.
 */
public record OutboxRecord(
    UUID eventId,
    long topicId,
    int partition,
    String key,
    String type,
    String source,
    String contentType,
    byte[] payload,
    Map<String, String> headers,
    String idempotencyKey,
    java.time.Instant deliverAt) {

  /** This record without its idempotency key (for a key claimed already). */
  public OutboxRecord withoutIdempotencyKey() {
    return idempotencyKey == null
        ? this
        : new OutboxRecord(
            eventId,
            topicId,
            partition,
            key,
            type,
            source,
            contentType,
            payload,
            headers,
            null,
            deliverAt);
  }
}
