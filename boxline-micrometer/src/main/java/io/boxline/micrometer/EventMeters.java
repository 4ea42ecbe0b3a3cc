package io.boxline.micrometer;

import io.boxline.TopicName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/** The handler counters and timer of one (subscription, topic, event type). */
final class EventMeters {
  final Counter handled;
  final Counter failed;
  final Counter retried;
  final Counter deadLettered;
  final Counter malformed;
  final Timer duration;

  EventMeters(MeterRegistry registry, String subscription, TopicName topic, String type) {
    Tags tags = Tags.of("subscription", subscription, "topic", topic.toString(), "type", type);
    handled = counter(registry, "handled", tags, "Handler invocations that returned normally");
    failed = counter(registry, "failed", tags, "Handler invocations that threw");
    retried = counter(registry, "retried", tags, "Failed events scheduled for another attempt");
    deadLettered = counter(registry, "dead.lettered", tags, "Events that became dead letters");
    malformed =
        counter(
            registry,
            "malformed",
            tags,
            "Events read from rows that cannot be delivered as stored (see the log line)");
    duration =
        Timer.builder("boxline.handler.duration")
            .tags(tags)
            .description("Time the handler took for events it handled")
            .register(registry);
  }

  private static Counter counter(
      MeterRegistry registry, String what, Tags tags, String description) {
    return Counter.builder("boxline.events." + what)
        .tags(tags)
        .description(description)
        .baseUnit("events")
        .register(registry);
  }
}
