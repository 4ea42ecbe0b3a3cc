package io.boxline.etcd.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.boxline.GroupPolicy;
import io.boxline.StoreException;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * Values are small JSON objects, readable with {@code etcdctl get --prefix /boxline/}:
 *
 * <ul>
 *   <li>member: {@code {"id":"w1","weight":2.0,"status":"v1\nhost\n12@host"}} (status as {@link
 *       MemberStatus#encode()} writes it; absent when the member reports none)
 *   <li>lease: {@code {"topic":7,"partition":3,"owner":"w1","epoch":1732170000000001,
 *       "releasing":false,"since":"2024-11-21T06:20:00.123Z"}}; {@code owner} is null when free
 *   <li>policy: the fields of {@link GroupPolicy}, durations in ISO-8601 ({@code "PT2S"})
 * </ul>
 */
public final class Values {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Values() {}

  /** The state of one partition's lease key. {@code owner} is null when nobody holds it. */
  public record Slot(
      long topicId, int partition, String owner, long epoch, boolean releasing, Instant since) {
    public PartitionKey key() {
      return PartitionKey.of(topicId, partition);
    }

    public boolean held() {
      return owner != null;
    }

    public Lease toLease() {
      return new Lease(topicId, partition, owner, epoch, releasing, since);
    }

    public Slot taken(String newOwner, long newEpoch, Instant now) {
      return new Slot(topicId, partition, newOwner, newEpoch, false, now);
    }

    public Slot markedReleasing(Instant now) {
      return new Slot(topicId, partition, owner, epoch, true, now);
    }

    /** Free, keeping the epoch for the next owner. */
    public Slot freed() {
      return new Slot(topicId, partition, null, epoch, false, since);
    }
  }

  public static ByteSequence member(Member m) {
    ObjectNode n = JSON.createObjectNode();
    n.put("id", m.id());
    n.put("weight", m.weight());
    if (m.status() != MemberStatus.UNKNOWN) {
      n.put("status", m.status().encode());
    }
    return write(n);
  }

  public static Member member(KeyValue kv) {
    JsonNode n = read(kv);
    try {
      JsonNode status = n.get("status");
      return new Member(
          text(n, "id"),
          n.get("weight").asDouble(),
          null,
          null,
          MemberStatus.decode(status == null || status.isNull() ? null : status.asText()));
    } catch (RuntimeException e) {
      throw corrupt(kv, e);
    }
  }

  public static ByteSequence slot(Slot s) {
    ObjectNode n = JSON.createObjectNode();
    n.put("topic", s.topicId());
    n.put("partition", s.partition());
    if (s.owner() == null) {
      n.putNull("owner");
    } else {
      n.put("owner", s.owner());
    }
    n.put("epoch", s.epoch());
    n.put("releasing", s.releasing());
    n.put("since", s.since().toString());
    return write(n);
  }

  public static Slot slot(KeyValue kv) {
    JsonNode n = read(kv);
    try {
      JsonNode owner = n.get("owner");
      return new Slot(
          n.get("topic").asLong(),
          n.get("partition").asInt(),
          owner == null || owner.isNull() ? null : owner.asText(),
          n.get("epoch").asLong(),
          n.get("releasing").asBoolean(),
          Instant.parse(text(n, "since")));
    } catch (RuntimeException e) {
      throw corrupt(kv, e);
    }
  }

  public static ByteSequence policy(GroupPolicy p) {
    ObjectNode n = JSON.createObjectNode();
    n.put("checkInRate", p.checkInRate());
    n.put("minCheckInInterval", p.minCheckInInterval().toString());
    n.put("deadlineMultiplier", p.deadlineMultiplier());
    n.put("slack", p.slack());
    n.put("releaseGrace", p.releaseGrace().toString());
    n.put("idleRelease", p.idleRelease().toString());
    n.put("batchSize", p.batchSize());
    n.put("maxCheckInInterval", p.maxCheckInInterval().toString());
    n.put("maxMembers", p.maxMembers());
    return write(n);
  }

  public static GroupPolicy policy(KeyValue kv) {
    JsonNode n = read(kv);
    try {
      GroupPolicy p =
          new GroupPolicy(
              n.get("checkInRate").asDouble(),
              Duration.parse(text(n, "minCheckInInterval")),
              n.get("deadlineMultiplier").asDouble(),
              n.get("slack").asDouble(),
              Duration.parse(text(n, "releaseGrace")),
              Duration.parse(text(n, "idleRelease")),
              n.path("batchSize").asInt(0)); // absent in policies written before it existed
      JsonNode cap = n.get("maxCheckInInterval");
      if (cap != null && !cap.isNull()) {
        p = p.withMaxCheckInInterval(Duration.parse(cap.asText()));
      }
      return p.withMaxMembers(n.path("maxMembers").asInt(0));
    } catch (RuntimeException e) {
      throw corrupt(kv, e);
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException("missing field " + field);
    }
    return v.asText();
  }

  private static ByteSequence write(ObjectNode n) {
    try {
      return ByteSequence.from(JSON.writeValueAsBytes(n));
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode " + n, e);
    }
  }

  private static JsonNode read(KeyValue kv) {
    try {
      JsonNode n = JSON.readTree(kv.getValue().getBytes());
      if (n == null || !n.isObject()) {
        throw new IllegalArgumentException("not a JSON object");
      }
      return n;
    } catch (IOException | RuntimeException e) {
      throw corrupt(kv, e);
    }
  }

  private static StoreException corrupt(KeyValue kv, Exception e) {
    return new StoreException(
        "etcd coordination: unreadable value at key "
            + kv.getKey().toString(StandardCharsets.UTF_8)
            + " ("
            + e.getMessage()
            + "): "
            + kv.getValue().toString(StandardCharsets.UTF_8),
        e);
  }
}
