package io.boxline.spi;

import java.time.Instant;
import java.util.List;

/**
 * What a check-in returns: the live members (including the caller) and every held lease of the
 * group, read in the same round trip as the heartbeat was written.
 *
 * @param now the coordination store's clock at the check-in (lease times are on that clock)
 */
public record GroupView(List<Member> members, List<Lease> leases, Instant now) {}
