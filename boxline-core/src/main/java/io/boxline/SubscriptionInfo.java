package io.boxline;

import java.time.Instant;
import java.util.List;

/** A subscription as stored. */
public record SubscriptionInfo(String name, long id, List<TopicName> topics, Instant createdAt) {}
