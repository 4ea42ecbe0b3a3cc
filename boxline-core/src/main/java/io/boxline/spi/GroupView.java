package io.boxline.spi;

import java.time.Instant;
import java.util.List;

/**
 * What a check-in returns: the live members (including the caller) and every held lease of the
 * group, read in the same round trip as the heartbeat was written.
 *
 * @param now the coordination store's clock at the check-in (lease times are on that clock)
 * @param policyStamp a value that changes whenever the group's effective policy may have changed,
 *     or {@link #NO_POLICY_STAMP} when the store does not report one (the engine then re-reads the
 *     policy every few check-ins instead of only on change)
 */
public record GroupView(List<Member> members, List<Lease> leases, Instant now, long policyStamp) {
  /** The store does not report a policy stamp. */
  public static final long NO_POLICY_STAMP = Long.MIN_VALUE;

  /** A view without a policy stamp. */
  public GroupView(List<Member> members, List<Lease> leases, Instant now) {
    this(members, leases, now, NO_POLICY_STAMP);
  }
}
