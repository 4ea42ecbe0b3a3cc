package io.boxline.spi;

import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One cursor move without parks, for {@link Store#commitCursors}: from {@code expectedPosition} to
 * {@code position} under {@code epoch}. When the events came from the sequencer's hand-over rather
 * than a read of the log, {@code heldSequences}/{@code heldIds} name them (consecutive sequences,
 * ids in the same order) and the move happens only if the log holds exactly those; both are null
 * for events read from the log.
 */
public record CursorMove(
    PartitionKey partition,
    long expectedPosition,
    long position,
    long epoch,
    long[] heldSequences,
    UUID[] heldIds) {

  public CursorMove {
    Objects.requireNonNull(partition, "partition");
    if ((heldSequences == null) != (heldIds == null)) {
      throw new IllegalArgumentException("heldSequences and heldIds go together");
    }
    if (heldSequences != null) {
      if (heldSequences.length == 0 || heldSequences.length != heldIds.length) {
        throw new IllegalArgumentException(
            "heldSequences and heldIds must be non-empty and of the same length");
      }
      long first = heldSequences[0];
      long last = heldSequences[heldSequences.length - 1];
      if (last - first + 1 != heldSequences.length) {
        throw new IllegalArgumentException(
            "held events must have consecutive sequences: " + first + ".." + last);
      }
    }
  }

  /** A move over events read from the log: no check of the log. */
  public static CursorMove read(
      PartitionKey partition, long expectedPosition, long position, long epoch) {
    return new CursorMove(partition, expectedPosition, position, epoch, null, null);
  }

  /** Whether the move carries handed-over events that the log must still hold. */
  public boolean checksLog() {
    return heldSequences != null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CursorMove m
        && partition.equals(m.partition)
        && expectedPosition == m.expectedPosition
        && position == m.position
        && epoch == m.epoch
        && Arrays.equals(heldSequences, m.heldSequences)
        && Arrays.equals(heldIds, m.heldIds);
  }

  @Override
  public int hashCode() {
    return Objects.hash(partition, expectedPosition, position, epoch)
        + 31 * Arrays.hashCode(heldSequences);
  }

  @Override
  public String toString() {
    return "CursorMove["
        + partition
        + " "
        + expectedPosition
        + "->"
        + position
        + " epoch "
        + epoch
        + (heldSequences == null ? "" : " held " + heldSequences.length)
        + "]";
  }
}
