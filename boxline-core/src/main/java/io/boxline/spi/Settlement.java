package io.boxline.spi;

import java.util.List;
import java.util.Objects;

/**
 * What every delivery produces when it is done with events of one partition, and the one thing a
 * store does with it: move the subscription's cursor from {@code expectedPosition} to {@code
 * position} under the lease {@code epoch} (a compare-and-set on both), and park {@code parks}, in
 * one transaction. Nothing is written when the epoch is stale ({@link CommitOutcome#FENCED}), the
 * cursor stands elsewhere ({@link CommitOutcome#CURSOR_MOVED}), or the log no longer holds the
 * {@code held} events ({@link CommitOutcome#LOG_CHANGED}).
 *
 * @param partition the partition whose cursor moves
 * @param epoch the lease epoch the deliverer holds the partition under
 * @param expectedPosition where the deliverer left the cursor
 * @param position where the cursor moves: the last event settled
 * @param parks events set aside (to retry, waiting behind their key, dead), in sequence order
 * @param held events the deliverer did not read from the log but was handed in memory (by the
 *     sequencer or a committing producer), which the log must still hold at these sequences for the
 *     move to happen; empty for events read from the log
 * @param doneParked sequences of parked events handled at last: removed from the retry store
 */
public record Settlement(
    PartitionKey partition,
    long epoch,
    long expectedPosition,
    long position,
    List<Park> parks,
    List<HeldEvent> held,
    List<Long> doneParked) {

  public Settlement {
    Objects.requireNonNull(partition, "partition");
    parks = List.copyOf(parks);
    held = List.copyOf(held);
    doneParked = List.copyOf(doneParked);
    if (position < expectedPosition) {
      throw new IllegalArgumentException(
          "a settlement moves a cursor forward: " + expectedPosition + " -> " + position);
    }
    if (!held.isEmpty()) {
      long first = held.get(0).sequence();
      long last = held.get(held.size() - 1).sequence();
      if (last - first + 1 != held.size()) {
        throw new IllegalArgumentException(
            "held events must have consecutive sequences: " + first + ".." + last);
      }
    }
  }

  /** A move over events read from the log, parking nothing. */
  public static Settlement move(
      PartitionKey partition, long epoch, long expectedPosition, long position) {
    return new Settlement(
        partition, epoch, expectedPosition, position, List.of(), List.of(), List.of());
  }

  /** This settlement, parking {@code parks}. */
  public Settlement parking(List<Park> parks) {
    return new Settlement(partition, epoch, expectedPosition, position, parks, held, doneParked);
  }

  /** This settlement, removing the handled parked events {@code sequences}. */
  public Settlement finishing(List<Long> sequences) {
    return new Settlement(partition, epoch, expectedPosition, position, parks, held, sequences);
  }

  /** This settlement, moving only if the log still holds {@code held}. */
  public Settlement holding(List<HeldEvent> held) {
    return new Settlement(partition, epoch, expectedPosition, position, parks, held, doneParked);
  }

  /** Whether the store must check the log before moving (events were handed over in memory). */
  public boolean checksLog() {
    return !held.isEmpty();
  }

  /**
   * An event handed over in memory, by its sequence and id.
   *
   * @param sequence where the hand-over said the log holds it
   * @param id its event id
   */
  public record HeldEvent(long sequence, java.util.UUID id) {
    public HeldEvent {
      Objects.requireNonNull(id, "id");
    }
  }
}
