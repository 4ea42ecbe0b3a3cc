package io.boxline;

import java.util.UUID;

/**
 * Selects events of one partition of a topic, in sequence order, after a position, without a
 * subscription and without moving any cursor (what an operator or a tool reads). The key and id
 * filters are optional and combine with AND; they are checked on the events the read passes over,
 * so a filter that matches little reads far (there is no index on keys or ids in the log).
 *
 * @param topic the topic
 * @param partition the partition, from 0
 * @param afterSequence events with a greater sequence (0: from the first)
 * @param key only events with this key, or null
 * @param eventId only the event with this id, or null
 * @param limit at most this many events (1 to 10,000)
 */
public record EventQuery(
    TopicName topic, int partition, long afterSequence, String key, UUID eventId, int limit) {

  public EventQuery {
    if (topic == null) {
      throw new ValidationException("an event query needs a topic");
    }
    if (partition < 0) {
      throw new ValidationException("partition must be 0 or more, got " + partition);
    }
    if (afterSequence < 0) {
      throw new ValidationException("afterSequence must be 0 or more, got " + afterSequence);
    }
    Names.requireStorable("event key", key, Names.MAX_KEY_LENGTH);
    if (limit < 1 || limit > 10_000) {
      throw new ValidationException("limit must be between 1 and 10000, got " + limit);
    }
  }

  /** The first 100 events of the partition. */
  public static EventQuery of(TopicName topic, int partition) {
    return new EventQuery(topic, partition, 0, null, null, 100);
  }

  /** Events after {@code sequence}. */
  public EventQuery after(long sequence) {
    return new EventQuery(topic, partition, sequence, key, eventId, limit);
  }

  /** Only events with this key. */
  public EventQuery key(String k) {
    return new EventQuery(topic, partition, afterSequence, k, eventId, limit);
  }

  /** Only the event with this id. */
  public EventQuery eventId(UUID id) {
    return new EventQuery(topic, partition, afterSequence, key, id, limit);
  }

  /** At most {@code n} events. */
  public EventQuery limit(int n) {
    return new EventQuery(topic, partition, afterSequence, key, eventId, n);
  }
}
