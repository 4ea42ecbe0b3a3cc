package io.boxline.internal;

import io.boxline.GroupPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What {@link RemoteMembers} keeps in memory between a remote member's calls: each member's
 * session, whether its last fetch found nothing, the settlements of each group under way here, and
 * each group's policy and size as the check-ins here saw them; and the renewal of many sessions in
 * one write. Sessions are by group and member ({@link #key}).
 */
final class RemoteSessions {
  private final CoordinationStore coordination;

  record StampedPolicy(GroupPolicy policy, long stamp) {}

  /** Each group's policy as last read here, with the stamp of the check-in that saw it. */
  private final Map<String, StampedPolicy> groupPolicies = new ConcurrentHashMap<>();

  /** Each group's size as this process's last fetch saw it, for the deadline it writes. */
  private final Map<String, Integer> groupSizes = new ConcurrentHashMap<>();

  /**
   * What a member's last check-in here gave it: its leases, and the partitions some live member
   * held then ({@code taken}), until its next check-in is due. A fetch before then reads under
   * these leases without checking in, unless a partition that was free has events; a leave, a
   * refused settlement or the end of the interval ends the session.
   */
  record Session(
      long subscriptionId,
      double weight,
      long checkedInAt,
      long intervalNanos,
      Map<PartitionKey, Lease> leases,
      Set<PartitionKey> taken,
      long groupHash) {
    /** Nanoseconds until the next check-in is due, from {@code System.nanoTime()} values. */
    long dueIn(long now) {
      return checkedInAt + intervalNanos - now;
    }

    /** What is left of the interval, at least a millisecond. */
    Duration within(long now) {
      return Duration.ofNanos(Math.max(1_000_000, dueIn(now)));
    }
  }

  /** Each member's session, by group and member; ended sessions are swept once a minute. */
  private final Map<String, Session> sessions = new ConcurrentHashMap<>();

  /**
   * Members whose last fetch found nothing to deliver and nothing parked, by group and member: the
   * {@link EventWaiters#version} of their topics plus the group's settlements, taken before that
   * fetch read anything.
   */
  private final Map<String, Long> quiet = new ConcurrentHashMap<>();

  /** Settlements begun and ended here, by group: one moves every fetch of the group to read. */
  private final Map<String, AtomicLong> settles = new ConcurrentHashMap<>();

  private final AtomicLong lastSweep = new AtomicLong(System.nanoTime());

  RemoteSessions(CoordinationStore coordination) {
    this.coordination = coordination;
  }

  /** The key of a member's session and quiet mark: its group and its id. */
  static String key(String group, String member) {
    return group + "\n" + member;
  }

  Session get(String key) {
    return sessions.get(key);
  }

  void put(String key, Session session) {
    sessions.put(key, session);
  }

  /** The count the member's last fetch that found nothing was taken at, or null. */
  Long quietAt(String key) {
    return quiet.get(key);
  }

  void quiet(String key, long appends) {
    quiet.put(key, appends);
  }

  void notQuiet(String key) {
    quiet.remove(key);
  }

  StampedPolicy policy(String group) {
    return groupPolicies.get(group);
  }

  void policy(String group, StampedPolicy policy) {
    groupPolicies.put(group, policy);
  }

  int groupSize(String group, int otherwise) {
    return groupSizes.getOrDefault(group, otherwise);
  }

  void sawGroupSize(String group, int size) {
    groupSizes.put(group, size);
  }

  AtomicLong settles(String group) {
    return settles.computeIfAbsent(group, g -> new AtomicLong());
  }

  void sweep(long now) {
    long last = lastSweep.get();
    if (now - last >= 60_000_000_000L && lastSweep.compareAndSet(last, now)) {
      sessions.values().removeIf(s -> s.dueIn(now) <= 0);
      quiet.keySet().removeIf(k -> !sessions.containsKey(k));
    }
  }

  /** Which members the group has, as one number: the same set gives the same number. */
  static long groupHash(List<Member> members) {
    long sum = 0;
    for (Member m : members) {
      sum += m.id().hashCode() * 0x9E3779B97F4A7C15L;
    }
    return sum * 31 + members.size();
  }

  /** {@link io.boxline.RemoteConsumers#renew}: the members' check-ins, in one write when it may. */
  Map<String, Duration> renew(SubscriptionInfo sub, java.util.Collection<String> members) {
    String group = sub.name();
    long now = System.nanoTime();
    // When one member is into the second half of its interval, every member with a session here is
    // renewed with it: one write, and from then on the members fall due together.
    List<String> due = new ArrayList<>();
    boolean anyDue = false;
    for (String m : new HashSet<>(members)) {
      Session s = sessions.get(key(group, m));
      // Only members whose last fetch found nothing to do: one with parked events keeps fetching at
      // its check-ins, which is when it sees a retry fall due.
      if (s != null
          && s.subscriptionId() == sub.id()
          && s.dueIn(now) > 0
          && quiet.containsKey(key(group, m))) {
        due.add(m);
        anyDue |= s.dueIn(now) < s.intervalNanos() / 2;
      }
    }
    StampedPolicy known = groupPolicies.get(group);
    if (!anyDue || known == null) {
      return Map.of();
    }
    // A renewal stands for a check-in only while a check-in would change nothing: the same members
    // (no newcomer waits for its share, nobody left), no lease of a dead member or stuck releasing
    // (a check-in would reclaim it), and the policy the members checked in under.
    GroupView view = coordination.view(group);
    Set<String> live = new HashSet<>();
    view.members().forEach(m -> live.add(m.id()));
    for (Lease l : view.leases()) {
      if (!live.contains(l.owner())
          || (l.releasing()
              && l.since().plus(known.policy().releaseGrace()).isBefore(view.now()))) {
        return Map.of();
      }
    }
    if (!known.policy().equals(coordination.policy(group))) {
      return Map.of();
    }
    long groupNow = groupHash(view.members());
    due.removeIf(m -> sessions.get(key(group, m)).groupHash() != groupNow);
    // A partition with events that another member held at this one's check-in and has given up
    // since (a rebalance, a leave) is free: the check-in would take it, so the member checks in.
    Set<PartitionKey> leased = new HashSet<>();
    view.leases().forEach(l -> leased.add(new PartitionKey(l.topicId(), l.partition())));
    due.removeIf(m -> !leased.containsAll(sessions.get(key(group, m)).taken()));
    if (due.isEmpty()) {
      return Map.of();
    }
    Duration ttl = known.policy().deadline(groupSizes.getOrDefault(group, live.size()));
    int renewed = coordination.renew(group, due, ttl);
    if (renewed != due.size()) {
      // A store that cannot renew many at once, or a member that expired meanwhile: each of them
      // checks in with its next fetch.
      due.forEach(m -> endSession(group, m));
      return Map.of();
    }
    Map<String, Duration> out = new HashMap<>();
    for (String m : due) {
      Session s =
          sessions.computeIfPresent(
              key(group, m),
              (k, old) ->
                  new Session(
                      old.subscriptionId(),
                      old.weight(),
                      now,
                      old.intervalNanos(),
                      old.leases(),
                      old.taken(),
                      old.groupHash()));
      if (s != null) {
        out.put(m, Duration.ofNanos(s.intervalNanos()));
      }
    }
    return out;
  }

  /** Ends the member's session here: its next fetch checks in. */
  void endSession(String group, String member) {
    sessions.remove(key(group, member));
    quiet.remove(key(group, member));
  }
}
