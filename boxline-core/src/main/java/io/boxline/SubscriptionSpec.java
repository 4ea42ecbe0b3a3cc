package io.boxline;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** What to create: a named subscription over one or more topics, and where it starts. */
public final class SubscriptionSpec {
  private final String name;
  private final List<TopicName> topics;
  private final StartPosition start;

  private SubscriptionSpec(String name, List<TopicName> topics, StartPosition start) {
    this.name = name;
    this.topics = topics;
    this.start = start;
  }

  public static SubscriptionSpec of(String name, TopicName... topics) {
    Names.requireSubscriptionName(name);
    if (topics.length == 0) {
      throw new ValidationException("subscription '" + name + "' needs at least one topic");
    }
    List<TopicName> list = new ArrayList<>();
    for (TopicName t : topics) {
      Objects.requireNonNull(t, "topic");
      if (list.contains(t)) {
        throw new ValidationException("subscription '" + name + "' lists topic '" + t + "' twice");
      }
      list.add(t);
    }
    return new SubscriptionSpec(name, List.copyOf(list), StartPosition.earliest());
  }

  public SubscriptionSpec startAt(StartPosition start) {
    return new SubscriptionSpec(name, topics, Objects.requireNonNull(start, "start"));
  }

  public String name() {
    return name;
  }

  public List<TopicName> topics() {
    return topics;
  }

  public StartPosition start() {
    return start;
  }
}
