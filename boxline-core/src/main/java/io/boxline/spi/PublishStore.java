package io.boxline.spi;

import java.sql.Connection;
import java.util.List;
import java.util.UUID;

/**
 * The store's role on the publishing side: writing events in the producer's transaction (to the
 * outbox, or straight to the log of {@link io.boxline.Sequencing#IN_TRANSACTION} topics) and
 * telling other processes about them.
 */
public interface PublishStore {

  /**
   * Appends to the outbox in the caller's transaction. Returns, per record, null when stored, or
   * the id of the event stored earlier with the same idempotency key on the same topic.
   */
  List<UUID> append(Connection tx, List<OutboxRecord> records);

  /**
   * Adds a cross-process wake-up for the sequencer to the caller's transaction (sent on commit).
   */
  void notifyOutbox(Connection tx);

  /**
   * Appends events of {@link io.boxline.Sequencing#IN_TRANSACTION} topics straight to the log in
   * the caller's transaction: locks each partition's row (in topic, partition order), numbers the
   * events after its last sequence in list order and inserts them. The locks last until the caller
   * commits or rolls back. Idempotency keys work as in {@link #append}. Returns one result per
   * record, in order.
   */
  List<LogAppend> appendToLog(Connection tx, List<OutboxRecord> records);

  /**
   * Claims the idempotency keys of {@code records} in the caller's transaction, as {@link #append}
   * and {@link #appendToLog} do, without writing the events (they follow later in the same
   * transaction, without their keys). Returns one entry per record: null when the record has no key
   * or its key is now this event's, else the id of the event that owns the key already.
   */
  List<UUID> claimIdempotencyKeys(Connection tx, List<OutboxRecord> records);

  /**
   * The last committed sequence of each partition (no locks: a partition a producer holds shows its
   * value before that producer).
   */
  List<PartitionHead> heads(List<PartitionKey> partitions);

  /**
   * Tells other processes that these partitions' logs grew (outside any transaction), as the
   * sequencer's own notification does. A store without cross-process wake-ups does nothing: its
   * consumers in other processes find new events by polling.
   */
  void announce(List<PartitionHead> heads);

  /**
   * Like {@link #announce}, but inside the caller's transaction, sent when it commits (and never if
   * it rolls back). Returns false when the store cannot, so the caller announces after the commit
   * instead.
   */
  boolean announceIn(Connection tx, List<PartitionHead> heads);
}
