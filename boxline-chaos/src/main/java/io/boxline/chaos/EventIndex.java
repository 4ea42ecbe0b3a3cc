package io.boxline.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Every event the committed business rows imply, in compact arrays (a million events fit in a few
 * hundred megabytes): its key, its place in its producer's publish order, and where the log put it.
 */
final class EventIndex {
  private final Map<UUID, Integer> byId;
  private final Map<String, Integer> keyIds = new HashMap<>();
  private final List<int[]> keyEvents = new ArrayList<>(); // per key: event indexes (grown)
  private final List<Integer> keyCounts = new ArrayList<>();
  private int size;
  private final int[] key;
  private final int[] run;
  private final long[] step;
  private final int[] ordinal;
  private final boolean[] poison;
  private final int[] logPartition;
  private final long[] logSeq;

  EventIndex(int capacity) {
    byId = new HashMap<>(capacity * 4 / 3 + 16);
    key = new int[capacity];
    run = new int[capacity];
    step = new long[capacity];
    ordinal = new int[capacity];
    poison = new boolean[capacity];
    logPartition = new int[capacity];
    logSeq = new long[capacity];
  }

  void add(UUID id, String topicAndKey, int run, long step, int ordinal, boolean poison) {
    int i = size++;
    byId.put(id, i);
    Integer k = keyIds.get(topicAndKey);
    if (k == null) {
      k = keyIds.size();
      keyIds.put(topicAndKey, k);
      keyEvents.add(new int[4]);
      keyCounts.add(0);
    }
    int n = keyCounts.get(k);
    int[] events = keyEvents.get(k);
    if (n == events.length) {
      events = Arrays.copyOf(events, n * 2);
      keyEvents.set(k, events);
    }
    events[n] = i;
    keyCounts.set(k, n + 1);
    this.key[i] = k;
    this.run[i] = run;
    this.step[i] = step;
    this.ordinal[i] = ordinal;
    this.poison[i] = poison;
  }

  int size() {
    return size;
  }

  int keys() {
    return keyIds.size();
  }

  /** The index of an expected event, or -1. */
  int indexOf(UUID id) {
    Integer i = byId.get(id);
    return i == null ? -1 : i;
  }

  boolean poison(int i) {
    return poison[i];
  }

  /** Records where the log put event {@code i}; false when it was already logged once. */
  boolean logged(int i, int partition, long seq) {
    if (logSeq[i] != 0) {
      return false;
    }
    logPartition[i] = partition;
    logSeq[i] = seq;
    return true;
  }

  boolean inLog(int i) {
    return logSeq[i] != 0;
  }

  /** A key's events in the order its producer published them. */
  Integer[] publishOrder(int k) {
    Integer[] events = events(k);
    Arrays.sort(
        events,
        Comparator.<Integer>comparingInt(i -> run[i])
            .thenComparingLong(i -> step[i])
            .thenComparingInt(i -> ordinal[i]));
    return events;
  }

  /** A key's logged events in log order. */
  Integer[] logOrder(int k) {
    Integer[] events = Arrays.stream(events(k)).filter(this::inLog).toArray(Integer[]::new);
    Arrays.sort(events, Comparator.comparingLong(i -> logSeq[i]));
    return events;
  }

  /**
   * Keys whose events the log holds out of publish order (or on more than one partition): each
   * key's published sequence must map to increasing log sequences of one partition.
   */
  long logOrderViolations() {
    long violations = 0;
    for (int k = 0; k < keys(); k++) {
      long last = 0;
      int partition = -1;
      for (int i : publishOrder(k)) {
        if (!inLog(i)) {
          continue; // counted as missing elsewhere
        }
        if ((partition >= 0 && logPartition[i] != partition) || logSeq[i] <= last) {
          violations++;
        }
        partition = logPartition[i];
        last = logSeq[i];
      }
    }
    return violations;
  }

  /**
   * Per key, in log order: each event's first observation (a row number, a stream sequence) must
   * come after the first observation of the key's previous event. Events never observed are skipped
   * (they are counted as missing elsewhere). Returns the number of events seen too early.
   */
  long firstSeenOrderViolations(long[] firstSeen) {
    long violations = 0;
    for (int k = 0; k < keys(); k++) {
      long last = 0;
      for (int i : logOrder(k)) {
        if (firstSeen[i] == 0) {
          continue;
        }
        if (firstSeen[i] < last) {
          violations++;
        }
        last = Math.max(last, firstSeen[i]);
      }
    }
    return violations;
  }

  private Integer[] events(int k) {
    int n = keyCounts.get(k);
    Integer[] out = new Integer[n];
    int[] events = keyEvents.get(k);
    for (int j = 0; j < n; j++) {
      out[j] = events[j];
    }
    return out;
  }
}
