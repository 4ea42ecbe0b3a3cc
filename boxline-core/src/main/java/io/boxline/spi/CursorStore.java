package io.boxline.spi;

import java.sql.Connection;
import java.util.List;

/**
 * The store's role for consumers: reading the log and moving a subscription's cursors, every move
 * fenced by the epoch of the lease under which the consumer holds the partition.
 */
public interface CursorStore {

  /**
   * Raises each partition's cursor epoch to the given lease epoch, for {@code owner}, and returns
   * the cursor positions in input order, or -1 where the cursor already carries that epoch or a
   * newer one (another consumer holds a newer lease). From then on only commits with this epoch
   * succeed.
   */
  long[] fenceCursors(
      long subscriptionId, List<PartitionKey> partitions, long[] epochs, String owner);

  /**
   * Partitions of the subscription with events past the cursor or parked events due for a retry.
   */
  List<Backlog> backlogged(long subscriptionId);

  /** Up to {@code limit} events of the partition after {@code afterSequence}, in order. */
  List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit);

  /**
   * Like {@link #read}, keeping only events with this key and this id where they are not null
   * (operators' reads; the filters are checked on the events passed over).
   */
  List<StoredEvent> readWhere(
      long topicId,
      int partition,
      long afterSequence,
      String key,
      java.util.UUID eventId,
      int limit);

  /**
   * Opens a transaction that holds the partition's cursor row locked, after checking that it still
   * carries {@code epoch} and stands at {@code expectedPosition}, where the consumer left it: a
   * transactional handler's commit then never writes over a cursor that another consumer took or
   * that someone moved (a rewind, or a crash that lost asynchronous commits). The handler's writes
   * go into this transaction; {@link #commitFenced} finishes it.
   */
  FencedTransaction beginFenced(
      long subscriptionId, PartitionKey partition, long epoch, long expectedPosition);

  /**
   * In {@code tx}, a transaction the caller runs (an application framework's): locks the
   * partition's cursor row after checking that it carries {@code epoch} and stands at {@code
   * expectedPosition}, as {@link #beginFenced} does. Returns null when locked; else {@link
   * CommitOutcome#FENCED} or {@link CommitOutcome#CURSOR_MOVED}, and the caller rolls {@code tx}
   * back. Never commits, rolls back or closes {@code tx}.
   */
  CommitOutcome lockCursor(
      Connection tx,
      long subscriptionId,
      PartitionKey partition,
      long epoch,
      long expectedPosition);

  /**
   * In {@code tx}, after {@link #lockCursor}: parks {@code parks} and moves the cursor to {@code
   * position}. The caller commits.
   */
  void advanceLockedCursor(
      Connection tx, long subscriptionId, PartitionKey partition, long position, List<Park> parks);

  /**
   * In {@code tx}, after {@link #lockCursor}: removes the handled parked event {@code seq}. The
   * caller commits.
   */
  void finishParkedLocked(Connection tx, long subscriptionId, PartitionKey partition, long seq);

  /**
   * Parks {@code parks}, moves the cursor to {@code position} and commits {@code tx}; closes it
   * either way.
   */
  void commitFenced(
      Connection tx, long subscriptionId, PartitionKey partition, long position, List<Park> parks);

  /**
   * Applies {@code settlements} of one subscription, each as its own compare-and-set with its parks
   * (see {@link Settlement}), and returns their outcomes in input order. They may commit together
   * (one transaction, one flush): one that is fenced, finds the cursor moved or the log changed
   * writes nothing and does not stop the others. At most one settlement per partition.
   */
  List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements);
}
