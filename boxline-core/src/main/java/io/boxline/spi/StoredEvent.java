package io.boxline.spi;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** An event read from the log. */
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
    Instant deliverAt) {

  /** This event at {@code sequence} (the sequencer numbers an outbox row it read). */
  public StoredEvent withSequence(long sequence) {
    return new StoredEvent(
        id, sequence, key, type, source, contentType, payload, headers, createdAt, deliverAt);
  }
}
