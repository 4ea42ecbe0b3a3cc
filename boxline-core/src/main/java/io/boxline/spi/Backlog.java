package io.boxline.spi;

/**
 * A partition of a subscription with work: events past the cursor, or parked events due for a
 * retry.
 *
 * @param lastSequence the partition's newest sequence
 * @param retryDue whether parked events are due
 */
public record Backlog(long topicId, int partition, long lastSequence, boolean retryDue) {}
