package io.boxline.spi;

import java.sql.Connection;
import java.util.List;
import java.util.UUID;

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
   * In one transaction: parks {@code parks} and moves the cursor from {@code expectedPosition} to
   * {@code position}, if {@code epoch} still matches and the cursor still stands at {@code
   * expectedPosition}. Writes nothing otherwise: {@link CommitOutcome#FENCED} when the epoch is
   * stale, {@link CommitOutcome#CURSOR_MOVED} when the cursor stands elsewhere (a database crash
   * lost an earlier asynchronous cursor commit, so the caller must go back to the stored cursor).
   */
  CommitOutcome commitBatch(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<Park> parks);

  /**
   * Like {@link #commitBatch}, for events that did not come from {@link #read} (handed over by the
   * sequencer or a committing producer): in the same transaction it first checks that the log holds
   * exactly these event ids at these sequences, and writes nothing ({@link
   * CommitOutcome#LOG_CHANGED}) when it does not.
   */
  CommitOutcome commitBatchIfLogHolds(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<Park> parks,
      long[] sequences,
      UUID[] eventIds);

  /**
   * Several cursor moves of one subscription, none with parks, committed together: each as {@link
   * #commitBatch} (or, for a move that {@link CursorMove#checksLog checks the log}, {@link
   * #commitBatchIfLogHolds}) would, with the outcomes in input order. Each move stands on its own:
   * one that is fenced or finds the log changed writes nothing and does not stop the others. At
   * most one move per partition.
   */
  List<CommitOutcome> commitCursors(long subscriptionId, List<CursorMove> moves);
}
