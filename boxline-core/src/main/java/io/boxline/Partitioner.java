package io.boxline;

import io.boxline.internal.Murmur2;

/**
 * Maps an event key to a partition. Must be deterministic: the same key always lands on the same
 * partition.
 */
@FunctionalInterface
public interface Partitioner {
  /**
   * @param key the event key, never null (keyless events are spread by Boxline)
   * @param partitions the topic's partition count, at least 1
   * @return a partition in {@code [0, partitions)}
   */
  int partition(String key, int partitions);

  /**
   * The default: Kafka's default partitioner for keyed records (murmur2 of the UTF-8 key, sign bit
   * cleared, modulo the partition count), so a key lands on the same partition number in Boxline
   * and in Kafka.
   */
  static Partitioner kafkaCompatible() {
    return Murmur2.PARTITIONER;
  }
}
