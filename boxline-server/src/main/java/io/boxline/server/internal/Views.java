package io.boxline.server.internal;

import io.boxline.DeadLetter;
import io.boxline.Event;
import io.boxline.FailureCounts;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** How Boxline's types look in the HTTP API's JSON (field names are part of the API). */
final class Views {
  private Views() {}

  static Map<String, Object> topic(TopicInfo t) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", t.name().toString());
    m.put("partitions", t.partitions());
    m.put("sequencing", t.sequencing().name().toLowerCase(Locale.ROOT).replace('_', '-'));
    m.put("createdAt", time(t.createdAt()));
    return m;
  }

  static Map<String, Object> topicState(TopicState s) {
    Map<String, Object> m = topic(s.topic());
    m.put("retention", retention(s.retention()));
    m.put("heads", s.heads());
    m.put("events", s.events());
    return m;
  }

  static Map<String, Object> retention(RetentionPolicy r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("maxAge", r.maxAge() == null ? null : r.maxAge().toString());
    m.put("keepUnconsumed", r.keepUnconsumed());
    m.put("maxEventsPerPartition", r.maxEventsPerPartition());
    m.put("abandonAfter", r.abandonAfter() == null ? null : r.abandonAfter().toString());
    return m;
  }

  static Map<String, Object> subscription(SubscriptionInfo s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", s.name());
    List<String> topics = new ArrayList<>();
    s.topics().forEach(t -> topics.add(t.toString()));
    m.put("topics", topics);
    m.put("start", start(s.start()));
    m.put("createdAt", time(s.createdAt()));
    m.put("lastActive", time(s.lastActive()));
    return m;
  }

  static Map<String, Object> lag(PartitionLag l, Instant now) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("topic", l.topic().toString());
    m.put("partition", l.partition());
    m.put("head", l.lastSequence());
    m.put("cursor", l.position());
    m.put("lag", l.backlog());
    Duration age = l.age(now);
    m.put("lagSeconds", age == null ? 0.0 : age.toMillis() / 1000.0);
    m.put("oldestUnhandledAt", time(l.oldestUnhandledAt()));
    return m;
  }

  static Map<String, Object> group(GroupState g) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("subscription", g.subscription());
    m.put("policy", policy(g.policy()));
    List<Object> members = new ArrayList<>();
    for (GroupState.Member x : g.members()) {
      Map<String, Object> mm = new LinkedHashMap<>();
      mm.put("id", x.id());
      mm.put("weight", x.weight());
      mm.put("lastCheckIn", time(x.lastCheckIn()));
      mm.put("deadline", time(x.deadline()));
      mm.put("leases", x.leases());
      mm.put("host", x.host());
      mm.put("process", x.process());
      List<Object> calls = new ArrayList<>();
      for (GroupState.InFlight f : x.inFlight()) {
        Map<String, Object> fm = new LinkedHashMap<>();
        fm.put("topic", f.topic().toString());
        fm.put("partition", f.partition());
        fm.put("fromSequence", f.fromSequence());
        fm.put("toSequence", f.toSequence());
        fm.put("events", f.events());
        fm.put("startedAt", time(f.startedAt()));
        calls.add(fm);
      }
      mm.put("inFlight", calls);
      members.add(mm);
    }
    m.put("members", members);
    List<Object> partitions = new ArrayList<>();
    for (GroupState.Partition p : g.partitions()) {
      Map<String, Object> pm = lag(p.lag(), g.readAt());
      pm.put("owner", p.owner());
      pm.put("epoch", p.epoch());
      pm.put("status", p.owner() == null ? null : p.releasing() ? "RELEASING" : "ACTIVE");
      pm.put("since", time(p.since()));
      partitions.add(pm);
    }
    m.put("partitions", partitions);
    m.put("readAt", time(g.readAt()));
    return m;
  }

  static Map<String, Object> policy(GroupPolicy p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("checkInRate", p.checkInRate());
    m.put("minCheckInInterval", p.minCheckInInterval().toString());
    m.put("deadlineMultiplier", p.deadlineMultiplier());
    m.put("slack", p.slack());
    m.put("releaseGrace", p.releaseGrace().toString());
    m.put("idleRelease", p.idleRelease().toString());
    m.put("batchSize", p.batchSize());
    m.put("maxCheckInInterval", p.maxCheckInInterval().toString());
    m.put("maxMembers", p.maxMembers());
    return m;
  }

  static Map<String, Object> event(Event e) {
    return event(e, false);
  }

  /**
   * An event; a JSON payload goes into the answer as stored ({@link Payloads#inline}), any other as
   * base64; with {@code raw} every payload is the stored bytes in base64.
   */
  static Map<String, Object> event(Event e, boolean raw) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", e.id().toString());
    m.put("topic", e.topic().toString());
    m.put("partition", e.partition());
    m.put("sequence", e.sequence());
    m.put("key", e.key());
    m.put("type", e.type());
    m.put("source", e.source());
    m.put("contentType", e.contentType());
    m.put("headers", e.headers());
    m.put("createdAt", time(e.createdAt()));
    m.put("deliverAt", time(e.deliverAt()));
    Object json = raw ? null : Payloads.inline(e.payload(), e.contentType());
    if (json != null) {
      m.put("payload", json);
    } else {
      m.put(
          "payloadBase64",
          e.payload() == null ? null : Base64.getEncoder().encodeToString(e.payload()));
    }
    return m;
  }

  static Map<String, Object> retrying(RetryingEvent r, boolean raw) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("subscription", r.subscription());
    m.put("event", event(r.event(), raw));
    m.put("behindItsKey", r.behindItsKey());
    m.put("attempts", r.attempts());
    m.put("nextAttemptAt", time(r.nextAttemptAt()));
    m.put("lastError", r.lastError());
    m.put("firstFailedAt", time(r.firstFailedAt()));
    return m;
  }

  static Map<String, Object> deadLetter(DeadLetter d, boolean raw) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("subscription", d.subscription());
    m.put("event", event(d.event(), raw));
    m.put("attempts", d.attempts());
    m.put("lastError", d.lastError());
    m.put("firstFailedAt", time(d.firstFailedAt()));
    m.put("deadAt", time(d.deadAt()));
    return m;
  }

  static Map<String, Object> failures(FailureCounts f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("subscription", f.subscription());
    m.put("retrying", f.retrying());
    m.put("waiting", f.waiting());
    m.put("deadLetters", f.deadLetters());
    return m;
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

  static Map<String, Object> of(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}
