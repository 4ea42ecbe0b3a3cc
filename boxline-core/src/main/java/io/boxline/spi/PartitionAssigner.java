package io.boxline.spi;

/** Assigns a partition to outbox rows written without one (by the SQL-level publish function). */
public interface PartitionAssigner {
  /**
   * @param topicId the topic
   * @param key the event key, may be null
   * @return the partition, in [0, partitions of the topic)
   */
  int assign(long topicId, String key);

  /**
   * True when keyed rows are assigned with {@link io.boxline.Partitioner#kafkaCompatible()} and
   * keyless ones at random: a store may then place such rows itself, without a round trip.
   */
  default boolean kafkaCompatible() {
    return false;
  }
}
