package io.boxline.redis.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.boxline.GroupPolicy;
import io.boxline.StoreException;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the scripts store and return, readable with {@code redis-cli}:
 *
 * <ul>
 *   <li>weight: the decimal text of a double ({@code 2.5})
 *   <li>status: the last check-in (epoch millis, Redis's clock), a newline, then {@link
 *       MemberStatus#encode()}'s text (nothing when the member reports none)
 *   <li>lease: {@code <epoch> <releasing 0|1> <since millis> <owner>}, e.g. {@code 1732170000000001
 *       0 1732170000123 w1}; the owner is empty when the lease is free (the epoch stays for the
 *       next owner)
 *   <li>policy: JSON with the fields of {@link GroupPolicy}, durations in ISO-8601 ({@code
 *       "PT2S"}), as boxline-etcd stores it
 * </ul>
 *
 * Script replies arrive as nested lists of strings (Lua tables), read here into typed values.
 */
public final class Values {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Values() {}

  /** What a member's status field holds: its last check-in and its report. */
  public record Report(Instant lastCheckIn, MemberStatus status) {}

  /** A member's status text as the check-in script stores it (after its check-in time). */
  public static String status(MemberStatus s) {
    return s == null || MemberStatus.UNKNOWN.equals(s) ? "" : s.encode();
  }

  public static String weight(double w) {
    return Double.toString(w);
  }

  /** The view a check-in script returns: now, ids, weights, held leases. */
  public static GroupView checkIn(Object reply, long policyStamp) {
    List<Object> r = list(reply);
    Map<String, String> weights = map(r.get(2));
    List<Member> members = new ArrayList<>();
    for (Object id : list(r.get(1))) {
      String member = (String) id;
      members.add(new Member(member, weightOf(weights.get(member))));
    }
    return new GroupView(members, leases(r.get(3)), micros(r.get(0)), policyStamp);
  }

  /** The view the view script returns: now, ids with deadlines, weights, statuses, held leases. */
  public static GroupView view(Object reply, long policyStamp) {
    List<Object> r = list(reply);
    List<Object> live = list(r.get(1));
    Map<String, String> weights = map(r.get(2));
    Map<String, String> statuses = map(r.get(3));
    List<Member> members = new ArrayList<>(live.size() / 2);
    for (int i = 0; i + 1 < live.size(); i += 2) {
      String id = (String) live.get(i);
      Instant deadline = Instant.ofEpochMilli((long) Double.parseDouble((String) live.get(i + 1)));
      Report report = report(id, statuses.get(id));
      members.add(
          new Member(
              id, weightOf(weights.get(id)), report.lastCheckIn(), deadline, report.status()));
    }
    members.sort(Comparator.comparing(Member::id));
    return new GroupView(members, leases(r.get(4)), micros(r.get(0)), policyStamp);
  }

  private static Report report(String member, String value) {
    if (value == null) {
      return new Report(null, MemberStatus.UNKNOWN);
    }
    int newline = value.indexOf('\n');
    try {
      Instant at = Instant.ofEpochMilli(Long.parseLong(value.substring(0, newline)));
      String text = value.substring(newline + 1);
      return new Report(at, MemberStatus.decode(text.isEmpty() ? null : text));
    } catch (RuntimeException e) {
      throw corrupt("status of member " + member, value, e);
    }
  }

  private static double weightOf(String w) {
    // A weight lost with its hash (the member checks in again within its interval) counts as 1.
    return w == null ? 1.0 : Double.parseDouble(w);
  }

  /** Held leases from a flat list of field, value, field, value... */
  private static List<Lease> leases(Object flat) {
    List<Object> all = list(flat);
    List<Lease> out = new ArrayList<>(all.size() / 2);
    for (int i = 0; i + 1 < all.size(); i += 2) {
      String field = (String) all.get(i);
      String value = (String) all.get(i + 1);
      try {
        PartitionKey p = Keys.partition(field);
        String[] f = value.split(" ", 4);
        out.add(
            new Lease(
                p.topicId(),
                p.partition(),
                f[3],
                Long.parseLong(f[0]),
                "1".equals(f[1]),
                Instant.ofEpochMilli(Long.parseLong(f[2]))));
      } catch (RuntimeException e) {
        throw corrupt("lease " + field, value, e);
      }
    }
    return out;
  }

  /** An epoch the acquire script returned, or -1 where the lease was held. */
  public static long epoch(Object value) {
    return Long.parseLong((String) value);
  }

  /** Redis's clock, from the microseconds a script returned. */
  private static Instant micros(Object value) {
    long us = Long.parseLong((String) value);
    return Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000), Math.floorMod(us, 1_000_000) * 1000);
  }

  /** The list of a script's table reply (an empty table arrives as an empty list). */
  @SuppressWarnings("unchecked")
  public static List<Object> list(Object reply) {
    return reply == null ? List.of() : (List<Object>) reply;
  }

  private static Map<String, String> map(Object flat) {
    List<Object> all = list(flat);
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i + 1 < all.size(); i += 2) {
      out.put((String) all.get(i), (String) all.get(i + 1));
    }
    return out;
  }

  public static String policy(GroupPolicy p) {
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
    return n.toString();
  }

  /** A policy {@link #policy(GroupPolicy)} wrote; {@code where} names it in errors. */
  public static GroupPolicy policy(String where, String json) {
    try {
      JsonNode n = JSON.readTree(json);
      if (n == null || !n.isObject()) {
        throw new IllegalArgumentException("not a JSON object");
      }
      GroupPolicy p =
          new GroupPolicy(
              n.get("checkInRate").asDouble(),
              Duration.parse(text(n, "minCheckInInterval")),
              n.get("deadlineMultiplier").asDouble(),
              n.get("slack").asDouble(),
              Duration.parse(text(n, "releaseGrace")),
              Duration.parse(text(n, "idleRelease")),
              n.path("batchSize").asInt(0));
      JsonNode cap = n.get("maxCheckInInterval");
      if (cap != null && !cap.isNull()) {
        p = p.withMaxCheckInInterval(Duration.parse(cap.asText()));
      }
      return p.withMaxMembers(n.path("maxMembers").asInt(0));
    } catch (IOException | RuntimeException e) {
      throw corrupt(where, json, e);
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      throw new IllegalArgumentException("missing field " + field);
    }
    return v.asText();
  }

  private static StoreException corrupt(String what, String value, Exception e) {
    return new StoreException(
        "Redis coordination: unreadable " + what + " (" + e.getMessage() + "): " + value, e);
  }
}
