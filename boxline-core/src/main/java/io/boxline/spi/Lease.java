package io.boxline.spi;

import java.time.Instant;

/**
 * A held lease on one partition of a group.
 *
 * @param topicId topic
 * @param partition partition
 * @param owner member id
 * @param epoch bumped by every acquisition; cursor commits are checked against it
 * @param releasing true while the owner finishes its in-flight batch before giving the lease up
 * @param since when the lease was acquired, or when it started releasing
 */
public record Lease(
    long topicId, int partition, String owner, long epoch, boolean releasing, Instant since) {}
