package io.boxline.spi;

import java.time.Duration;

/**
 * The store's role for the sequencer: a lease that elects one sequencer per database, and the move
 * of outbox rows into the log with gap-free sequences per partition.
 */
public interface SequencerStore {

  /**
   * Takes or renews the sequencer lease in one statement, and reports whether the outbox holds rows
   * (so an idle sequencer costs one statement per poll).
   */
  LeaseStatus acquireSequencerLease(String owner, Duration ttl);

  /**
   * In one transaction: checks and renews the lease, moves up to {@code maxEvents} outbox rows into
   * the log with gap-free per-partition sequences (outbox order), announces the new heads, commits.
   * Rows without a partition are placed by {@code assigner}. With {@code returnEvents} the result
   * also carries the moved events, which the engine hands straight to consumers in the same process
   * instead of reading them back (they settle such events with their {@link Settlement#held held}
   * ids, checked against the log: those events may be lost in a database crash after their
   * asynchronous commit).
   */
  SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents);

  /** {@link #sequence(String, Duration, int, PartitionAssigner, boolean)} without the events. */
  default SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    return sequence(owner, ttl, maxEvents, assigner, false);
  }

  void releaseSequencerLease(String owner);

  /**
   * Moves outbox rows that name a topic or partition that does not exist (rows written by hand or
   * by a script; the publishers never write them) out of the outbox, into a table of rejected rows
   * kept with the reason, so that they cannot stop sequencing. The sequencer calls it after a
   * failed batch. Returns how many rows it moved.
   */
  int setAsideUnplaceable();
}
