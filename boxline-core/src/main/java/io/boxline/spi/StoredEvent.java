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
    Instant deliverAt) {}
