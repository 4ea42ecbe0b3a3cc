package io.boxline.spi;

import io.boxline.StoreException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The sequencer's decisions for one batch of outbox rows, kept out of the stores so that every
 * store numbers alike and only moves data: which partition each row goes to (its own, or the {@link
 * PartitionAssigner}'s), which partitions the batch touches (in the one order in which stores lock
 * them: topic, then partition), and, once the store has read or advanced each partition's last
 * sequence, each row's sequence, gap-free and in outbox order per partition.
 *
 * <p>Rows are added in outbox order (publish order); the plan keeps that order.
 */
public final class SequencePlan {
  private static final Comparator<PartitionKey> LOCK_ORDER =
      Comparator.comparingLong(PartitionKey::topicId).thenComparingInt(PartitionKey::partition);

  private final PartitionAssigner assigner;
  private final List<PartitionKey> rows = new ArrayList<>();
  private final Map<PartitionKey, Integer> counts = new TreeMap<>(LOCK_ORDER);
  private long[] sequences;
  private List<PartitionHead> heads;

  /** A plan whose rows without a partition are placed by {@code assigner}. */
  public SequencePlan(PartitionAssigner assigner) {
    this.assigner = assigner;
  }

  /**
   * Adds the next outbox row: its topic, its partition (negative when the row has none) and its key
   * (may be null). Returns the partition the row goes to.
   */
  public int add(long topicId, int partition, String key) {
    if (sequences != null) {
      throw new IllegalStateException("the plan is numbered already");
    }
    int p = partition >= 0 ? partition : assigner.assign(topicId, key);
    PartitionKey k = PartitionKey.of(topicId, p);
    rows.add(k);
    counts.merge(k, 1, Integer::sum);
    return p;
  }

  /** How many rows the plan holds. */
  public int size() {
    return rows.size();
  }

  /** The partition row {@code row} goes to. */
  public PartitionKey partition(int row) {
    return rows.get(row);
  }

  /** The partitions the batch touches, in lock order (topic, then partition). */
  public List<PartitionKey> partitions() {
    return List.copyOf(counts.keySet());
  }

  /** How many of the batch's rows go to {@code partition}. */
  public int count(PartitionKey partition) {
    return counts.getOrDefault(partition, 0);
  }

  /**
   * Numbers the rows after each partition's last sequence before this batch. Every partition of
   * {@link #partitions()} must be in {@code lastBefore}: one that is missing does not exist (its
   * topic was deleted, or the row was written by hand), and the batch must not go on.
   *
   * @throws StoreException when a partition is missing
   */
  public void numberAfter(Map<PartitionKey, Long> lastBefore) {
    if (!lastBefore.keySet().containsAll(counts.keySet())) {
      List<PartitionKey> missing = new ArrayList<>(counts.keySet());
      missing.removeAll(lastBefore.keySet());
      throw new StoreException(
          "outbox holds events for a partition that does not exist (topic deleted or rows written by"
              + " hand?): "
              + missing,
          null);
    }
    Map<PartitionKey, Long> next = new HashMap<>();
    List<PartitionHead> out = new ArrayList<>(counts.size());
    for (Map.Entry<PartitionKey, Integer> e : counts.entrySet()) {
      PartitionKey k = e.getKey();
      long from = lastBefore.get(k);
      next.put(k, from + 1);
      out.add(new PartitionHead(k.topicId(), k.partition(), from + e.getValue()));
    }
    long[] seqs = new long[rows.size()];
    for (int i = 0; i < seqs.length; i++) {
      long seq = next.get(rows.get(i));
      next.put(rows.get(i), seq + 1);
      seqs[i] = seq;
    }
    this.sequences = seqs;
    this.heads = List.copyOf(out);
  }

  /**
   * Like {@link #numberAfter}, from each partition's last sequence after this batch (what a store
   * that advances and reads in one statement gets back).
   */
  public void numberUpTo(Map<PartitionKey, Long> lastAfter) {
    Map<PartitionKey, Long> before = new HashMap<>();
    lastAfter.forEach((k, last) -> before.put(k, last - count(k)));
    numberAfter(before);
  }

  /** Row {@code row}'s sequence (after {@link #numberAfter}). */
  public long sequence(int row) {
    numbered();
    return sequences[row];
  }

  /** Each touched partition's last sequence after this batch, in lock order. */
  public List<PartitionHead> heads() {
    numbered();
    return heads;
  }

  private void numbered() {
    if (sequences == null) {
      throw new IllegalStateException("number the plan first (numberAfter)");
    }
  }
}
