package io.boxline;

import java.util.List;

/**
 * A settle of several partitions in which some were refused: the member no longer holds them under
 * the epoch it fetched with, or their cursors moved (a rewind). Every other partition of the call
 * was settled; fetch again before settling the refused ones' events.
 */
public final class PartitionsFencedException extends FencedException {
  private static final long serialVersionUID = 1L;
  private final transient List<TopicPartition> refused;
  private final int settled;

  /**
   * @param refused the partitions whose settlement was refused, in the order the call named them
   * @param settled the events of the other partitions that were settled
   */
  public PartitionsFencedException(String message, List<TopicPartition> refused, int settled) {
    super(message);
    this.refused = List.copyOf(refused);
    this.settled = settled;
  }

  /** The partitions whose settlement was refused. */
  public List<TopicPartition> refused() {
    return refused;
  }

  /** How many events of the other partitions were settled. */
  public int settled() {
    return settled;
  }
}
