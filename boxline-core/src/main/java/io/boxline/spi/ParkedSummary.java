package io.boxline.spi;

import java.time.Instant;
import java.util.Set;

/**
 * What a partition has parked for a subscription.
 *
 * @param blockedKeys keys whose new events must be parked behind earlier ones
 * @param nextDue when the earliest parked event is due, or null when none is waiting for a retry
 */
public record ParkedSummary(Set<String> blockedKeys, Instant nextDue) {}
