package io.boxline.server.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Boxline;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Outcome;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.SubscriptionInfo;
import io.boxline.server.internal.Auth.Action;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Consuming as a member of a subscription's group over HTTP: fetch (long-poll), settle, leave.
 * Every call goes to {@link RemoteConsumers}, which keeps nothing in memory: any server instance
 * serves any member.
 */
final class ConsumeApi {
  static final int MAX_WAIT_MILLIS = 30_000;
  private static final long POLL_MILLIS = 250;

  private final Boxline boxline;
  private final TailWakeups wakeups;
  private final java.util.function.BooleanSupplier running;

  ConsumeApi(Boxline boxline, TailWakeups wakeups, java.util.function.BooleanSupplier running) {
    this.boxline = boxline;
    this.wakeups = wakeups;
    this.running = running;
  }

  void register(Router r) {
    r.add("POST", "/v1/subscriptions/{subscription}/members/{member}/fetch", this::fetch);
    r.add("POST", "/v1/subscriptions/{subscription}/members/{member}/settle", this::settle);
    r.add("DELETE", "/v1/subscriptions/{subscription}/members/{member}", this::leave);
  }

  private SubscriptionInfo subscription(Call c) {
    return AdminApi.subscription(boxline.admin(), c, Action.CONSUME);
  }

  private void fetch(Call c) throws InterruptedException {
    SubscriptionInfo s = subscription(c);
    JsonNode body = c.bodyOrEmpty();
    double weight = body.path("weight").isMissingNode() ? 1.0 : number(body, "weight");
    int max = AdminApi.integer(body, "max", 100);
    int waitMillis = AdminApi.integer(body, "waitMillis", 0);
    if (waitMillis < 0 || waitMillis > MAX_WAIT_MILLIS) {
      throw ApiException.badRequest(
          "waitMillis must be between 0 and " + MAX_WAIT_MILLIS + ", got " + waitMillis);
    }
    RemoteConsumers members = boxline.remoteConsumers();
    long deadline = System.nanoTime() + Duration.ofMillis(waitMillis).toNanos();
    RemoteConsumers.Batch batch;
    while (true) {
      long seen = wakeups.generation();
      batch = Call.valid(() -> members.fetch(s.name(), c.param("member"), weight, max));
      long left = (deadline - System.nanoTime()) / 1_000_000;
      if (!batch.deliveries().isEmpty() || left <= 0 || !running.getAsBoolean()) {
        break;
      }
      wakeups.await(seen, Math.min(left, POLL_MILLIS));
    }
    List<Object> events = new ArrayList<>();
    for (RemoteConsumers.Delivery d : batch.deliveries()) {
      events.add(
          Views.of("ackId", d.ackId(), "attempt", d.attempt(), "event", Views.event(d.event())));
    }
    List<Object> partitions = new ArrayList<>();
    batch
        .partitions()
        .forEach(
            p ->
                partitions.add(
                    Views.of("topic", p.topic().toString(), "partition", p.partition())));
    c.json(
        200,
        Views.of(
            "events", events,
            "partitions", partitions,
            "checkInWithinMillis", batch.checkInWithin().toMillis()));
  }

  private void settle(Call c) {
    SubscriptionInfo s = subscription(c);
    JsonNode body = c.body();
    JsonNode list = body.get("settle");
    if (!body.isObject() || list == null || !list.isArray() || list.isEmpty()) {
      throw ApiException.badRequest(
          "the body is {\"settle\": [{\"ackId\": \"...\", \"outcome\": \"done\"}, ...]}; outcome is done, retry or dead");
    }
    if (list.size() > 10_000) {
      throw new ApiException(413, "too_large", "settle at most 10000 events per request");
    }
    List<Settlement> settlements = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      JsonNode x = list.get(i);
      String at = "settle[" + i + "]: ";
      if (!x.isObject()) {
        throw ApiException.badRequest(at + "must be an object");
      }
      String ackId = AdminApi.text(x, "ackId", true);
      String outcome = Optional.ofNullable(AdminApi.text(x, "outcome", false)).orElse("done");
      Outcome o;
      try {
        o = Outcome.valueOf(outcome.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(
            at + "outcome must be done, retry or dead, got '" + outcome + "'");
      }
      String retryIn = AdminApi.text(x, "retryIn", false);
      Duration wait = null;
      if (retryIn != null) {
        try {
          wait = ConfigReader.duration(retryIn);
          if (wait.isNegative()) {
            throw new IllegalArgumentException();
          }
        } catch (RuntimeException e) {
          throw ApiException.badRequest(
              at + "retryIn must be a duration such as 500ms, 30s or 5m, got '" + retryIn + "'");
        }
      }
      settlements.add(new Settlement(ackId, o, wait, AdminApi.text(x, "reason", false)));
    }
    int n =
        Call.valid(
            () -> boxline.remoteConsumers().settle(s.name(), c.param("member"), settlements));
    c.json(200, Views.of("settled", n));
  }

  private void leave(Call c) {
    SubscriptionInfo s = subscription(c);
    Call.valid(
        () -> {
          boxline.remoteConsumers().leave(s.name(), c.param("member"));
          return null;
        });
    c.json(200, Views.of("subscription", s.name(), "member", c.param("member"), "left", true));
  }

  private static double number(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (!v.isNumber()) {
      throw ApiException.badRequest("\"" + field + "\" must be a number");
    }
    return v.asDouble();
  }
}
