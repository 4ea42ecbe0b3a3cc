package io.boxline.spi;

import java.sql.Connection;
import java.util.List;

/**
 * The store's role for consumers: reading the log and moving a subscription's cursors, every move
 * fenced by the epoch of the lease under which the consumer holds the partition.
 */
public interface CursorStore {

  /**
   * Raises each partition's cursor epoch to its fence's lease epoch, for {@code owner}, and returns
   * the cursor positions in input order, or empty where the cursor already carries that epoch or a
   * newer one (another consumer holds a newer lease). From then on only settlements with this epoch
   * succeed.
   */
  List<java.util.OptionalLong> fenceCursors(long subscriptionId, List<Fence> fences, String owner);

  /**
   * Partitions of the subscription with events past the cursor or parked events due for a retry.
   */
  List<Backlog> backlogged(long subscriptionId);

  /** Up to {@code limit} events of the partition after {@code afterSequence}, in order. */
  List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit);

  /**
   * {@link #read} of several partitions at once, in one round trip where the store can: the events
   * of each read, in the order of {@code reads}. A consumer that holds many partitions with new
   * events reads them all for the cost of one.
   */
  default List<List<StoredEvent>> readEach(List<PartitionRead> reads) {
    List<List<StoredEvent>> out = new java.util.ArrayList<>(reads.size());
    for (PartitionRead r : reads) {
      out.add(read(r.topicId(), r.partition(), r.afterSequence(), r.limit()));
    }
    return out;
  }

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
   * Applies {@code settlements} of one subscription, each as its own compare-and-set with its parks
   * (see {@link Settlement}), and returns their outcomes in input order. They may commit together
   * (one transaction, one flush): one that is fenced, finds the cursor moved or the log changed
   * writes nothing and does not stop the others. At most one settlement per partition.
   */
  List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements);

  /**
   * {@link #settle} for the settlements of several subscriptions at once (the consumers of one
   * instance finishing batches of the same moment), outcomes in input order; at most one settlement
   * per subscription and partition. A store may apply them in one statement and one transaction;
   * this default settles each subscription's in a call of its own, in order of first appearance.
   */
  default List<CommitOutcome> settleAcross(List<SubscriptionSettlement> settlements) {
    java.util.Map<Long, List<Integer>> bySubscription = new java.util.LinkedHashMap<>();
    for (int i = 0; i < settlements.size(); i++) {
      bySubscription
          .computeIfAbsent(settlements.get(i).subscriptionId(), s -> new java.util.ArrayList<>())
          .add(i);
    }
    CommitOutcome[] out = new CommitOutcome[settlements.size()];
    for (java.util.Map.Entry<Long, List<Integer>> e : bySubscription.entrySet()) {
      List<Settlement> mine = new java.util.ArrayList<>(e.getValue().size());
      e.getValue().forEach(i -> mine.add(settlements.get(i).settlement()));
      List<CommitOutcome> outcomes = settle(e.getKey(), mine);
      for (int j = 0; j < outcomes.size(); j++) {
        out[e.getValue().get(j)] = outcomes.get(j);
      }
    }
    return java.util.Arrays.asList(out);
  }

  /**
   * In {@code tx}, a transaction the caller runs ({@link Store#openTransaction}, or an application
   * framework's), after a transactional handler wrote into it: applies {@code settlement} as {@link
   * #settle} would, and removes the parked events it names as handled, so that all of it commits or
   * rolls back with the handler's writes. The cursor move is a compare-and-set that locks the
   * cursor row. Returns {@link CommitOutcome#COMMITTED} when its writes are in {@code tx} (the
   * caller commits); otherwise {@link CommitOutcome#FENCED}, {@link CommitOutcome#CURSOR_MOVED} or
   * {@link CommitOutcome#LOG_CHANGED}, having written nothing, and the caller rolls {@code tx}
   * back. Never commits, rolls back or closes {@code tx}. Commits synchronously: the handler's
   * writes are the application's.
   */
  CommitOutcome settleIn(Connection tx, long subscriptionId, Settlement settlement);
}
