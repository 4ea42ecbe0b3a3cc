package io.boxline.spi;

import java.util.List;
import java.util.Map;

/**
 * Result of one sequencer transaction.
 *
 * @param leaseHeld false when the caller is not (or no longer) the sequencer; nothing was moved
 * @param events events moved from the outbox into the log
 * @param heads new last sequence of every partition that received events
 * @param appended the moved events per partition in sequence order, when the caller asked for them
 *     and the store returns them (empty otherwise); the transaction that wrote them has committed
 */
public record SequencedBatch(
    boolean leaseHeld,
    int events,
    List<PartitionHead> heads,
    Map<PartitionKey, List<StoredEvent>> appended) {
  public static final SequencedBatch NOT_LEADER = new SequencedBatch(false, 0, List.of());
  public static final SequencedBatch EMPTY = new SequencedBatch(true, 0, List.of());

  public SequencedBatch(boolean leaseHeld, int events, List<PartitionHead> heads) {
    this(leaseHeld, events, heads, Map.of());
  }
}
