package io.boxline.internal;

import io.boxline.GroupPolicy;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Coordination for consumers in one JVM: a synchronized map. Epochs start at the clock in
 * microseconds, so a new instance (after a restart) never hands out an epoch lower than one a
 * cursor in the database has seen.
 */
public final class InMemoryCoordination implements CoordinationStore {
  private final Clock clock;
  private final long epochBase;

  /**
   * The highest epoch handed out: a slot made anew (a group renamed, its leases forced away) starts
   * above it, since the cursors it fences may carry any epoch of this instance.
   */
  private long highestEpoch;

  private final Map<String, Group> groups = new HashMap<>();
  private GroupPolicy clusterPolicy;
  private long policyChanges;

  private static final class Group {
    final Map<String, MemberRow> members = new HashMap<>();
    final Map<PartitionKey, Slot> slots = new HashMap<>();
    GroupPolicy policy;
  }

  private record MemberRow(
      double weight, long expiresAtMillis, long lastCheckInMillis, MemberStatus status) {}

  private static final class Slot {
    long epoch;
    String owner;
    boolean releasing;
    Instant since;
  }

  public InMemoryCoordination(Clock clock) {
    this.clock = clock;
    this.epochBase = clock.millis() * 1000;
  }

  @Override
  public String describe() {
    return "in-memory coordination";
  }

  private Group group(String name) {
    return groups.computeIfAbsent(name, n -> new Group());
  }

  @Override
  public synchronized GroupView checkIn(
      String group, String member, double weight, Duration ttl, MemberStatus status) {
    Group g = group(group);
    long now = clock.millis();
    g.members.put(member, new MemberRow(weight, now + ttl.toMillis(), now, status));
    List<Member> live = new ArrayList<>();
    // forget long-dead members
    g.members.entrySet().removeIf(e -> e.getValue().expiresAtMillis() < now - 60_000);
    g.members.forEach(
        (id, v) -> {
          if (v.expiresAtMillis() >= now) {
            live.add(new Member(id, v.weight()));
          }
        });
    List<Lease> leases = new ArrayList<>();
    g.slots.forEach(
        (k, s) -> {
          if (s.owner != null) {
            leases.add(
                new Lease(k.topicId(), k.partition(), s.owner, s.epoch, s.releasing, s.since));
          }
        });
    return new GroupView(live, leases, Instant.ofEpochMilli(now), policyChanges);
  }

  @Override
  public synchronized GroupView view(String group) {
    Group g = group(group);
    long now = clock.millis();
    List<Member> live = new ArrayList<>();
    g.members.forEach(
        (id, v) -> {
          if (v.expiresAtMillis() >= now) {
            live.add(
                new Member(
                    id,
                    v.weight(),
                    Instant.ofEpochMilli(v.lastCheckInMillis()),
                    Instant.ofEpochMilli(v.expiresAtMillis()),
                    v.status()));
          }
        });
    live.sort(java.util.Comparator.comparing(Member::id));
    List<Lease> leases = new ArrayList<>();
    g.slots.forEach(
        (k, s) -> {
          if (s.owner != null) {
            leases.add(
                new Lease(k.topicId(), k.partition(), s.owner, s.epoch, s.releasing, s.since));
          }
        });
    return new GroupView(live, leases, Instant.ofEpochMilli(now), policyChanges);
  }

  @Override
  public synchronized void leave(String group, String member) {
    Group g = group(group);
    g.members.remove(member);
    g.slots
        .values()
        .forEach(
            s -> {
              if (member.equals(s.owner)) {
                s.owner = null;
                s.releasing = false;
              }
            });
  }

  @Override
  public synchronized List<java.util.OptionalLong> acquire(
      String group, List<PartitionKey> partitions, String member) {
    Group g = group(group);
    List<java.util.OptionalLong> out = new java.util.ArrayList<>(partitions.size());
    for (PartitionKey k : partitions) {
      Slot s = g.slots.computeIfAbsent(k, x -> newSlot());
      if (s.owner == null) {
        s.owner = member;
        s.epoch++;
        s.releasing = false;
        s.since = clock.instant();
        highestEpoch = Math.max(highestEpoch, s.epoch);
        out.add(java.util.OptionalLong.of(s.epoch));
      } else {
        out.add(java.util.OptionalLong.empty());
      }
    }
    return out;
  }

  private Slot newSlot() {
    Slot s = new Slot();
    s.epoch = Math.max(epochBase, highestEpoch);
    return s;
  }

  @Override
  public synchronized boolean markReleasing(
      String group, PartitionKey partition, String member, long epoch) {
    Slot s = group(group).slots.get(partition);
    if (s == null || !member.equals(s.owner) || s.epoch != epoch) {
      return false;
    }
    s.releasing = true;
    s.since = clock.instant();
    return true;
  }

  @Override
  public synchronized boolean release(
      String group, PartitionKey partition, String member, long epoch) {
    Slot s = group(group).slots.get(partition);
    if (s == null || !member.equals(s.owner) || s.epoch != epoch) {
      return false;
    }
    s.owner = null;
    s.releasing = false;
    return true;
  }

  @Override
  public synchronized int reclaim(String group, Set<String> liveMembers, Duration grace) {
    int n = 0;
    Instant cutoff = clock.instant().minus(grace);
    for (Slot s : group(group).slots.values()) {
      if (s.owner != null
          && (!liveMembers.contains(s.owner) || (s.releasing && s.since.isBefore(cutoff)))) {
        s.owner = null;
        s.releasing = false;
        n++;
      }
    }
    return n;
  }

  @Override
  public synchronized int renew(String group, java.util.Collection<String> members, Duration ttl) {
    Group g = group(group);
    long now = clock.millis();
    int n = 0;
    for (String id : new java.util.HashSet<>(members)) {
      MemberRow m = g.members.get(id);
      if (m != null && m.expiresAtMillis() > now) {
        g.members.put(id, new MemberRow(m.weight(), now + ttl.toMillis(), now, m.status()));
        n++;
      }
    }
    return n;
  }

  @Override
  public synchronized List<String> liveMembers(String group) {
    long now = clock.millis();
    List<String> live = new ArrayList<>();
    group(group)
        .members
        .forEach(
            (id, m) -> {
              if (m.expiresAtMillis() > now) {
                live.add(id);
              }
            });
    live.sort(null);
    return live;
  }

  @Override
  public synchronized int forceRelease(String group, Collection<PartitionKey> partitions) {
    int n = 0;
    for (PartitionKey k : partitions) {
      Slot s = group(group).slots.get(k);
      if (s != null && s.owner != null) {
        s.owner = null;
        s.releasing = false;
        n++;
      }
    }
    return n;
  }

  @Override
  public synchronized GroupPolicy policy(String group) {
    GroupPolicy p = group(group).policy;
    return p != null ? p : clusterPolicy != null ? clusterPolicy : GroupPolicy.DEFAULT;
  }

  @Override
  public synchronized void setPolicy(Optional<String> group, Optional<GroupPolicy> policy) {
    policyChanges++;
    if (group.isPresent()) {
      group(group.get()).policy = policy.orElse(null);
    } else {
      clusterPolicy = policy.orElse(null);
    }
  }

  /** Forgets the group: members, leases and its policy override (its subscription is deleted). */
  public synchronized void forget(String group) {
    if (groups.remove(group) != null) {
      policyChanges++;
    }
  }

  @Override
  public void close() {}
}
