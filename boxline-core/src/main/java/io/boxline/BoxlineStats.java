package io.boxline;

/**
 * Counters of one Boxline instance's background loops, for health checks and tests.
 *
 * @param sequencerLeader whether this instance currently holds the sequencer lease
 * @param sequencerBatches sequencer transactions that moved at least one event
 * @param eventsSequenced events moved from the outbox into the log by this instance
 * @param sequencerErrors sequencer iterations that failed (and were retried)
 * @param wakeupsReceived wake-up notifications received from the database
 * @param retentionRuns retention runs made by this instance (only while it leads the sequencer)
 * @param retentionDeleted rows those runs deleted
 * @param handOverHits batches that local consumers took from the events this instance's sequencer
 *     had just appended, without reading the log (PostgreSQL)
 * @param handOverMisses batches that local plain or batch consumers had to read from the log
 * @param cursorCommitCalls store calls of the consumers' group commit of cursor moves (batches
 *     without retried or dead-lettered events, handlers without a transaction of their own)
 * @param cursorMovesCommitted cursor moves those calls carried (moved or refused); divided by the
 *     calls, how many moves one call gathers
 * @param outboxVacuums vacuums of the outbox started by this instance's sequencer that succeeded
 *     (PostgreSQL; see {@code JdbcStore.Builder.outboxVacuumEvery})
 * @param outboxVacuumFailures such vacuums that failed (logged; sequencing goes on, slower)
 * @param longTransactionWarnings warnings logged about a transaction open so long that the outbox
 *     cannot be vacuumed (PostgreSQL; see {@code JdbcStore.Builder.longTransactionWarning})
 * @param announcements announcements to other processes of events of {@link
 *     Sequencing#IN_TRANSACTION} topics published here (one NOTIFY, or one wake-all on stores that
 *     poll)
 * @param announcerLooks reads of partition heads for such events published in transactions whose
 *     commit Boxline could not see (plain {@code publish(connection, ...)})
 * @param announcerErrors announcer steps that failed (logged, retried)
 * @param outboxRowsSetAside outbox rows this instance's sequencer moved to the {@code
 *     outbox_rejected} table because their topic or partition does not exist (rows written by hand;
 *     logged), so that they could not stop sequencing
 * @param logSegmentsDropped whole time segments of the log those retention runs dropped
 *     (PostgreSQL; see docs/guide/operations.md)
 * @param logSegmentEvents events in those segments (counted in {@code retentionDeleted} too)
 * @param replicaReads partition reads of the log that a read replica answered (see {@code
 *     JdbcStore.Builder.readReplicas}; 0 without replicas)
 * @param primaryFallbacks partition reads meant for a replica that the primary answered, because no
 *     replica had caught up within {@code replicaWait} or none answered
 */
public record BoxlineStats(
    boolean sequencerLeader,
    long sequencerBatches,
    long eventsSequenced,
    long sequencerErrors,
    long wakeupsReceived,
    long retentionRuns,
    long retentionDeleted,
    long handOverHits,
    long handOverMisses,
    long cursorCommitCalls,
    long cursorMovesCommitted,
    long outboxVacuums,
    long outboxVacuumFailures,
    long longTransactionWarnings,
    long announcements,
    long announcerLooks,
    long announcerErrors,
    long outboxRowsSetAside,
    long logSegmentsDropped,
    long logSegmentEvents,
    long replicaReads,
    long primaryFallbacks) {}
