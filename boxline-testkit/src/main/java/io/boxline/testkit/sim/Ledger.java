package io.boxline.testkit.sim;

import io.boxline.PartitionLag;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the simulation knows happened, and the invariants the store must keep with it: the chaos
 * checker's, asserted after every step rather than at the end.
 *
 * <ul>
 *   <li>each partition's log is gap-free and only grows at its end;
 *   <li>a message is in the log at most once whatever its producer retried (exactly once when its
 *       producer saw the commit), and never when its transaction rolled back;
 *   <li>a key's messages appear in the order its producer wrote them, all in one partition;
 *   <li>a cursor never moves back, and only the newest fence moves it;
 *   <li>with transactional handlers no message has an effect twice, and a scheduled one none before
 *       its time;
 *   <li>retention never drops what the subscription has not settled.
 * </ul>
 */
final class Ledger {
  /** One message as its producer wrote it; every attempt to publish it carries its key. */
  record Message(int producer, String key, int n, int failures, boolean poison) {
    String idempotencyKey() {
      return key + "-" + n;
    }

    byte[] payload() {
      return (key + ";" + n + ";" + failures + ";" + (poison ? 1 : 0))
          .getBytes(StandardCharsets.UTF_8);
    }

    static Message parse(int producer, byte[] payload) {
      String[] f = new String(payload, StandardCharsets.UTF_8).split(";");
      return new Message(
          producer, f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), "1".equals(f[3]));
    }
  }

  /** What a producer knows of one attempt's commit. */
  enum Commit {
    ACKED,
    UNKNOWN,
    ROLLED_BACK
  }

  private final Store store;
  private final long topicId;
  private final long subscriptionId;
  private final int partitions;
  private final boolean transactional;
  private final List<String> violations = new ArrayList<>();
  private int step;

  private final SimClock clock;
  private final Map<UUID, java.time.Instant> deliverAt = new HashMap<>();
  private final Map<UUID, Commit> attempts = new HashMap<>();
  private final Map<UUID, Message> attemptMessage = new HashMap<>();
  private final Set<String> acked = new HashSet<>();
  private final Set<String> unknown = new HashSet<>();
  private final Map<String, UUID> logged = new LinkedHashMap<>();
  private final Map<UUID, Message> loggedById = new HashMap<>();
  private final Map<String, Integer> lastLoggedN = new HashMap<>();
  private final Map<String, Integer> partitionOfKey = new HashMap<>();
  private final long[] verified;
  private final long[] cursor;
  private final Map<PartitionKey, Long> newestFence = new HashMap<>();
  private final Map<UUID, Integer> effects = new HashMap<>();
  private int incidents;
  private final Map<String, Integer> happened = new java.util.TreeMap<>();

  Ledger(
      Store store,
      SimClock clock,
      long topicId,
      long subscriptionId,
      int partitions,
      boolean transactional) {
    this.store = store;
    this.clock = clock;
    this.topicId = topicId;
    this.subscriptionId = subscriptionId;
    this.partitions = partitions;
    this.transactional = transactional;
    this.verified = new long[partitions];
    this.cursor = new long[partitions];
  }

  void step(int step) {
    this.step = step;
  }

  void violation(String what) {
    if (violations.size() < 20) {
      violations.add("step " + step + ": " + what);
    }
  }

  List<String> violations() {
    return violations;
  }

  // ------------------------------------------------------------------ what actors report

  void attempted(UUID id, Message m, java.time.Instant at) {
    attempts.put(id, Commit.ROLLED_BACK);
    attemptMessage.put(id, m);
    if (at != null) {
      deliverAt.put(id, at);
    }
  }

  void committed(List<UUID> ids, Commit outcome) {
    for (UUID id : ids) {
      attempts.put(id, outcome);
      String k = attemptMessage.get(id).idempotencyKey();
      if (outcome == Commit.ACKED) {
        acked.add(k);
      } else if (outcome == Commit.UNKNOWN) {
        unknown.add(k);
      }
    }
  }

  /** A member fenced {@code k} at {@code epoch} and the store let it. */
  void fenced(String member, PartitionKey k, long epoch) {
    Long newest = newestFence.get(k);
    if (newest != null && epoch < newest) {
      violation(member + " fenced " + k + " at epoch " + epoch + " after epoch " + newest);
    }
    newestFence.merge(k, epoch, Math::max);
  }

  /** A member's settlement of {@code k} at {@code epoch} committed. */
  void settled(String member, PartitionKey k, long epoch) {
    Long newest = newestFence.get(k);
    if (newest == null || epoch < newest) {
      violation(
          member
              + " moved the cursor of "
              + k
              + " at stale epoch "
              + epoch
              + " (newest "
              + newest
              + ")");
    }
  }

  /** A handler's effect for {@code id} happened (in at-least-once runs, before the settlement). */
  void effect(UUID id) {
    java.time.Instant at = deliverAt.get(id);
    if (at != null && clock.instant().isBefore(at)) {
      violation("event " + id + " handled at " + clock.instant() + ", before its time " + at);
    }
    int n = effects.merge(id, 1, Integer::sum);
    if (transactional && n > 1) {
      violation("event " + id + " had its effect " + n + " times with a transactional handler");
    }
  }

  /** Something that may make a member handle a batch again (a lost call, a crash, a fence). */
  void incident(String what) {
    incidents++;
    happened.merge(what, 1, Integer::sum);
  }

  /** What members went through, by kind: how often each recovery path ran. */
  Map<String, Integer> happened() {
    return happened;
  }

  // ------------------------------------------------------------------ invariants

  /** Reads what the log gained and every cursor, and checks them. */
  void check() {
    for (int p = 0; p < partitions; p++) {
      checkLog(p);
    }
    for (PartitionLag lag : store.lag(subscriptionId)) {
      int p = lag.partition();
      if (lag.position() < cursor[p]) {
        violation(
            "cursor of partition " + p + " moved back from " + cursor[p] + " to " + lag.position());
      }
      if (lag.position() > verified[p]) {
        violation(
            "cursor of partition "
                + p
                + " at "
                + lag.position()
                + " past the log's end "
                + verified[p]);
      }
      cursor[p] = Math.max(cursor[p], lag.position());
    }
  }

  private void checkLog(int p) {
    while (true) {
      List<StoredEvent> more = store.read(topicId, p, verified[p], 500);
      if (more.isEmpty()) {
        return;
      }
      for (StoredEvent e : more) {
        if (e.sequence() != verified[p] + 1) {
          violation("partition " + p + " jumps from " + verified[p] + " to " + e.sequence());
        }
        verified[p] = e.sequence();
        logged(p, e);
      }
    }
  }

  private void logged(int p, StoredEvent e) {
    Commit c = attempts.get(e.id());
    Message m = attemptMessage.get(e.id());
    if (c == null || m == null) {
      violation("partition " + p + " holds event " + e.id() + " that no producer wrote");
      return;
    }
    if (c == Commit.ROLLED_BACK) {
      violation(
          "event "
              + e.id()
              + " ("
              + m.idempotencyKey()
              + ") is in the log though its "
              + "transaction rolled back");
    }
    UUID before = logged.putIfAbsent(m.idempotencyKey(), e.id());
    if (before != null) {
      violation(
          "message "
              + m.idempotencyKey()
              + " is in the log twice: "
              + before
              + " and "
              + e.id()
              + " (same idempotency key)");
    }
    loggedById.put(e.id(), m);
    Integer last = lastLoggedN.put(m.key(), m.n());
    if (last != null && last >= m.n()) {
      violation("key " + m.key() + ": message " + m.n() + " after " + last + " in the log");
    }
    Integer other = partitionOfKey.putIfAbsent(m.key(), p);
    if (other != null && other != p) {
      violation("key " + m.key() + " is in partitions " + other + " and " + p);
    }
  }

  /** After a purge: the first event the subscription has not settled is still readable. */
  void checkRetained() {
    for (int p = 0; p < partitions; p++) {
      if (verified[p] > cursor[p]) {
        List<StoredEvent> next = store.read(topicId, p, cursor[p], 1);
        if (next.isEmpty() || next.get(0).sequence() != cursor[p] + 1) {
          violation(
              "retention dropped event "
                  + (cursor[p] + 1)
                  + " of partition "
                  + p
                  + " that the subscription has not settled");
        }
      }
    }
  }

  // ------------------------------------------------------------------ the end

  /** Whether every partition's cursor is at its log's end. */
  boolean settledAll() {
    for (int p = 0; p < partitions; p++) {
      if (cursor[p] < verified[p]) {
        return false;
      }
    }
    return true;
  }

  /** Checks the end state after the drain, and counts. */
  Counts finish(Set<UUID> deadLettered) {
    for (String k : acked) {
      if (!logged.containsKey(k)) {
        violation("message " + k + " was acknowledged to its producer but is not in the log");
      }
    }
    int handled = 0;
    int duplicates = 0;
    for (Map.Entry<UUID, Message> e : loggedById.entrySet()) {
      Message m = e.getValue();
      int n = effects.getOrDefault(e.getKey(), 0);
      if (m.poison()) {
        if (n > 0) {
          violation("poison message " + m.idempotencyKey() + " had an effect");
        }
        if (!deadLettered.contains(e.getKey())) {
          violation("poison message " + m.idempotencyKey() + " is not dead-lettered");
        }
      } else {
        if (n == 0) {
          violation("message " + m.idempotencyKey() + " was never handled");
        } else {
          handled++;
          duplicates += n - 1;
        }
        if (deadLettered.contains(e.getKey())) {
          violation("message " + m.idempotencyKey() + " is dead-lettered but not poison");
        }
      }
    }
    int bound = transactional ? 0 : incidents * Simulation.MAX_BATCH;
    if (duplicates > bound) {
      violation(
          duplicates
              + " duplicate handlings, more than the "
              + bound
              + " that "
              + incidents
              + " incidents allow");
    }
    int inLog = logged.size();
    return new Counts(
        acked.size(), unknown.size(), inLog, handled, deadLettered.size(), duplicates, bound);
  }

  record Counts(
      int published,
      int unknown,
      int logged,
      int handled,
      int deadLettered,
      int duplicates,
      int bound) {}
}
