package io.boxline.spi;

/**
 * Counters of a store's own background work, for {@link io.boxline.BoxlineStats} and metrics.
 *
 * @param outboxVacuums vacuums of the outbox that the sequencer started and that succeeded
 *     (PostgreSQL, every {@code outboxVacuumEvery} events; 0 elsewhere)
 * @param outboxVacuumFailures such vacuums that failed (each is logged; sequencing goes on)
 * @param longTransactionWarnings warnings logged about a transaction open so long that it keeps the
 *     outbox from being vacuumed (PostgreSQL, {@code longTransactionWarning})
 * @param replicaReads partition reads of the log answered by a read replica (0 without replicas)
 * @param primaryFallbacks partition reads sent to a replica that the primary answered instead: no
 *     replica had caught up with the partition's known head within the wait, or none answered
 */
public record StoreStats(
    long outboxVacuums,
    long outboxVacuumFailures,
    long longTransactionWarnings,
    long replicaReads,
    long primaryFallbacks) {
  /** A store with no background work of its own. */
  public static final StoreStats NONE = new StoreStats(0, 0, 0, 0, 0);

  /** Counters of a store that reads no replicas. */
  public StoreStats(long outboxVacuums, long outboxVacuumFailures, long longTransactionWarnings) {
    this(outboxVacuums, outboxVacuumFailures, longTransactionWarnings, 0, 0);
  }

  /** These counters with the replica reads of {@code reads} and {@code fallbacks}. */
  public StoreStats withReplicaReads(long reads, long fallbacks) {
    return new StoreStats(
        outboxVacuums, outboxVacuumFailures, longTransactionWarnings, reads, fallbacks);
  }
}
