package io.boxline.jdbc.internal;

/**
 * A row the polling sequencer writes into the log ({@code append_log}): the outbox row it comes
 * from, and the partition and sequence the plan gave it.
 */
record LogRow(long outboxId, int partition, long sequence) {}
