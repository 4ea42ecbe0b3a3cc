package io.boxline.spi;

import java.time.Instant;
import java.util.UUID;

/**
 * An event set aside by a batch commit.
 *
 * @param state RETRY (try again at {@code nextAttemptAt}), WAITING (behind an earlier parked event
 *     of its key), or DEAD
 */
public record Park(
    long seq,
    UUID eventId,
    String key,
    String type,
    ParkState state,
    int attempts,
    Instant nextAttemptAt,
    String lastError) {}
