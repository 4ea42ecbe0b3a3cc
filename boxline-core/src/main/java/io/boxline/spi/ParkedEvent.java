package io.boxline.spi;

import java.time.Instant;

/** A parked event due for another attempt: the oldest live parked event of its key. */
public record ParkedEvent(StoredEvent event, int attempts, Instant firstFailedAt) {}
