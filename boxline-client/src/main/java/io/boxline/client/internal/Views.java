package io.boxline.client.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.DeadLetter;
import io.boxline.Event;
import io.boxline.FailureCounts;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.RetryingEvent;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The server's JSON (its {@code Views}) read back into Boxline's records, and Boxline's values
 * written the way the server reads them. Ids the API does not show (a topic's or subscription's
 * database id) are 0.
 */
final class Views {
  private Views() {}

  static <T> List<T> list(JsonNode array, Function<JsonNode, T> each) {
    List<T> out = new ArrayList<>();
    if (array != null && array.isArray()) {
      array.forEach(n -> out.add(each.apply(n)));
    }
    return out;
  }

  static TopicInfo topic(JsonNode n) {
    return new TopicInfo(
        TopicName.parse(n.get("name").asText()),
        0,
        n.get("partitions").asInt(),
        time(n, "createdAt"),
        sequencing(text(n, "sequencing")));
  }

  static Sequencing sequencing(String s) {
    return s == null
        ? Sequencing.SEQUENCER
        : Sequencing.valueOf(s.toUpperCase(Locale.ROOT).replace('-', '_'));
  }

  static String sequencing(Sequencing s) {
    return s.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  static TopicState topicState(JsonNode n) {
    return new TopicState(
        topic(n), retention(n.get("retention")), list(n.get("heads"), JsonNode::asLong));
  }

  static RetentionPolicy retention(JsonNode n) {
    if (n == null || n.isNull()) {
      return RetentionPolicy.forever();
    }
    Duration abandon = duration(n, "abandonAfter");
    return new RetentionPolicy(
        duration(n, "maxAge"),
        n.path("keepUnconsumed").asBoolean(true),
        n.path("maxEventsPerPartition").asLong(0),
        abandon == null ? RetentionPolicy.DEFAULT_ABANDON_AFTER : abandon);
  }

  static Map<String, Object> retention(RetentionPolicy r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("maxAge", r.maxAge() == null ? null : r.maxAge().toString());
    m.put("keepUnconsumed", r.keepUnconsumed());
    m.put("maxEventsPerPartition", r.maxEventsPerPartition());
    m.put("abandonAfter", r.abandonAfter().toString());
    return m;
  }

  static SubscriptionInfo subscription(JsonNode n) {
    return new SubscriptionInfo(
        n.get("name").asText(),
        0,
        list(n.get("topics"), t -> TopicName.parse(t.asText())),
        time(n, "createdAt"),
        start(text(n, "start")),
        time(n, "lastActive"));
  }

  static StartPosition start(String s) {
    if (s == null) {
      return null;
    }
    switch (s) {
      case "earliest":
        return StartPosition.earliest();
      case "latest":
        return StartPosition.latest();
      default:
        return StartPosition.at(Instant.parse(s));
    }
  }

  static String start(StartPosition p) {
    switch (p.kind()) {
      case EARLIEST:
        return "earliest";
      case LATEST:
        return "latest";
      default:
        return p.timestamp().toString();
    }
  }

  static PartitionLag lag(JsonNode n) {
    return new PartitionLag(
        TopicName.parse(n.get("topic").asText()),
        n.get("partition").asInt(),
        n.get("cursor").asLong(),
        n.get("head").asLong(),
        time(n, "oldestUnhandledAt"));
  }

  static GroupState group(JsonNode n) {
    List<GroupState.Member> members =
        list(
            n.get("members"),
            m ->
                new GroupState.Member(
                    m.get("id").asText(),
                    m.path("weight").asDouble(1),
                    time(m, "lastCheckIn"),
                    time(m, "deadline"),
                    m.path("leases").asInt(),
                    text(m, "host"),
                    text(m, "process"),
                    list(
                        m.get("inFlight"),
                        f ->
                            new GroupState.InFlight(
                                TopicName.parse(f.get("topic").asText()),
                                f.get("partition").asInt(),
                                f.get("fromSequence").asLong(),
                                f.get("toSequence").asLong(),
                                f.get("events").asInt(),
                                time(f, "startedAt")))));
    List<GroupState.Partition> partitions =
        list(
            n.get("partitions"),
            p ->
                new GroupState.Partition(
                    lag(p),
                    text(p, "owner"),
                    p.path("epoch").asLong(),
                    "RELEASING".equals(text(p, "status")),
                    time(p, "since")));
    return new GroupState(
        n.get("subscription").asText(),
        policy(n.get("policy")),
        members,
        partitions,
        time(n, "readAt"));
  }

  static GroupPolicy policy(JsonNode n) {
    if (n == null || n.isNull()) {
      return GroupPolicy.DEFAULT;
    }
    GroupPolicy d = GroupPolicy.DEFAULT;
    return new GroupPolicy(
        n.path("checkInRate").asDouble(d.checkInRate()),
        orElse(duration(n, "minCheckInInterval"), d.minCheckInInterval()),
        n.path("deadlineMultiplier").asDouble(d.deadlineMultiplier()),
        n.path("slack").asDouble(d.slack()),
        orElse(duration(n, "releaseGrace"), d.releaseGrace()),
        orElse(duration(n, "idleRelease"), d.idleRelease()),
        n.path("batchSize").asInt(d.batchSize()),
        orElse(duration(n, "maxCheckInInterval"), d.maxCheckInInterval()),
        n.path("maxMembers").asInt(d.maxMembers()));
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

  static FailureCounts failures(JsonNode n) {
    return new FailureCounts(
        n.get("subscription").asText(),
        n.path("retrying").asLong(),
        n.path("waiting").asLong(),
        n.path("deadLetters").asLong());
  }

  /**
   * An event as the server shows it. The client asks for {@code payloadBase64} (the stored bytes);
   * an inline {@code payload} from an older server is taken as its JSON text.
   */
  static Event event(JsonNode n) {
    byte[] payload;
    JsonNode p = n.get("payload");
    JsonNode p64 = n.get("payloadBase64");
    if (p64 != null && !p64.isNull()) {
      payload = Base64.getDecoder().decode(p64.asText());
    } else if (p != null && !p.isNull()) {
      try {
        payload = HttpTransport.JSON.writeValueAsString(p).getBytes(StandardCharsets.UTF_8);
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    } else {
      payload = new byte[0];
    }
    Map<String, String> headers = new LinkedHashMap<>();
    JsonNode h = n.get("headers");
    if (h != null && h.isObject()) {
      h.fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
    }
    return new Event(
        UUID.fromString(n.get("id").asText()),
        TopicName.parse(n.get("topic").asText()),
        n.get("partition").asInt(),
        n.get("sequence").asLong(),
        text(n, "key"),
        text(n, "type"),
        text(n, "source"),
        text(n, "contentType"),
        payload,
        headers,
        time(n, "createdAt"),
        time(n, "deliverAt"));
  }

  static RetryingEvent retrying(JsonNode n) {
    return new RetryingEvent(
        n.get("subscription").asText(),
        event(n.get("event")),
        n.path("behindItsKey").asBoolean(false),
        n.path("attempts").asInt(),
        time(n, "nextAttemptAt"),
        text(n, "lastError"),
        time(n, "firstFailedAt"));
  }

  static io.boxline.DeadLetterReason deadLetterReason(JsonNode n) {
    return new io.boxline.DeadLetterReason(
        text(n, "reason"), n.path("count").asLong(), time(n, "firstDeadAt"), time(n, "lastDeadAt"));
  }

  static DeadLetter deadLetter(JsonNode n) {
    return new DeadLetter(
        n.get("subscription").asText(),
        event(n.get("event")),
        n.path("attempts").asInt(),
        text(n, "lastError"),
        time(n, "firstFailedAt"),
        time(n, "deadAt"));
  }

  static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  static Instant time(JsonNode n, String field) {
    String s = text(n, field);
    return s == null ? null : Instant.parse(s);
  }

  static Duration duration(JsonNode n, String field) {
    String s = text(n, field);
    return s == null ? null : io.boxline.Names.duration(s);
  }

  private static <T> T orElse(T value, T dflt) {
    return value == null ? dflt : value;
  }
}
