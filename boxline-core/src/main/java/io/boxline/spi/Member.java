package io.boxline.spi;

import java.time.Instant;

/**
 * A live member of a consumer group.
 *
 * @param lastCheckIn when it last checked in, where the store records it (else null)
 * @param deadline when it counts as gone unless it checks in again, where the store records it
 * @param status what it reported of itself at its last check-in ({@link MemberStatus#UNKNOWN} where
 *     the store does not keep it, or in the engine's own views)
 */
public record Member(
    String id, double weight, Instant lastCheckIn, Instant deadline, MemberStatus status) {

  public Member {
    status = status == null ? MemberStatus.UNKNOWN : status;
  }

  /** A member without a reported status. */
  public Member(String id, double weight, Instant lastCheckIn, Instant deadline) {
    this(id, weight, lastCheckIn, deadline, MemberStatus.UNKNOWN);
  }

  /** A member as a check-in reports it: without times. */
  public Member(String id, double weight) {
    this(id, weight, null, null, MemberStatus.UNKNOWN);
  }
}
