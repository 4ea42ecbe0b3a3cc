package io.boxline.internal;

import io.boxline.spi.PartitionKey;
import io.boxline.spi.StoredEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The newest events the local sequencer appended, per partition, so that a consumer in the same
 * process that is caught up takes them from memory instead of reading them back: one database round
 * trip less between a commit and the handler.
 *
 * <p>Only topics that a local consumer reads are kept, at most {@link #PER_PARTITION} events per
 * partition and about {@link #MAX_BYTES} in all (over that, everything is dropped and consumers
 * read from the database). A consumer uses a run only when it starts right after its cursor. The
 * sequencer's commit is asynchronous, so a database crash can lose a batch that is already here;
 * consumers therefore commit such events with a check of the log (a {@code Settlement} with held
 * events), which moves the cursor only if the log still holds exactly those events.
 */
final class RecentEvents {
  static final int PER_PARTITION = 256;
  static final long MAX_BYTES = 16L << 20;
  private static final int OVERHEAD_BYTES = 200;

  private final Map<Long, Integer> interest = new ConcurrentHashMap<>();
  private final Map<PartitionKey, Tail> tails = new ConcurrentHashMap<>();
  private final AtomicLong bytes = new AtomicLong();
  final AtomicLong hits = new AtomicLong();
  final AtomicLong misses = new AtomicLong();

  private static final class Tail {
    final ArrayDeque<StoredEvent> events = new ArrayDeque<>();
    long bytes;
  }

  /** Whether any local consumer wants events (the sequencer asks the store for them only then). */
  boolean wanted() {
    return !interest.isEmpty();
  }

  void register(Iterable<Long> topicIds) {
    for (Long id : topicIds) {
      interest.merge(id, 1, Integer::sum);
    }
  }

  void unregister(Iterable<Long> topicIds) {
    for (Long id : topicIds) {
      if (interest.merge(id, -1, Integer::sum) <= 0) {
        interest.remove(id);
        tails.keySet().removeIf(k -> k.topicId() == id);
      }
    }
  }

  /** Called by the sequencer with a committed batch, before it announces the new heads. */
  void add(Map<PartitionKey, List<StoredEvent>> appended) {
    for (Map.Entry<PartitionKey, List<StoredEvent>> e : appended.entrySet()) {
      if (!interest.containsKey(e.getKey().topicId()) || e.getValue().isEmpty()) {
        continue;
      }
      Tail tail = tails.computeIfAbsent(e.getKey(), k -> new Tail());
      long delta;
      synchronized (tail) {
        long before = tail.bytes;
        StoredEvent last = tail.events.peekLast();
        if (last != null && last.sequence() + 1 != e.getValue().get(0).sequence()) {
          tail.events.clear(); // not a continuation (the sequencer changed hands): start over
          tail.bytes = 0;
        }
        for (StoredEvent ev : e.getValue()) {
          tail.events.addLast(ev);
          tail.bytes += size(ev);
        }
        while (tail.events.size() > PER_PARTITION) {
          tail.bytes -= size(tail.events.removeFirst());
        }
        delta = tail.bytes - before;
      }
      if (bytes.addAndGet(delta) > MAX_BYTES) {
        clear();
      }
    }
  }

  /**
   * Up to {@code max} events right after {@code position}, in sequence order; null when the event
   * after {@code position} is not here.
   */
  List<StoredEvent> after(PartitionKey key, long position, int max) {
    Tail tail = tails.get(key);
    if (tail != null) {
      synchronized (tail) {
        StoredEvent first = tail.events.peekFirst();
        StoredEvent last = tail.events.peekLast();
        if (first != null && first.sequence() <= position + 1 && last.sequence() > position) {
          List<StoredEvent> out = newest(tail, position, last.sequence(), max);
          hits.incrementAndGet();
          return out;
        }
      }
    }
    misses.incrementAndGet();
    return null;
  }

  /**
   * Up to {@code max} events of {@code tail} after {@code position}, whose last is {@code last}.
   * Runs are consecutive (add starts over otherwise), so the events after the position are the
   * tail's last {@code last - position}: they are taken from the end instead of walking the whole
   * tail (up to {@link #PER_PARTITION}) from its start, which a caught-up consumer did for every
   * batch. When the tail is not consecutive after all, the walk from the start decides.
   */
  private static List<StoredEvent> newest(Tail tail, long position, long last, int max) {
    long after = last - position;
    if (after <= tail.events.size()) {
      StoredEvent[] newest = new StoredEvent[(int) after];
      Iterator<StoredEvent> it = tail.events.descendingIterator();
      for (int i = newest.length - 1; i >= 0; i--) {
        newest[i] = it.next();
      }
      if (newest[0].sequence() == position + 1) {
        int n = Math.min(max, newest.length);
        List<StoredEvent> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          out.add(newest[i]);
        }
        return out;
      }
    }
    List<StoredEvent> out = new ArrayList<>(Math.min(max, tail.events.size()));
    Iterator<StoredEvent> it = tail.events.iterator();
    while (it.hasNext() && out.size() < max) {
      StoredEvent ev = it.next();
      if (ev.sequence() > position) {
        out.add(ev);
      }
    }
    return out;
  }

  /** Forgets everything (too big, the sequencer failed, or the log did not hold a handed event). */
  void clear() {
    for (Tail tail : tails.values()) {
      long freed;
      synchronized (tail) {
        freed = tail.bytes;
        tail.events.clear();
        tail.bytes = 0;
      }
      bytes.addAndGet(-freed);
    }
  }

  private static long size(StoredEvent e) {
    return OVERHEAD_BYTES + (e.payload() == null ? 0 : e.payload().length);
  }
}
