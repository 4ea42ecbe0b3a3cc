package io.boxline;

/**
 * One partition of a subscription: how far it has read and how much is left.
 *
 * @param topic the topic
 * @param partition the partition
 * @param position sequence of the last handled event (0 when none)
 * @param lastSequence sequence of the newest event in the partition
 */
public record PartitionLag(TopicName topic, int partition, long position, long lastSequence) {
  /** Events sequenced but not yet handled. */
  public long backlog() {
    return Math.max(0, lastSequence - position);
  }
}
