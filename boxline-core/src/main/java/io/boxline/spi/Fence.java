package io.boxline.spi;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

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

  /** The epochs of {@code fences}, in order, for implementations that bind arrays. */
  public static long[] epochs(List<Fence> fences) {
    return fences.stream().mapToLong(Fence::epoch).toArray();
  }

  /**
   * Per element of {@code values}: empty where it is negative (the SQL stores' marker), else it.
   */
  public static List<OptionalLong> present(long[] values) {
    List<OptionalLong> out = new java.util.ArrayList<>(values.length);
    for (long v : values) {
      out.add(v < 0 ? OptionalLong.empty() : OptionalLong.of(v));
    }
    return out;
  }
}
