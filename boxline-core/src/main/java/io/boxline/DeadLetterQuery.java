package io.boxline;

import java.time.Instant;
import java.util.UUID;

/**
 * Selects dead letters of one subscription; every other criterion is optional and they combine with
 * AND. Values are bound as parameters, never put into SQL.
 */
public record DeadLetterQuery(
    String subscription,
    TopicName topic,
    String type,
    String key,
    UUID eventId,
    String errorContains,
    Instant deadBefore,
    Instant deadAfter,
    EventPosition after,
    int limit) {

  public DeadLetterQuery {
    Names.requireSubscriptionName(subscription);
    Names.requireStorable("event type", type, Names.MAX_LABEL_LENGTH);
    Names.requireStorable("event key", key, Names.MAX_KEY_LENGTH);
    Names.requireStorable("error text", errorContains, Names.MAX_KEY_LENGTH);
    Names.requireStorable("deadBefore", deadBefore);
    Names.requireStorable("deadAfter", deadAfter);
    if (limit < 1 || limit > 100_000) {
      throw new ValidationException("limit must be between 1 and 100000, got " + limit);
    }
  }

  /** Every dead letter of the subscription (first 1,000). */
  public static DeadLetterQuery of(String subscription) {
    return new DeadLetterQuery(subscription, null, null, null, null, null, null, null, null, 1000);
  }

  public DeadLetterQuery topic(TopicName t) {
    return new DeadLetterQuery(
        subscription, t, type, key, eventId, errorContains, deadBefore, deadAfter, after, limit);
  }

  public DeadLetterQuery type(String t) {
    return new DeadLetterQuery(
        subscription, topic, t, key, eventId, errorContains, deadBefore, deadAfter, after, limit);
  }

  public DeadLetterQuery key(String k) {
    return new DeadLetterQuery(
        subscription, topic, type, k, eventId, errorContains, deadBefore, deadAfter, after, limit);
  }

  public DeadLetterQuery eventId(UUID id) {
    return new DeadLetterQuery(
        subscription, topic, type, key, id, errorContains, deadBefore, deadAfter, after, limit);
  }

  public DeadLetterQuery errorContains(String text) {
    return new DeadLetterQuery(
        subscription, topic, type, key, eventId, text, deadBefore, deadAfter, after, limit);
  }

  public DeadLetterQuery deadBefore(Instant t) {
    return new DeadLetterQuery(
        subscription, topic, type, key, eventId, errorContains, t, deadAfter, after, limit);
  }

  public DeadLetterQuery deadAfter(Instant t) {
    return new DeadLetterQuery(
        subscription, topic, type, key, eventId, errorContains, deadBefore, t, after, limit);
  }

  /**
   * Only dead letters past {@code position} in log order (topic, partition, sequence): the next
   * page after a list whose last entry was at {@code position}. Lists come in that order.
   */
  public DeadLetterQuery after(EventPosition position) {
    return new DeadLetterQuery(
        subscription,
        topic,
        type,
        key,
        eventId,
        errorContains,
        deadBefore,
        deadAfter,
        position,
        limit);
  }

  public DeadLetterQuery limit(int n) {
    return new DeadLetterQuery(
        subscription, topic, type, key, eventId, errorContains, deadBefore, deadAfter, after, n);
  }
}
