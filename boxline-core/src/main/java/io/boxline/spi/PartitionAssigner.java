package io.boxline.spi;

/** Assigns a partition to outbox rows written without one (by the SQL-level publish function). */
@FunctionalInterface
public interface PartitionAssigner {
  /**
   * @param topicId the topic
   * @param key the event key, may be null
   * @return the partition, in [0, partitions of the topic)
   */
  int assign(long topicId, String key);
}
