package io.boxline.internal.memory;

import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cursors of the in-memory store: per subscription and partition, the position (sequence of the
 * last handled event), the epoch of the lease under which a consumer holds it, and its owner. Every
 * move is compare-and-set on the epoch and on the position the consumer left; a cursor that an open
 * transaction holds ({@link io.boxline.spi.CursorStore#settleIn}) makes other moves wait for it.
 * Not thread-safe: the store calls it under its lock.
 */
final class Cursors {
  /** The row lock of one cursor. */
  record CursorKey(long subscriptionId, PartitionKey partition) {}

  static final class Cursor {
    long position;
    long epoch;
    String owner;
    Instant updatedAt;

    Cursor(long position, Instant now) {
      this.position = position;
      this.updatedAt = now;
    }
  }

  private final RowLocks locks;
  private final Map<Long, TreeMap<PartitionKey, Cursor>> bySubscription = new HashMap<>();

  Cursors(RowLocks locks) {
    this.locks = locks;
  }

  void create(long subscriptionId, PartitionKey k, long position, Instant now) {
    bySubscription
        .computeIfAbsent(subscriptionId, s -> new TreeMap<>(EventLog.ORDER))
        .putIfAbsent(k, new Cursor(position, now));
  }

  /** The subscription's cursors in (topic id, partition) order; empty when it has none. */
  Map<PartitionKey, Cursor> of(long subscriptionId) {
    return bySubscription.getOrDefault(subscriptionId, new TreeMap<>(EventLog.ORDER));
  }

  Cursor get(long subscriptionId, PartitionKey k) {
    return of(subscriptionId).get(k);
  }

  /**
   * The lowest position of the partition's cursors of the subscriptions {@code counted} accepts, or
   * {@code Long.MAX_VALUE} when none.
   */
  long slowest(PartitionKey k, java.util.function.LongPredicate counted) {
    long min = Long.MAX_VALUE;
    for (var e : bySubscription.entrySet()) {
      Cursor c = e.getValue().get(k);
      if (c != null && counted.test(e.getKey())) {
        min = Math.min(min, c.position);
      }
    }
    return min;
  }

  /** Waits until no open transaction (other than {@code self}) holds the cursor. */
  void awaitFree(MemoryTransaction self, long subscriptionId, PartitionKey k) {
    locks.awaitFree(self, new CursorKey(subscriptionId, k));
  }

  /** Waits until no open transaction holds any of these cursors. */
  void awaitAllFree(long subscriptionId, java.util.Collection<PartitionKey> partitions) {
    locks.awaitAllFree(
        null, partitions.stream().map(k -> new CursorKey(subscriptionId, k)).toList());
  }

  /**
   * Raises each cursor's epoch to the given one for {@code owner}, where it is older; returns the
   * positions of those raised, -1 for the others.
   */
  long[] fence(
      long subscriptionId,
      List<PartitionKey> partitions,
      long[] epochs,
      String owner,
      Instant now) {
    long[] positions = new long[partitions.size()];
    awaitAllFree(subscriptionId, partitions);
    for (int i = 0; i < positions.length; i++) {
      Cursor c = get(subscriptionId, partitions.get(i));
      if (c == null || c.epoch >= epochs[i]) {
        positions[i] = -1;
        continue;
      }
      c.epoch = epochs[i];
      c.owner = owner;
      c.updatedAt = now;
      positions[i] = c.position;
    }
    return positions;
  }

  /**
   * Whether the cursor stands at {@code expected} under {@code epoch}: null when it does, else why
   * not ({@link CommitOutcome#FENCED} for another epoch, {@link CommitOutcome#CURSOR_MOVED} for
   * another position).
   */
  CommitOutcome check(long subscriptionId, PartitionKey k, long expected, long epoch) {
    Cursor c = get(subscriptionId, k);
    if (c == null || c.epoch != epoch) {
      return CommitOutcome.FENCED;
    }
    return c.position == expected ? null : CommitOutcome.CURSOR_MOVED;
  }

  /** Moves the cursor (after {@link #check}, or under the transaction that holds it). */
  void move(long subscriptionId, PartitionKey k, long position, Instant now) {
    Cursor c = get(subscriptionId, k);
    if (c != null) {
      c.position = position;
      c.updatedAt = now;
    }
  }

  /** Sets every cursor of the subscription to the position {@code to} gives; returns how many. */
  int rewind(long subscriptionId, java.util.function.ToLongFunction<PartitionKey> to, Instant now) {
    Map<PartitionKey, Cursor> cursors = of(subscriptionId);
    awaitAllFree(subscriptionId, cursors.keySet());
    for (Map.Entry<PartitionKey, Cursor> e : cursors.entrySet()) {
      e.getValue().position = to.applyAsLong(e.getKey());
      e.getValue().updatedAt = now;
    }
    return cursors.size();
  }

  /** Moves the cursors of these partitions (those the subscription has) to these positions. */
  int seek(long subscriptionId, Map<PartitionKey, Long> to, Instant now) {
    Map<PartitionKey, Cursor> cursors = of(subscriptionId);
    awaitAllFree(subscriptionId, cursors.keySet());
    int n = 0;
    for (Map.Entry<PartitionKey, Long> e : to.entrySet()) {
      Cursor c = cursors.get(e.getKey());
      if (c != null) {
        c.position = e.getValue();
        c.updatedAt = now;
        n++;
      }
    }
    return n;
  }

  /** Every subscription's cursors, by subscription id. */
  Map<Long, TreeMap<PartitionKey, Cursor>> all() {
    return new TreeMap<>(bySubscription);
  }

  /** Forgets the subscription's cursors. */
  void deleteSubscription(long subscriptionId) {
    bySubscription.remove(subscriptionId);
  }

  /** Forgets every subscription's cursors on the topic. */
  void deleteTopic(long topicId) {
    bySubscription.values().forEach(m -> m.keySet().removeIf(k -> k.topicId() == topicId));
  }
}
