package io.boxline.spi;

/** A partition by topic id. */
public record PartitionKey(long topicId, int partition) {
  public static PartitionKey of(long topicId, int partition) {
    return new PartitionKey(topicId, partition);
  }
}
