package io.boxline.spi;

import java.time.Instant;
import java.util.UUID;

/**
 * What became of one event appended straight to the log ({@link Store#appendToLog}): its sequence
 * and creation time, or, when its idempotency key was already taken in the topic, the event that
 * holds the key ({@code existingEventId}; nothing was written and {@code sequence} is 0).
 */
public record LogAppend(UUID existingEventId, long sequence, Instant createdAt) {}
