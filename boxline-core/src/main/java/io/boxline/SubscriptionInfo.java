package io.boxline;

import java.time.Instant;
import java.util.List;

/**
 * A subscription as stored.
 *
 * @param start where it started reading at creation, or null for a subscription created before
 *     Boxline stored it
 * @param lastActive when a consumer of it was last seen live (checked at every retention run, so up
 *     to one retention interval old), or its creation time if none ever was; retention stops
 *     waiting for it once this is older than the topic's {@link RetentionPolicy#abandonAfter()}
 */
public record SubscriptionInfo(
    String name,
    long id,
    List<TopicName> topics,
    Instant createdAt,
    StartPosition start,
    Instant lastActive) {}
