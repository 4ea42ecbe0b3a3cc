package io.boxline.spi;

/**
 * Counters of a store's own background work, for {@link io.boxline.BoxlineStats} and metrics.
 *
 * @param outboxVacuums vacuums of the outbox that the sequencer started and that succeeded
 *     (PostgreSQL, every {@code outboxVacuumEvery} events; 0 elsewhere)
 * @param outboxVacuumFailures such vacuums that failed (each is logged; sequencing goes on)
 * @param longTransactionWarnings warnings logged about a transaction open so long that it keeps the
 *     outbox from being vacuumed (PostgreSQL, {@code longTransactionWarning})
 */
public record StoreStats(
    long outboxVacuums, long outboxVacuumFailures, long longTransactionWarnings) {
  /** A store with no background work of its own. */
  public static final StoreStats NONE = new StoreStats(0, 0, 0);
}
