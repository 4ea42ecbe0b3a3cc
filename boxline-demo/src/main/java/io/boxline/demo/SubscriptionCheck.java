package io.boxline.demo;

import io.boxline.Partitioner;
import io.boxline.demo.Deliveries.Delivery;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Checks what one subscription's handlers were given against what the producers committed: every
 * committed event, none of the rolled-back ones, each partition's sequences without a gap and each
 * customer's orders in the order they were committed.
 *
 * <p>Without a {@link Crash}, every event must come exactly once. With one, the member that took
 * over may deliver again what the killed member had handled but not yet committed: each such event
 * exactly twice (the killed member first, the survivor second), on partitions the killed member
 * held, at most one batch per partition and one partition per worker; a partition (and each of its
 * customers) may go back once, when the survivor resumes from the last committed cursor. Nothing
 * else: a gap, a third delivery or a redelivery by anyone else fails.
 */
final class SubscriptionCheck {
  /** What the producers committed and rolled back. */
  record Ledger(
      Map<UUID, OrderPlaced> committed,
      Set<UUID> rolledBack,
      Map<String, Long> lastSeqByCustomer,
      Map<String, Integer> partitionByCustomer,
      int partitions) {}

  /**
   * A member killed mid-run, and the redeliveries it explains. The bound: a worker drains one
   * partition at a time, one batch at a time, and a batch's cursor is committed before the
   * partition's next batch starts; so when a member dies, at most {@code concurrency} batches of
   * {@code batchSize} events were handled without their cursor commit.
   *
   * @param orphaned the partitions the killed member held at the kill
   */
  record Crash(
      String killed, String survivor, Set<Integer> orphaned, int concurrency, int batchSize) {
    int bound() {
      return concurrency * batchSize;
    }
  }

  private final Ledger ledger;
  private final Verdicts verdicts;

  SubscriptionCheck(Ledger ledger, Verdicts verdicts) {
    this.ledger = ledger;
    this.verdicts = verdicts;
  }

  /**
   * Checks the deliveries {@code all} of {@code s} ({@code crash} null: exactly once), with {@code
   * lastSequence} the last sequence of each partition; returns how many were duplicates.
   */
  long verify(String s, List<Delivery> all, Map<Integer, Long> lastSequence, Crash crash) {
    long duplicates = verifyDelivered(s, all, crash);
    verifyPartitions(s, all, lastSequence, crash);
    verifyKeys(s, all, crash);
    return duplicates;
  }

  /** Every committed event, no rolled-back or unknown one; duplicates only as the crash allows. */
  private long verifyDelivered(String s, List<Delivery> all, Crash crash) {
    Map<UUID, OrderPlaced> committed = ledger.committed();
    long n = committed.size();
    Map<UUID, List<Delivery>> byId = new HashMap<>();
    for (Delivery x : all) {
      byId.computeIfAbsent(x.id(), k -> new ArrayList<>(2)).add(x);
    }
    long duplicates = all.size() - byId.size();
    long missing = committed.keySet().stream().filter(id -> !byId.containsKey(id)).count();
    long rolledBackSeen = byId.keySet().stream().filter(ledger.rolledBack()::contains).count();
    long unknown =
        byId.keySet().stream()
            .filter(id -> !committed.containsKey(id))
            .filter(id -> !ledger.rolledBack().contains(id))
            .count();
    if (crash == null) {
      verdicts.check(
          all.size() == n && duplicates + missing + rolledBackSeen + unknown == 0,
          s + ": each of the " + n + " committed events exactly once, no rolled-back one",
          String.format(
              Locale.ROOT,
              "%s: %d deliveries for %d committed events: %d missing, %d duplicated,"
                  + " %d rolled back, %d unknown",
              s,
              all.size(),
              n,
              missing,
              duplicates,
              rolledBackSeen,
              unknown));
      return duplicates;
    }
    Map<Integer, Integer> explained = new TreeMap<>(); // partition -> redelivered events
    long unexplained = 0;
    for (List<Delivery> ds : byId.values()) {
      if (ds.size() == 1) {
        continue;
      }
      Delivery first = ds.get(0);
      if (ds.size() == 2
          && first.member().equals(crash.killed())
          && ds.get(1).member().equals(crash.survivor())
          && crash.orphaned().contains(first.partition())) {
        explained.merge(first.partition(), 1, Integer::sum);
      } else {
        unexplained += ds.size() - 1;
      }
    }
    boolean withinBound =
        duplicates <= crash.bound()
            && explained.size() <= crash.concurrency()
            && explained.values().stream().allMatch(k -> k <= crash.batchSize());
    String twice =
        duplicates == 0
            ? String.format(
                Locale.ROOT,
                "none twice: %s had nothing in flight when it was killed (the bound: %d = %d"
                    + " workers x %d per batch)",
                crash.killed(),
                crash.bound(),
                crash.concurrency(),
                crash.batchSize())
            : String.format(
                Locale.ROOT,
                "%d delivered twice (handled by %s, not yet committed when it was killed, and again"
                    + " by %s: %s), within the bound of %d (%d workers x %d per batch)",
                duplicates,
                crash.killed(),
                crash.survivor(),
                perPartition(explained),
                crash.bound(),
                crash.concurrency(),
                crash.batchSize());
    verdicts.check(
        missing + rolledBackSeen + unknown + unexplained == 0 && withinBound,
        s
            + ": each of the "
            + n
            + " committed events delivered, none lost, no rolled-back one; "
            + twice,
        String.format(
            Locale.ROOT,
            "%s: %d deliveries for %d committed events: %d missing, %d rolled back, %d unknown,"
                + " %d duplicated (%d not explained by the crash of %s; explained: %s; bound %d ="
                + " %d workers x %d per batch, at most one batch per partition)",
            s,
            all.size(),
            n,
            missing,
            rolledBackSeen,
            unknown,
            duplicates,
            unexplained,
            crash.killed(),
            perPartition(explained),
            crash.bound(),
            crash.concurrency(),
            crash.batchSize()));
    return duplicates;
  }

  /** Per partition: sequences 1, 2, 3, ... up to the partition's last, in delivery order. */
  private void verifyPartitions(
      String s, List<Delivery> all, Map<Integer, Long> lastSequence, Crash crash) {
    Map<Integer, Long> seen = new HashMap<>();
    Set<Integer> wentBack = new TreeSet<>();
    String problem = null;
    for (Delivery x : all) {
      long previous = seen.getOrDefault(x.partition(), 0L);
      if (x.sequence() != previous + 1 && problem == null) {
        boolean back = x.sequence() <= previous && mayGoBack(crash, x);
        if (!back || !wentBack.add(x.partition())) {
          problem =
              String.format(
                  Locale.ROOT,
                  "partition %d delivered %d after %d (by %s)",
                  x.partition(),
                  x.sequence(),
                  previous,
                  x.member());
        }
      }
      seen.put(x.partition(), x.sequence());
    }
    for (Map.Entry<Integer, Long> e : lastSequence.entrySet()) {
      long last = seen.getOrDefault(e.getKey(), 0L);
      if (last != e.getValue() && problem == null) {
        problem =
            "partition " + e.getKey() + " ended at " + last + " of " + e.getValue() + " events";
      }
    }
    String success = s + ": every partition delivered sequences 1, 2, 3, ... with no gap";
    if (crash != null && !wentBack.isEmpty()) {
      success +=
          "; "
              + wentBack.size()
              + " of "
              + crash.killed()
              + "'s partitions "
              + wentBack
              + " went back once, to redeliver what was in flight when "
              + crash.survivor()
              + " took over";
    }
    verdicts.check(problem == null, success, s + ": " + problem);
  }

  /** Per key: each customer's orders in the order they committed, on the key's partition. */
  private void verifyKeys(String s, List<Delivery> all, Crash crash) {
    Map<String, Long> seen = new HashMap<>();
    Set<String> wentBack = new TreeSet<>();
    String problem = null;
    for (Delivery x : all) {
      OrderPlaced o = x.order();
      long expected = seen.getOrDefault(o.customerId(), 0L) + 1;
      Integer partition = ledger.partitionByCustomer().get(o.customerId());
      int kafka = Partitioner.kafkaCompatible().partition(o.customerId(), ledger.partitions());
      if (problem == null) {
        if (!o.customerId().equals(x.key())) {
          problem = "event " + x.id() + " has key " + x.key() + ", expected " + o.customerId();
        } else if (partition == null || partition != x.partition() || kafka != x.partition()) {
          problem = o.customerId() + " delivered on partition " + x.partition();
        } else if (o.customerSeq() != expected
            && !(o.customerSeq() < expected
                && mayGoBack(crash, x)
                && wentBack.add(o.customerId()))) {
          problem =
              o.customerId()
                  + " delivered order #"
                  + o.customerSeq()
                  + " after #"
                  + (expected - 1)
                  + " (by "
                  + x.member()
                  + ")";
        }
      }
      seen.put(o.customerId(), o.customerSeq());
    }
    if (problem == null && !seen.equals(ledger.lastSeqByCustomer())) {
      problem = "some customers' last orders were not delivered";
    }
    String success =
        s
            + ": per key order kept for all "
            + seen.size()
            + " customers (each on its own partition, orders #1, #2, ... as committed";
    if (crash != null && !wentBack.isEmpty()) {
      success +=
          "; the latest orders of "
              + wentBack.size()
              + (wentBack.size() == 1 ? " customer" : " customers")
              + " redelivered once, in order";
    }
    verdicts.check(problem == null, success + ")", s + ": " + problem);
  }

  /** "2 on partition 4, 63 on partition 5" for {4=2, 5=63}; "none" when empty. */
  static String perPartition(Map<Integer, ? extends Number> counts) {
    if (counts.isEmpty()) {
      return "none";
    }
    List<String> parts = new ArrayList<>();
    new TreeMap<>(counts).forEach((p, n) -> parts.add(n + " on partition " + p));
    return String.join(", ", parts);
  }

  /** Whether {@code x} may go back to an earlier sequence: the survivor resuming an orphan. */
  private static boolean mayGoBack(Crash crash, Delivery x) {
    return crash != null
        && x.member().equals(crash.survivor())
        && crash.orphaned().contains(x.partition());
  }
}
