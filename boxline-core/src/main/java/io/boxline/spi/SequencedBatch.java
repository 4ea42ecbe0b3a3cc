package io.boxline.spi;

import java.util.List;

/**
 * Result of one sequencer transaction.
 *
 * @param leaseHeld false when the caller is not (or no longer) the sequencer; nothing was moved
 * @param events events moved from the outbox into the log
 * @param heads new last sequence of every partition that received events
 */
public record SequencedBatch(boolean leaseHeld, int events, List<PartitionHead> heads) {
  public static final SequencedBatch NOT_LEADER = new SequencedBatch(false, 0, List.of());
  public static final SequencedBatch EMPTY = new SequencedBatch(true, 0, List.of());
}
