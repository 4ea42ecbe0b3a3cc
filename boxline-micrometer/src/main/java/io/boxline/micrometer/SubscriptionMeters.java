package io.boxline.micrometer;

import io.boxline.TopicName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One subscription's meters on this instance: partitions assigned, revoked, lost and held, and its
 * {@link EventMeters} by topic and event type.
 */
final class SubscriptionMeters {
  final Map<TopicName, Map<String, EventMeters>> events = new ConcurrentHashMap<>();
  final AtomicLong held = new AtomicLong();
  final Counter assigned;
  final Counter revoked;
  final Counter lost;

  SubscriptionMeters(MeterRegistry registry, String subscription) {
    assigned = partitions(registry, "assigned", subscription, "Partitions this instance took");
    revoked =
        partitions(
            registry, "revoked", subscription, "Partitions this instance handed back gracefully");
    lost =
        partitions(
            registry,
            "lost",
            subscription,
            "Partitions this instance lost without a hand-over (missed heartbeat, fenced commit)");
    Gauge.builder("boxline.partitions.held", held, AtomicLong::get)
        .tag("subscription", subscription)
        .description("Partitions this instance's consumers hold now")
        .baseUnit("partitions")
        .strongReference(true)
        .register(registry);
  }

  private static Counter partitions(
      MeterRegistry registry, String what, String subscription, String description) {
    return Counter.builder("boxline.partitions." + what)
        .tag("subscription", subscription)
        .description(description)
        .baseUnit("partitions")
        .register(registry);
  }
}
