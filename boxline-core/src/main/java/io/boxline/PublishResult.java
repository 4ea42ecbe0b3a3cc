package io.boxline;

import java.util.UUID;

/**
 * What a publish call did.
 *
 * @param eventId the stored event's id; for a duplicate, the id of the event stored first
 * @param topic the topic
 * @param partition the partition the event was assigned to
 * @param duplicate true when the idempotency key was already used on this topic and nothing new was
 *     stored
 */
public record PublishResult(UUID eventId, TopicName topic, int partition, boolean duplicate) {}
