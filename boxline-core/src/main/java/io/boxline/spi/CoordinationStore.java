package io.boxline.spi;

import io.boxline.GroupPolicy;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Membership, leases and policies of consumer groups (one group per subscription). Implementations:
 * the database (default), in memory (one JVM), etcd. All must pass {@code CoordinationBehaviour} in
 * the testkit.
 *
 * <p>Epochs must only grow per (group, partition), across releases and restarts of the store's
 * clients: the engine copies the epoch of every acquired lease onto the partition's cursor in the
 * database, and cursor commits are compare-and-set on it. That is what fences a consumer that lost
 * a lease, whichever store hands out the leases.
 */
public interface CoordinationStore extends AutoCloseable {

  /** A short description for logs. */
  String describe();

  /**
   * Records that {@code member} is alive until {@code ttl} from now (creating it if new) and
   * returns the live members and all held leases of the group. One round trip where the store
   * allows it. The store keeps {@code status} for {@link #view} (it may leave it out of the
   * check-in's own view).
   */
  GroupView checkIn(String group, String member, double weight, Duration ttl, MemberStatus status);

  /** A check-in that reports no status ({@link MemberStatus#UNKNOWN}). */
  default GroupView checkIn(String group, String member, double weight, Duration ttl) {
    return checkIn(group, member, weight, ttl, MemberStatus.UNKNOWN);
  }

  /**
   * The group as it stands, read without checking in: live members (with their last check-in,
   * deadline and reported status where the store records them) and every held lease. For operators;
   * the engine uses {@link #checkIn}.
   */
  GroupView view(String group);

  /** Removes the member and frees every lease it holds. */
  void leave(String group, String member);

  /**
   * Renews, in one write, the deadlines of those of {@code members} that are in the group now, to
   * {@code ttl} from now, changing nothing else about them; returns how many it renewed. A member
   * whose deadline has passed is not brought back: it checks in again. A store that cannot renew
   * many members in one write renews none and returns 0 (its members then check in one by one).
   */
  default int renew(String group, java.util.Collection<String> members, Duration ttl) {
    return 0;
  }

  /**
   * Takes each partition that nobody holds, for {@code member}, bumping its epoch. Returns, in
   * input order, the new epoch, or empty where the partition was held by someone (compare-and-set;
   * exactly one contender wins).
   */
  List<java.util.OptionalLong> acquire(String group, List<PartitionKey> partitions, String member);

  /** Marks a held lease RELEASING (only if {@code member} holds it at {@code epoch}). */
  boolean markReleasing(String group, PartitionKey partition, String member, long epoch);

  /**
   * Frees a lease (only if {@code member} holds it at {@code epoch}). The epoch is kept for the
   * next owner.
   */
  boolean release(String group, PartitionKey partition, String member, long epoch);

  /**
   * Frees leases whose owner is not in {@code liveMembers}, and RELEASING leases older than {@code
   * grace}. Returns how many were freed.
   */
  int reclaim(String group, Set<String> liveMembers, Duration grace);

  /**
   * The policy of the group: its override, else the cluster default, else {@link
   * GroupPolicy#DEFAULT}.
   */
  GroupPolicy policy(String group);

  /**
   * Sets the cluster default ({@code group} empty) or a group's override; {@code policy} empty
   * clears it.
   */
  void setPolicy(Optional<String> group, Optional<GroupPolicy> policy);

  /**
   * The ids of the group's live members (checked in and not expired), sorted; operator actions that
   * need an idle group ask this.
   */
  List<String> liveMembers(String group);

  /** Frees leases of these partitions regardless of owner (operator action; tests). */
  int forceRelease(String group, Collection<PartitionKey> partitions);

  @Override
  void close();
}
