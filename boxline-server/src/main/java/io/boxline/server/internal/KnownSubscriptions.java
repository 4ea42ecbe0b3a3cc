package io.boxline.server.internal;

import io.boxline.Admin;
import io.boxline.SubscriptionInfo;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Subscriptions as the members' routes last looked them up, kept for {@link #FRESH}: a member's
 * fetch between two check-ins then reads nothing at all. A subscription is immutable once created
 * except for its removal (or a forced topic delete taking a topic away from it); this server
 * forgets it at once when that happens here, and a server that did not do it sees it within {@link
 * #FRESH}.
 */
final class KnownSubscriptions {
  static final Duration FRESH = Duration.ofSeconds(2);

  private record Known(SubscriptionInfo info, long at) {}

  private final Admin admin;
  private final Map<String, Known> byName = new ConcurrentHashMap<>();

  KnownSubscriptions(Admin admin) {
    this.admin = admin;
  }

  /** The named subscription, read again when the copy here is older than {@link #FRESH}. */
  Optional<SubscriptionInfo> find(String name) {
    long now = System.nanoTime();
    Known k = byName.get(name);
    if (k != null && now - k.at() < FRESH.toNanos()) {
      return Optional.of(k.info());
    }
    Optional<SubscriptionInfo> found = admin.subscription(name);
    if (found.isPresent()) {
      byName.put(name, new Known(found.get(), now));
    } else {
      byName.remove(name);
    }
    return found;
  }

  /** A subscription deleted here: its next lookup reads. */
  void forget(String name) {
    byName.remove(name);
  }

  /** A topic deleted here (a forced delete changes the subscriptions that read it). */
  void forgetAll() {
    byName.clear();
  }
}
