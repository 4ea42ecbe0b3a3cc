package io.boxline.spi;

import java.util.List;
import java.util.Objects;

/**
 * A lease epoch to copy onto a partition's cursor ({@link CursorStore#fenceCursors}): from then on
 * only settlements under this epoch move it, which fences every earlier owner.
 *
 * @param partition the partition whose cursor is fenced
 * @param epoch the epoch of the lease just acquired
 */
public record Fence(PartitionKey partition, long epoch) {
  public Fence {
    Objects.requireNonNull(partition, "partition");
  }

  /** The partitions of {@code fences}, in order. */
  public static List<PartitionKey> partitions(List<Fence> fences) {
    return fences.stream().map(Fence::partition).toList();
  }
}
