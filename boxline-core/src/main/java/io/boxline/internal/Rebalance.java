package io.boxline.internal;

import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The work-stealing rule, as a pure function of one member's view. Each member runs it on every
 * check-in:
 *
 * <ul>
 *   <li>active partitions = partitions with a backlog ∪ partitions leased by a live member;
 *   <li>fair share = weight / total weight × active; bounds floor(share × (1 − slack)) and
 *       ceil(share × (1 + slack));
 *   <li>over the upper bound: release the excess, least backlog first;
 *   <li>under it: take unleased active partitions, walking them from a random pivot so members that
 *       check in at the same time do not all reach for the same ones.
 * </ul>
 *
 * The upper bounds add up to at least the number of active partitions, so no active partition is
 * left unleased once every member has checked in.
 */
final class Rebalance {
  private Rebalance() {}

  /** What one member should do. */
  record Plan(int fairMin, int fairMax, List<PartitionKey> release, List<PartitionKey> acquire) {}

  /**
   * @param me this member
   * @param myWeight its weight
   * @param view members and leases, as just read
   * @param backlogged partitions known to have a backlog, with their backlog (events)
   * @param mine partitions this member holds and is not already releasing, with their backlog
   */
  static Plan plan(
      String me,
      double myWeight,
      GroupView view,
      Map<PartitionKey, Long> backlogged,
      Map<PartitionKey, Long> mine,
      double slack,
      Random random) {
    Set<String> live = new java.util.HashSet<>();
    double totalWeight = 0;
    for (Member m : view.members()) {
      live.add(m.id());
      totalWeight += m.weight();
    }
    if (!live.contains(me)) {
      live.add(me);
      totalWeight += myWeight;
    }
    Set<PartitionKey> leased = new java.util.HashSet<>();
    for (Lease l : view.leases()) {
      if (live.contains(l.owner())) {
        leased.add(PartitionKey.of(l.topicId(), l.partition()));
      }
    }
    Set<PartitionKey> active = new LinkedHashSet<>(backlogged.keySet());
    active.addAll(leased);
    active.addAll(mine.keySet());
    double share = active.isEmpty() ? 0 : myWeight / totalWeight * active.size();
    int max = (int) Math.ceil(share * (1 + slack) - 1e-9);
    int min = (int) Math.floor(share * (1 - slack) + 1e-9);
    List<PartitionKey> release = new ArrayList<>();
    List<PartitionKey> acquire = new ArrayList<>();
    // Above the upper bound: give all of the excess back at once (a member that started first and
    // took everything must not trickle it back one lease per check-in).
    int excess = Math.max(0, mine.size() - max);
    // Everyone within [min, max] is stable, but that can leave a member below its min while nobody
    // is above max (e.g. 7/22/31 for shares 10/20/30, or 10 against 21s for a share of 20.48).
    // Then members above their rounded-down share give way, one lease per check-in so shares settle
    // without overshooting, and nobody at or above it takes more.
    boolean starving = someoneStarving(me, view, active.size(), totalWeight, slack);
    int floorShare = (int) Math.floor(share + 1e-9);
    if (starving && mine.size() - excess > floorShare) {
      excess++;
    }
    if (excess > 0) {
      List<Map.Entry<PartitionKey, Long>> byBacklog = new ArrayList<>(mine.entrySet());
      byBacklog.sort(Map.Entry.comparingByValue(Comparator.naturalOrder()));
      for (int i = 0; i < excess; i++) {
        release.add(byBacklog.get(i).getKey());
      }
    } else {
      int target = starving ? Math.min(max, floorShare) : max;
      List<PartitionKey> free = new ArrayList<>();
      if (mine.size() < target) {
        for (PartitionKey p : active) {
          if (!leased.contains(p) && !mine.containsKey(p)) {
            free.add(p);
          }
        }
      }
      if (!free.isEmpty()) {
        free.sort(
            Comparator.comparingLong(PartitionKey::topicId)
                .thenComparingInt(PartitionKey::partition));
        int pivot = random.nextInt(free.size());
        for (int i = 0; i < free.size() && acquire.size() < target - mine.size(); i++) {
          acquire.add(free.get((pivot + i) % free.size()));
        }
      }
    }
    return new Plan(min, max, release, acquire);
  }

  /** Whether another live member holds fewer active leases than its lower bound. */
  private static boolean someoneStarving(
      String me, GroupView view, int active, double totalWeight, double slack) {
    Map<String, Integer> held = new HashMap<>();
    for (Lease l : view.leases()) {
      if (!l.releasing()) {
        held.merge(l.owner(), 1, Integer::sum);
      }
    }
    for (Member m : view.members()) {
      if (m.id().equals(me)) {
        continue;
      }
      int min = (int) Math.floor(m.weight() / totalWeight * active * (1 - slack) + 1e-9);
      if (held.getOrDefault(m.id(), 0) < min) {
        return true;
      }
    }
    return false;
  }

  /**
   * The member that should pick up a newly active, unleased partition at once: highest weighted
   * rendezvous score, so every member computes the same answer from the same member list and the
   * load spreads by weight.
   */
  static String pickupOwner(Collection<Member> members, PartitionKey p) {
    String best = null;
    double bestScore = Double.NEGATIVE_INFINITY;
    for (Member m : members) {
      long h = mix(m.id().hashCode() * 0x9E3779B97F4A7C15L ^ (p.topicId() << 20) ^ p.partition());
      double u = ((h >>> 11) + 1) / (double) (1L << 53); // (0, 1]
      double score = -m.weight() / Math.log(u == 1 ? Math.nextDown(1.0) : u);
      if (score > bestScore
          || (score == bestScore && (best == null || m.id().compareTo(best) < 0))) {
        bestScore = score;
        best = m.id();
      }
    }
    return best;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  static Map<PartitionKey, Lease> byPartition(Collection<Lease> leases) {
    Map<PartitionKey, Lease> out = new HashMap<>();
    for (Lease l : leases) {
      out.put(PartitionKey.of(l.topicId(), l.partition()), l);
    }
    return out;
  }
}
