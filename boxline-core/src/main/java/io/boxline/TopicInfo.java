package io.boxline;

import java.time.Instant;

/** A topic as stored. */
public record TopicInfo(TopicName name, long id, int partitions, Instant createdAt) {}
