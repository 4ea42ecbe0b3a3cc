package io.boxline.spi;

import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Storage of one Boxline deployment: schema, outbox, log, subscriptions and cursors. The JDBC
 * module provides the implementation; every implementation must pass the behaviour suite in {@code
 * boxline-testkit}. Methods throw {@link io.boxline.StoreException} (unchecked) on database
 * failure.
 */
public interface Store extends AutoCloseable {

  /** Creates or upgrades the schema; safe when several processes call it at once. */
  void migrate();

  /** A short description for logs, e.g. {@code PostgreSQL 15.2 schema=boxline}. */
  String describe();

  /** A new connection with auto-commit off; the caller closes it. */
  Connection openTransaction();

  // ---- admin
  void createNamespace(NamespacePath namespace);

  TopicInfo createTopic(TopicName topic, int partitions);

  /**
   * Creates a topic with the given sequencing. The default handles {@link
   * io.boxline.Sequencing#SEQUENCER} and refuses the others.
   */
  default TopicInfo createTopic(TopicName topic, int partitions, io.boxline.Sequencing sequencing) {
    if (sequencing == io.boxline.Sequencing.SEQUENCER) {
      return createTopic(topic, partitions);
    }
    throw new UnsupportedOperationException(
        describe() + " cannot sequence topics " + sequencing + "; use Sequencing.SEQUENCER");
  }

  Optional<TopicInfo> findTopic(TopicName topic);

  Optional<TopicInfo> findTopic(long topicId);

  List<TopicInfo> topics();

  SubscriptionInfo createSubscription(SubscriptionSpec spec);

  /**
   * Moves every cursor of the subscription to {@code to} (computed as when a subscription is
   * created there) and drops its parked events after the new positions, in one transaction; returns
   * the number of cursors. The caller makes sure no consumer runs. The default throws {@link
   * UnsupportedOperationException}.
   */
  default int rewindCursors(long subscriptionId, io.boxline.StartPosition to) {
    throw new UnsupportedOperationException(describe() + " cannot rewind subscriptions");
  }

  Optional<SubscriptionInfo> findSubscription(String name);

  List<PartitionLag> lag(long subscriptionId);

  /**
   * Like {@link #lag(long)}, with each partition's {@link PartitionLag#oldestUnhandledAt()} (one
   * index lookup per partition with a backlog). The default returns {@link #lag(long)}, without
   * ages.
   */
  default List<PartitionLag> lagWithAge(long subscriptionId) {
    return lag(subscriptionId);
  }

  /**
   * {@link #lagWithAge(long)} of every subscription in one statement, by subscription name (for
   * metrics collectors). The default throws {@link UnsupportedOperationException}.
   */
  default Map<String, List<PartitionLag>> lagBySubscription() {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not report the lag of all subscriptions");
  }

  /**
   * How many rows wait in the outbox and when the oldest was written (for metrics collectors). The
   * default throws {@link UnsupportedOperationException}.
   */
  default io.boxline.OutboxBacklog outboxBacklog() {
    throw new UnsupportedOperationException(
        getClass().getSimpleName() + " does not report the outbox backlog");
  }

  // ---- publish
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
   * Moves outbox rows that name a topic or partition that does not exist (rows written by hand or
   * by a script; the publishers never write them) out of the outbox, into a table of rejected rows
   * kept with the reason, so that they cannot stop sequencing. The sequencer calls it after a
   * failed batch. Returns how many rows it moved; a store whose sequencing cannot meet such rows
   * returns 0.
   */
  default int setAsideUnplaceable() {
    return 0;
  }

  /**
   * Appends events of {@link io.boxline.Sequencing#IN_TRANSACTION} topics straight to the log in
   * the caller's transaction: locks each partition's row (in topic, partition order), numbers the
   * events after its last sequence in list order and inserts them. The locks last until the caller
   * commits or rolls back. Idempotency keys work as in {@link #append}. Returns one result per
   * record, in order. The default throws {@link UnsupportedOperationException}.
   */
  default List<LogAppend> appendToLog(Connection tx, List<OutboxRecord> records) {
    throw new UnsupportedOperationException(
        describe() + " cannot append to the log in the producer's transaction");
  }

  /**
   * Claims the idempotency keys of {@code records} in the caller's transaction, as {@link #append}
   * and {@link #appendToLog} do, without writing the events (they follow later in the same
   * transaction, without their keys). Returns one entry per record: null when the record has no key
   * or its key is now this event's, else the id of the event that owns the key already. The default
   * throws {@link UnsupportedOperationException}.
   */
  default List<UUID> claimIdempotencyKeys(Connection tx, List<OutboxRecord> records) {
    throw new UnsupportedOperationException(describe() + " cannot claim idempotency keys alone");
  }

  /**
   * The last committed sequence of each partition (no locks: a partition a producer holds shows its
   * value before that producer). The default throws {@link UnsupportedOperationException}.
   */
  default List<PartitionHead> heads(List<PartitionKey> partitions) {
    throw new UnsupportedOperationException(describe() + " cannot read partition heads");
  }

  /**
   * Tells other processes that these partitions' logs grew (outside any transaction), as the
   * sequencer's own notification does. The default does nothing: such a store's consumers in other
   * processes find new events by polling.
   */
  default void announce(List<PartitionHead> heads) {}

  /**
   * Like {@link #announce}, but inside the caller's transaction, sent when it commits (and never if
   * it rolls back). Returns false when the store cannot (the default), so the caller announces
   * after the commit instead.
   */
  default boolean announceIn(Connection tx, List<PartitionHead> heads) {
    return false;
  }

  // ---- sequencer
  /**
   * Takes or renews the sequencer lease in one statement, and reports whether the outbox holds rows
   * (so an idle sequencer costs one statement per poll).
   */
  LeaseStatus acquireSequencerLease(String owner, Duration ttl);

  /**
   * In one transaction: checks and renews the lease, moves up to {@code maxEvents} outbox rows into
   * the log with gap-free per-partition sequences (outbox order), announces the new heads, commits.
   */
  SequencedBatch sequence(String owner, Duration ttl, int maxEvents, PartitionAssigner assigner);

  /**
   * Like {@link #sequence(String, Duration, int, PartitionAssigner)}; with {@code returnEvents} the
   * result also carries the moved events, which the engine hands straight to consumers in the same
   * process instead of reading them back. A store that returns them must implement {@link
   * #commitBatchIfLogHolds} (those events may be lost in a database crash after their asynchronous
   * commit). The default returns none.
   */
  default SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    return sequence(owner, ttl, maxEvents, assigner);
  }

  void releaseSequencerLease(String owner);

  // ---- consume
  /**
   * Raises each partition's cursor epoch to the given lease epoch, for {@code owner}, and returns
   * the cursor positions in input order, or -1 where the cursor already carries that epoch or a
   * newer one (another consumer holds a newer lease). From then on only commits with this epoch
   * succeed.
   */
  long[] fenceCursors(
      long subscriptionId, List<PartitionKey> partitions, long[] epochs, String owner);

  /** The database coordination store that shares this store's database (the default). */
  CoordinationStore coordination();

  /**
   * Partitions of the subscription with events past the cursor or parked events due for a retry.
   */
  List<Backlog> backlogged(long subscriptionId);

  List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit);

  // ---- parked events: retries and dead letters
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
   * Parks {@code parks}, moves the cursor to {@code position} and commits {@code tx}; closes it
   * either way.
   */
  void commitFenced(
      java.sql.Connection tx,
      long subscriptionId,
      PartitionKey partition,
      long position,
      List<Park> parks);

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
   * Like {@link #commitBatch}, for events that did not come from {@link #read}: in the same
   * transaction it first checks that the log holds exactly these event ids at these sequences, and
   * writes nothing when it does not. Stores whose {@link #sequence(String, Duration, int,
   * PartitionAssigner, boolean)} returns events implement it; the default throws {@link
   * UnsupportedOperationException}.
   */
  default CommitOutcome commitBatchIfLogHolds(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<Park> parks,
      long[] sequences,
      UUID[] eventIds) {
    throw new UnsupportedOperationException(
        getClass().getName() + " does not hand over sequenced events");
  }

  /**
   * Several cursor moves of one subscription, none with parks, committed together: each as {@link
   * #commitBatch} (or, for a move that {@link CursorMove#checksLog checks the log}, {@link
   * #commitBatchIfLogHolds}) would, with the outcomes in input order. Each move stands on its own:
   * one that is fenced or finds the log changed writes nothing and does not stop the others. At
   * most one move per partition. The default commits them one by one; a store saves round trips and
   * commits by doing them in one statement or transaction.
   */
  default List<CommitOutcome> commitCursors(long subscriptionId, List<CursorMove> moves) {
    List<CommitOutcome> outcomes = new java.util.ArrayList<>(moves.size());
    for (CursorMove m : moves) {
      outcomes.add(
          m.checksLog()
              ? commitBatchIfLogHolds(
                  subscriptionId,
                  m.partition(),
                  m.expectedPosition(),
                  m.position(),
                  m.epoch(),
                  List.of(),
                  m.heldSequences(),
                  m.heldIds())
              : commitBatch(
                  subscriptionId,
                  m.partition(),
                  m.expectedPosition(),
                  m.position(),
                  m.epoch(),
                  List.of()));
    }
    return outcomes;
  }

  /**
   * Keys with parked events and the next due time. With {@code deadBlocks}, a dead-lettered event
   * keeps blocking its key until it is redriven or discarded.
   */
  ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks);

  /**
   * The oldest parked event of each key (each keyless one on its own) that is due now, oldest
   * first.
   */
  List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, int limit);

  /** Records another attempt's outcome, if {@code epoch} still matches; false when fenced. */
  boolean resolveParked(
      long subscriptionId, PartitionKey partition, long seq, long epoch, Resolution resolution);

  /**
   * Records the outcomes of several attempts (by sequence) in one transaction, if {@code epoch}
   * still matches; false when fenced (then none is recorded).
   */
  default boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    boolean all = true;
    for (Map.Entry<Long, Resolution> o : outcomes.entrySet()) {
      all &= resolveParked(subscriptionId, partition, o.getKey(), epoch, o.getValue());
    }
    return all;
  }

  /**
   * In a transaction from {@link #beginFenced}: removes the handled parked event and commits;
   * closes {@code tx} either way.
   */
  void finishParkedFenced(
      java.sql.Connection tx, long subscriptionId, PartitionKey partition, long seq);

  // ---- inbox
  /**
   * In a handler's transaction: records {@code key}; false when it was recorded before (a
   * duplicate).
   */
  boolean inboxClaim(java.sql.Connection tx, long subscriptionId, String key);

  boolean inboxSeen(long subscriptionId, String key);

  /** Records {@code key} on its own (non-transactional handlers). */
  void inboxRecord(long subscriptionId, String key);

  // ---- retention
  void setRetention(long topicId, io.boxline.RetentionPolicy policy);

  /**
   * Deletes, in batches of {@code batch} rows, events past their topic's retention, inbox entries,
   * dead letters and idempotency keys older than the given ages.
   */
  PurgeResult purge(Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch);

  List<io.boxline.DeadLetter> deadLetters(long subscriptionId, io.boxline.DeadLetterQuery query);

  /** Dead letters back to the retry store with a fresh attempt count; wakes consumers. */
  int redriveDeadLetters(long subscriptionId, io.boxline.DeadLetterQuery query);

  int discardDeadLetters(long subscriptionId, io.boxline.DeadLetterQuery query);

  /**
   * Starts listening for cross-process wake-ups on a thread of the store's own, or returns false
   * when the database has no such mechanism (then the engine relies on in-process signals and
   * polling).
   */
  boolean listen(WakeupListener listener);

  /** Counters of the store's own background work; the default has none. */
  default StoreStats stats() {
    return StoreStats.NONE;
  }

  /** Stops the listener and releases resources. Safe to call twice. */
  @Override
  void close();
}
