package io.boxline.spring.boot;

import io.boxline.Boxline;
import io.boxline.DeadLetterQuery;
import io.boxline.FailureCounts;
import io.boxline.GroupState;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.lang.Nullable;

/**
 * The {@code boxline} actuator endpoint: topics, subscriptions with lag per partition, group
 * members and dead letters ({@code GET /actuator/boxline}, {@code GET
 * /actuator/boxline/{subscription}}); redrive or discard of a subscription's dead letters ({@code
 * POST /actuator/boxline/{subscription}} with {@code action} and optional {@code key}, {@code
 * type}) only when {@code boxline.endpoint.write-enabled=true}.
 */
@Endpoint(id = "boxline")
public class BoxlineEndpoint {
  private final Boxline boxline;
  private final boolean writeEnabled;

  public BoxlineEndpoint(Boxline boxline, boolean writeEnabled) {
    this.boxline = boxline;
    this.writeEnabled = writeEnabled;
  }

  @ReadOperation
  public Map<String, Object> overview() {
    Map<String, Object> out = new LinkedHashMap<>();
    List<Map<String, Object>> topics = new ArrayList<>();
    for (TopicInfo t : boxline.admin().topics()) {
      topics.add(
          Map.of(
              "name", t.name().toString(),
              "partitions", t.partitions(),
              "sequencing", t.sequencing().name()));
    }
    out.put("topics", topics);
    List<Map<String, Object>> subs = new ArrayList<>();
    for (SubscriptionInfo s : boxline.admin().subscriptions()) {
      subs.add(summary(s));
    }
    out.put("subscriptions", subs);
    out.put("outboxBacklog", boxline.admin().outboxBacklog().events());
    return out;
  }

  @ReadOperation
  public Map<String, Object> subscription(@Selector String subscription) {
    SubscriptionInfo s =
        boxline
            .admin()
            .subscription(subscription)
            .orElseThrow(
                () ->
                    new InvalidEndpointRequestException(
                        "no subscription '" + subscription + "'",
                        "no subscription '" + subscription + "'"));
    Map<String, Object> out = summary(s);
    out.put("group", group(boxline.admin().group(subscription)));
    out.put(
        "deadLetterSample",
        boxline
            .deadLetters()
            .list(
                new DeadLetterQuery(
                    subscription, null, null, null, null, null, null, null, null, 20))
            .stream()
            .map(
                d ->
                    Map.of(
                        "eventId", String.valueOf(d.event().id()),
                        "key", String.valueOf(d.event().key()),
                        "type", d.event().type(),
                        "attempts", d.attempts(),
                        "lastError", String.valueOf(d.lastError())))
            .toList());
    return out;
  }

  /** {@code action}: redrive or discard; {@code key} and {@code type} narrow what it takes. */
  @WriteOperation
  public Map<String, Object> deadLetters(
      @Selector String subscription, String action, @Nullable String key, @Nullable String type) {
    if (!writeEnabled) {
      // The reason is what an HTTP client sees (the message of its 400 response).
      String why =
          "the boxline endpoint is read-only; set boxline.endpoint.write-enabled=true to redrive"
              + " or discard dead letters from it";
      throw new InvalidEndpointRequestException(why, why);
    }
    DeadLetterQuery q = DeadLetterQuery.of(subscription);
    if (key != null) {
      q = q.key(key);
    }
    if (type != null) {
      q = q.type(type);
    }
    long n =
        switch (action) {
          case "redrive" -> boxline.deadLetters().redrive(q);
          case "discard" -> boxline.deadLetters().discard(q);
          default -> {
            String why = "action '" + action + "' is unknown; use redrive or discard";
            throw new InvalidEndpointRequestException(why, why);
          }
        };
    return Map.of("subscription", subscription, "action", action, "events", n);
  }

  /** The group as maps of strings and numbers, which every JSON mapper writes. */
  private static Map<String, Object> group(GroupState g) {
    Map<String, Object> out = new LinkedHashMap<>();
    List<Map<String, Object>> members = new ArrayList<>();
    for (GroupState.Member m : g.members()) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("id", m.id());
      row.put("weight", m.weight());
      row.put("host", m.host());
      row.put("process", m.process());
      row.put("lastCheckIn", String.valueOf(m.lastCheckIn()));
      row.put("deadline", String.valueOf(m.deadline()));
      row.put("leases", m.leases());
      row.put(
          "inFlight",
          m.inFlight().stream()
              .map(
                  f ->
                      f.topic()
                          + "#"
                          + f.partition()
                          + " "
                          + f.fromSequence()
                          + ".."
                          + f.toSequence()
                          + " ("
                          + f.events()
                          + " events)")
              .toList());
      members.add(row);
    }
    out.put("members", members);
    List<Map<String, Object>> partitions = new ArrayList<>();
    for (GroupState.Partition p : g.partitions()) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("topic", p.lag().topic().toString());
      row.put("partition", p.lag().partition());
      row.put("owner", p.owner());
      row.put("epoch", p.epoch());
      row.put("status", p.releasing() ? "RELEASING" : p.owner() == null ? "FREE" : "ACTIVE");
      row.put("lag", p.lag().backlog());
      partitions.add(row);
    }
    out.put("partitions", partitions);
    return out;
  }

  private Map<String, Object> summary(SubscriptionInfo s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", s.name());
    m.put("topics", s.topics().stream().map(Object::toString).toList());
    List<Map<String, Object>> partitions = new ArrayList<>();
    boxline
        .admin()
        .lag(s.name())
        .forEach(
            p -> {
              Map<String, Object> row = new LinkedHashMap<>();
              row.put("topic", p.topic().toString());
              row.put("partition", p.partition());
              row.put("position", p.position());
              row.put("head", p.lastSequence());
              row.put("lag", p.backlog());
              row.put("oldestUnhandledAt", p.oldestUnhandledAt());
              partitions.add(row);
            });
    m.put("lag", partitions);
    FailureCounts f = boxline.admin().failures(s.name());
    m.put("retrying", f.retrying());
    m.put("deadLetters", f.deadLetters());
    return m;
  }
}
