package io.boxline.chaos;

import java.util.UUID;

/**
 * What one place saw of the expected events (a subscription's records, the broker's stream): how
 * often each event, where it was first seen, and rows that match no committed event.
 */
final class Observations {
  private final String name;
  private final EventIndex index;
  private final boolean poisonRetried;
  private final long[] firstSeen;
  private final int[] count;
  private long unknown;
  private long rows;

  /**
   * With {@code poisonRetried}, repeated observations of the designed poison events are attempts
   * (each fails and is retried until dead-lettered), not duplicates.
   */
  Observations(String name, EventIndex index, boolean poisonRetried) {
    this.name = name;
    this.index = index;
    this.poisonRetried = poisonRetried;
    this.firstSeen = new long[index.size()];
    this.count = new int[index.size()];
  }

  /** One observation at {@code position} (increasing, from 1). */
  void observe(UUID id, long position) {
    rows++;
    int i = index.indexOf(id);
    if (i < 0) {
      unknown++;
      return;
    }
    if (count[i]++ == 0) {
      firstSeen[i] = position;
    }
  }

  String name() {
    return name;
  }

  long rows() {
    return rows;
  }

  long unknown() {
    return unknown;
  }

  long seen() {
    long n = 0;
    for (int c : count) {
      if (c > 0) {
        n++;
      }
    }
    return n;
  }

  long missing() {
    return index.size() - seen();
  }

  /** Observations beyond the first (of the poison events too, unless they are retried here). */
  long duplicates() {
    long d = 0;
    for (int i = 0; i < count.length; i++) {
      if (count[i] > 1 && !(poisonRetried && index.poison(i))) {
        d += count[i] - 1;
      }
    }
    return d;
  }

  /** Events seen before an earlier event of their key was first seen. */
  long orderViolations() {
    return index.firstSeenOrderViolations(firstSeen);
  }
}
