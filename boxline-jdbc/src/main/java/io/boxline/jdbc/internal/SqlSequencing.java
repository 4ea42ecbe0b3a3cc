package io.boxline.jdbc.internal;

import io.boxline.spi.LeaseStatus;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoreStats;
import java.time.Duration;

/**
 * The sequencer as a dialect runs it: the lease and the batch of {@link
 * io.boxline.spi.SequencerStore}. PostgreSQL runs most batches as one statement ({@link
 * PostgresSequencing}); the polling dialects hold a connection of their own and run the steps of
 * {@link SqlSequencer} ({@link PollingSequencing}).
 */
interface SqlSequencing extends AutoCloseable {
  /** See {@link io.boxline.spi.SequencerStore#acquireSequencerLease}. */
  LeaseStatus acquire(String owner, Duration ttl);

  /** See {@link io.boxline.spi.SequencerStore#releaseSequencerLease}. */
  void release(String owner);

  /** See {@link io.boxline.spi.SequencerStore#sequence}. */
  SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents);

  /** What the sequencer counts besides its batches. */
  default StoreStats stats() {
    return StoreStats.NONE;
  }

  /** Gives back what the sequencer holds; safe to call twice. */
  @Override
  void close();
}
