package io.boxline.micrometer;

import io.boxline.TopicName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/** What a relay handed to one (sink, topic): time and events, by outcome. */
final class SinkMeters {
  final Timer success;
  final Timer failure;
  final Counter successEvents;
  final Counter failureEvents;

  SinkMeters(MeterRegistry registry, String sink, TopicName topic) {
    Tags tags = Tags.of("sink", sink, "topic", topic.toString());
    success = timer(registry, tags.and("outcome", "success"));
    failure = timer(registry, tags.and("outcome", "failure"));
    successEvents = events(registry, tags.and("outcome", "success"));
    failureEvents = events(registry, tags.and("outcome", "failure"));
  }

  private static Timer timer(MeterRegistry registry, Tags tags) {
    return Timer.builder("boxline.sink.duration")
        .tags(tags)
        .description("Time a relay took to hand events to a sink")
        .register(registry);
  }

  private static Counter events(MeterRegistry registry, Tags tags) {
    return Counter.builder("boxline.sink.events")
        .tags(tags)
        .description("Events a relay handed to a sink")
        .baseUnit("events")
        .register(registry);
  }
}
