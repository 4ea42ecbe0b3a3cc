package io.boxline.server.internal;

import com.fasterxml.jackson.databind.util.RawValue;
import io.boxline.DeadLetter;
import io.boxline.Event;
import io.boxline.FailureCounts;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.Names;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.RetryingEvent;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * How Boxline's types look in the HTTP API's JSON: each builds the {@link ApiBodies} record of its
 * answer.
 */
final class Views {
  private Views() {}

  static ApiBodies.Topic topic(TopicInfo t) {
    return new ApiBodies.Topic(
        t.name().toString(),
        t.partitions(),
        t.sequencing().name().toLowerCase(Locale.ROOT).replace('_', '-'),
        time(t.createdAt()));
  }

  static ApiBodies.TopicState topicState(TopicState s) {
    return new ApiBodies.TopicState(
        topic(s.topic()), retention(s.retention()), s.heads(), s.events());
  }

  static ApiBodies.Retention retention(RetentionPolicy r) {
    return new ApiBodies.Retention(
        r.maxAge() == null ? null : Names.durationText(r.maxAge()),
        r.keepUnconsumed(),
        r.maxEventsPerPartition(),
        r.abandonAfter() == null ? null : Names.durationText(r.abandonAfter()));
  }

  static ApiBodies.Subscription subscription(SubscriptionInfo s) {
    List<String> topics = new ArrayList<>();
    s.topics().forEach(t -> topics.add(t.toString()));
    return new ApiBodies.Subscription(
        s.name(), topics, start(s.start()), time(s.createdAt()), time(s.lastActive()));
  }

  static ApiBodies.Lag lag(PartitionLag l, Instant now) {
    Duration age = l.age(now);
    return new ApiBodies.Lag(
        l.topic().toString(),
        l.partition(),
        l.lastSequence(),
        l.position(),
        l.backlog(),
        age == null ? 0.0 : age.toMillis() / 1000.0,
        time(l.oldestUnhandledAt()));
  }

  static ApiBodies.Group group(GroupState g) {
    List<ApiBodies.GroupMember> members = new ArrayList<>();
    for (GroupState.Member x : g.members()) {
      List<ApiBodies.InFlightCall> calls = new ArrayList<>();
      for (GroupState.InFlight f : x.inFlight()) {
        calls.add(
            new ApiBodies.InFlightCall(
                f.topic().toString(),
                f.partition(),
                f.fromSequence(),
                f.toSequence(),
                f.events(),
                time(f.startedAt())));
      }
      members.add(
          new ApiBodies.GroupMember(
              x.id(),
              x.weight(),
              time(x.lastCheckIn()),
              time(x.deadline()),
              x.leases(),
              x.host(),
              x.process(),
              calls));
    }
    List<ApiBodies.GroupPartition> partitions = new ArrayList<>();
    for (GroupState.Partition p : g.partitions()) {
      partitions.add(
          new ApiBodies.GroupPartition(
              lag(p.lag(), g.readAt()),
              p.owner(),
              p.epoch(),
              p.owner() == null ? null : p.releasing() ? "RELEASING" : "ACTIVE",
              time(p.since())));
    }
    return new ApiBodies.Group(
        g.subscription(), policy(g.policy()), members, partitions, time(g.readAt()));
  }

  static ApiBodies.Policy policy(GroupPolicy p) {
    return new ApiBodies.Policy(
        p.checkInRate(),
        Names.durationText(p.minCheckInInterval()),
        p.deadlineMultiplier(),
        p.slack(),
        Names.durationText(p.releaseGrace()),
        Names.durationText(p.idleRelease()),
        p.batchSize(),
        Names.durationText(p.maxCheckInInterval()),
        p.maxMembers());
  }

  static ApiBodies.Event event(Event e) {
    return event(e, false);
  }

  /**
   * An event; a JSON payload goes into the answer as stored ({@link Payloads#inline}), any other as
   * base64; with {@code raw} every payload is the stored bytes in base64.
   */
  static ApiBodies.Event event(Event e, boolean raw) {
    RawValue json = raw ? null : Payloads.inline(e.payload(), e.contentType());
    return new ApiBodies.Event(
        e.id().toString(),
        e.topic().toString(),
        e.partition(),
        e.sequence(),
        e.key(),
        e.type(),
        e.source(),
        e.contentType(),
        e.headers(),
        time(e.createdAt()),
        time(e.deliverAt()),
        json,
        json != null || e.payload() == null
            ? null
            : Base64.getEncoder().encodeToString(e.payload()));
  }

  static ApiBodies.Retrying retrying(RetryingEvent r, boolean raw) {
    return new ApiBodies.Retrying(
        r.subscription(),
        event(r.event(), raw),
        r.behindItsKey(),
        r.attempts(),
        time(r.nextAttemptAt()),
        r.lastError(),
        time(r.firstFailedAt()));
  }

  static ApiBodies.DeadLetter deadLetter(DeadLetter d, boolean raw) {
    return new ApiBodies.DeadLetter(
        d.subscription(),
        event(d.event(), raw),
        d.attempts(),
        d.lastError(),
        time(d.firstFailedAt()),
        time(d.deadAt()));
  }

  static ApiBodies.Failures failures(FailureCounts f) {
    return new ApiBodies.Failures(f.subscription(), f.retrying(), f.waiting(), f.deadLetters());
  }

  /** earliest, latest or the ISO time: what the API accepts as a start position. */
  static String start(io.boxline.StartPosition p) {
    if (p == null) {
      return null;
    }
    switch (p.kind()) {
      case EARLIEST:
        return "earliest";
      case LATEST:
        return "latest";
      default:
        return time(p.timestamp());
    }
  }

  static String time(Instant t) {
    return t == null ? null : t.toString();
  }
}
