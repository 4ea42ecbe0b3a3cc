package io.boxline;

import java.util.Set;

/**
 * Told when a consumer gains or loses partitions, so an application can set up and tear down
 * per-partition state. Called from the consumer's coordination thread; keep it quick.
 */
public interface PartitionListener {
  /** Called before the first event of these partitions is handed to the handler. */
  default void onAssigned(Set<TopicPartition> partitions) {}

  /**
   * Called after the last event of these partitions was handled and committed (a graceful release).
   */
  default void onRevoked(Set<TopicPartition> partitions) {}

  /**
   * Called when a partition was taken away without a graceful release: another consumer claimed it
   * (this one was considered dead) and a cursor commit was rejected, or the lease disappeared. Work
   * on it has stopped.
   */
  default void onLost(Set<TopicPartition> partitions) {}
}
