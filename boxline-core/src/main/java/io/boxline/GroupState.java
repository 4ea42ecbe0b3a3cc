package io.boxline;

import java.time.Instant;
import java.util.List;

/**
 * A subscription's consumer group as it stands: who is in it, who holds which partition under which
 * epoch, and how far each partition has been read. Read without checking in; the members' and
 * leases' times are on the coordination store's clock.
 *
 * @param subscription the subscription (its group has the same name)
 * @param policy the group policy in force
 * @param members the live members, by id
 * @param partitions every partition of the subscription's topics, by topic and partition
 * @param readAt the coordination store's clock when the group was read
 */
public record GroupState(
    String subscription,
    GroupPolicy policy,
    List<Member> members,
    List<Partition> partitions,
    Instant readAt) {

  public GroupState {
    members = List.copyOf(members);
    partitions = List.copyOf(partitions);
  }

  /**
   * A live member of the group.
   *
   * @param lastCheckIn when it last checked in, or null where the coordination store does not
   *     record it (etcd)
   * @param deadline when it counts as gone unless it checks in again, or null where not recorded
   * @param leases how many partitions it holds
   * @param host the host it runs on, as it reported at its last check-in; null when unknown (remote
   *     members)
   * @param process its process ({@code pid@host}), as reported; null when unknown
   * @param inFlight its handler calls in progress at its last check-in, oldest first (at most 16):
   *     a call started long ago is a handler that hangs
   */
  public record Member(
      String id,
      double weight,
      Instant lastCheckIn,
      Instant deadline,
      int leases,
      String host,
      String process,
      List<InFlight> inFlight) {

    public Member {
      inFlight = List.copyOf(inFlight);
    }
  }

  /**
   * A handler call a member had in progress when it last checked in.
   *
   * @param fromSequence the first event's sequence
   * @param toSequence the last event's sequence
   * @param events how many events the call handles
   * @param startedAt when the call began, on the member's clock
   */
  public record InFlight(
      TopicName topic,
      int partition,
      long fromSequence,
      long toSequence,
      int events,
      Instant startedAt) {}

  /**
   * One partition of the subscription.
   *
   * @param lag its position, newest sequence and the age of its oldest unhandled event
   * @param owner the member holding its lease, or null when nobody does
   * @param epoch the lease's epoch (0 when nobody holds it)
   * @param releasing whether the owner is handing it over
   * @param since when the lease was taken or marked releasing (null when nobody holds it)
   */
  public record Partition(
      PartitionLag lag, String owner, long epoch, boolean releasing, Instant since) {}
}
