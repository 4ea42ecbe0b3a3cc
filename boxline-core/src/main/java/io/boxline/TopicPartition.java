package io.boxline;

/** One partition of one topic. */
public record TopicPartition(TopicName topic, int partition) {
  @Override
  public String toString() {
    return topic + "#" + partition;
  }
}
