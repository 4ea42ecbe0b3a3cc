package io.boxline.spi;

import java.time.Instant;

/**
 * A live member of a consumer group.
 *
 * @param lastCheckIn when it last checked in, where the store records it (else null)
 * @param deadline when it counts as gone unless it checks in again, where the store records it
 */
public record Member(String id, double weight, Instant lastCheckIn, Instant deadline) {

  /** A member as a check-in reports it: without times. */
  public Member(String id, double weight) {
    this(id, weight, null, null);
  }
}
