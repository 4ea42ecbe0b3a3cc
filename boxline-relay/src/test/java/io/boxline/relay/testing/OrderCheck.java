package io.boxline.relay.testing;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the broker side received, checked for completeness and per-key order. A copy of an event
 * seen before is a duplicate (allowed by at-least-once, counted); an event seen for the first time
 * whose sequence is lower than one already seen for its key is an order violation. Thread-safe.
 */
public final class OrderCheck {
  private final Set<String> ids = new HashSet<>();
  private final Map<String, Long> maxSequence = new HashMap<>();
  private final List<String> violations = new ArrayList<>();
  private long received;
  private long duplicates;

  /** Records one received message. */
  public synchronized void record(String id, String key, long sequence) {
    received++;
    if (!ids.add(id)) {
      duplicates++;
      return;
    }
    Long max = maxSequence.get(key);
    if (max != null && sequence <= max) {
      if (violations.size() < 20) {
        violations.add(
            "key " + key + ": event " + id + " (sequence " + sequence + ") after sequence " + max);
      }
    } else {
      maxSequence.put(key, sequence);
    }
  }

  public synchronized int distinct() {
    return ids.size();
  }

  public synchronized long received() {
    return received;
  }

  public synchronized long duplicates() {
    return duplicates;
  }

  public synchronized List<String> violations() {
    return List.copyOf(violations);
  }

  public synchronized int keys() {
    return maxSequence.size();
  }

  /** The expected ids that were not received. */
  public synchronized List<UUID> missing(Collection<UUID> expected) {
    List<UUID> out = new ArrayList<>();
    for (UUID id : expected) {
      if (!ids.contains(id.toString())) {
        out.add(id);
      }
    }
    return out;
  }

  /** The received ids that were not expected. */
  public synchronized List<String> unexpected(Collection<UUID> expected) {
    Set<String> want = new HashSet<>();
    expected.forEach(id -> want.add(id.toString()));
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      if (!want.contains(id)) {
        out.add(id);
      }
    }
    return out;
  }

  @Override
  public synchronized String toString() {
    return "received " + received + ", distinct " + ids.size() + ", duplicates " + duplicates;
  }
}
