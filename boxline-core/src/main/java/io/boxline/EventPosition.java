package io.boxline;

import java.util.Objects;

/**
 * Where an event sits in the log: its topic, partition and sequence. Lists of set-aside events
 * (dead letters, retries) are ordered by position, and a page continues after the last position of
 * the one before it.
 */
public record EventPosition(TopicName topic, int partition, long sequence) {

  public EventPosition {
    Objects.requireNonNull(topic, "topic");
    if (partition < 0) {
      throw new ValidationException("partition must be 0 or more, got " + partition);
    }
    if (sequence < 0) {
      throw new ValidationException("sequence must be 0 or more, got " + sequence);
    }
  }

  /** The position of {@code e}. */
  public static EventPosition of(Event e) {
    return new EventPosition(e.topic(), e.partition(), e.sequence());
  }

  /** {@code namespace/topic/partition/sequence}, the form {@link #parse} reads. */
  @Override
  public String toString() {
    return topic + "/" + partition + "/" + sequence;
  }

  /**
   * Reads {@code tenant/namespace/topic/partition/sequence} (the topic name, then the partition and
   * the sequence).
   */
  public static EventPosition parse(String text) {
    Objects.requireNonNull(text, "position");
    int last = text.lastIndexOf('/');
    int before = last <= 0 ? -1 : text.lastIndexOf('/', last - 1);
    if (before <= 0) {
      throw new ValidationException(
          "a position is <topic>/<partition>/<sequence>, e.g. acme/orders/events/3/120, got '"
              + text
              + "'");
    }
    try {
      return new EventPosition(
          TopicName.parse(text.substring(0, before)),
          Integer.parseInt(text.substring(before + 1, last)),
          Long.parseLong(text.substring(last + 1)));
    } catch (NumberFormatException e) {
      throw new ValidationException(
          "a position is <topic>/<partition>/<sequence> with whole numbers, got '" + text + "'");
    }
  }
}
