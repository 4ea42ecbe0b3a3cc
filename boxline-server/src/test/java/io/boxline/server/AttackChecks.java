package io.boxline.server;

import static io.boxline.server.TwoTenants.expect;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.server.Attack.Param;
import io.boxline.server.MalformedRequests.Expect;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What every answer of the attack is held to: none of A's names the request did not carry; a status
 * that is 2xx, a redirect or a 4xx (or a 503 with Retry-After) with a JSON problem body, naming no
 * Java internals; the same answer about A's real name as about a made-up one (no existence oracle).
 * From B's own answers: the ack ids B may use and the names B may see.
 */
final class AttackChecks {
  /** What an answer names only when a Java exception or a stack trace got into it. */
  static final List<String> INTERNALS =
      List.of(
          "Exception",
          "java.",
          "javax.",
          "com.fasterxml",
          "org.postgresql",
          "io.boxline.",
          "com.sun.",
          "sun.net",
          "\tat ",
          "Caused by",
          "SQLState",
          "StackOverflowError",
          "NullPointer");

  final AttackDice dice;
  final TwoTenants tenants;
  final AttackMarkers markers;

  AttackChecks(AttackDice dice, TwoTenants tenants, AttackMarkers markers) {
    this.dice = dice;
    this.tenants = tenants;
    this.markers = markers;
  }

  /** The request as text, with its target decoded once and twice: what an echo may repeat. */
  static String requestText(RawHttp.Request r) {
    String sent = new String(r.bytes("h", 1), StandardCharsets.UTF_8);
    String once = AttackNames.decode(r.target);
    return sent + "\n" + once + "\n" + AttackNames.decode(once);
  }

  void check(Attack attack, RawHttp.Response resp, AttackFailures failures) {
    String req = attack.describe();
    String route = attack.route();
    if (!resp.answered()) {
      failures.add(attack.index(), "no-answer", route, req, resp.toString(), "no HTTP answer");
      return;
    }
    String reqText = requestText(attack.request());
    String respText = resp.text();
    // 1. none of A's names.
    List<String> leaked = markers.leaks(reqText, respText);
    if (!leaked.isEmpty()) {
      failures.add(
          attack.index(),
          "leak",
          route,
          req,
          resp.toString(),
          "the answer holds "
              + leaked.size()
              + " of A's names the request did not carry: "
              + String.join("; ", leaked.subList(0, Math.min(6, leaked.size())))
              + (leaked.size() > 6 ? "; …" : ""));
    }
    // 2. the status and the problem body.
    int s = resp.status;
    boolean head = attack.request().method.equals("HEAD");
    if (s >= 200 && s < 300) {
      return;
    }
    if (s >= 300 && s < 400) {
      String location = resp.header("Location");
      boolean redirect =
          (s == 301 || s == 302 || s == 303 || s == 307 || s == 308)
              && location != null
              && location.startsWith("/")
              && !location.startsWith("//");
      boolean notModified = s == 304 && attack.request().hasHeader("If-None-Match");
      if (!redirect && !notModified) {
        failures.add(attack.index(), "status-3xx", route, req, resp.toString(), "status " + s);
      }
      return;
    }
    if (s >= 500) {
      if (s != 503 || resp.header("Retry-After") == null) {
        failures.add(
            attack.index(),
            s == 503 ? "status-503-without-retry-after" : "status-" + s,
            route,
            req,
            resp.toString(),
            "status " + s);
      }
    } else if (s < 400) {
      failures.add(attack.index(), "status-" + s, route, req, resp.toString(), "status " + s);
    }
    if (!head) {
      String problem = problem(resp);
      if (problem != null) {
        failures.add(attack.index(), "not-a-json-problem", route, req, resp.toString(), problem);
      }
    }
    String internal = exposedInternal(resp.bodyText(), reqText);
    if (internal != null) {
      failures.add(
          attack.index(),
          "internals-exposed",
          route,
          req,
          resp.toString(),
          "the answer names '" + internal + "'");
    }
  }

  /** The first of {@link #INTERNALS} that {@code answer} names and {@code request} did not. */
  static String exposedInternal(String answer, String request) {
    for (String x : INTERNALS) {
      if (answer.contains(x) && !request.contains(x)) {
        return x;
      }
    }
    return null;
  }

  /** Null when the body is a JSON problem for this status; else what is wrong with it. */
  static String problem(RawHttp.Response resp) {
    String body = resp.bodyText();
    String ct = resp.header("Content-Type");
    if (ct != null && ct.toLowerCase(Locale.ROOT).contains("html")
        || body.stripLeading().startsWith("<")) {
      return "an HTML answer (Content-Type " + ct + ")";
    }
    JsonNode json;
    try {
      json = Api.JSON.readTree(body);
    } catch (Exception e) {
      return "the body is not JSON (Content-Type " + ct + ")";
    }
    if (json == null || !json.isObject()) {
      return "the body is not a JSON object";
    }
    if (!json.path("status").isInt() || json.get("status").asInt() != resp.status) {
      return "the body's \"status\" is not " + resp.status;
    }
    if (!json.path("error").isTextual() && !json.path("message").isTextual()) {
      return "the body has neither \"error\" nor \"message\"";
    }
    return null;
  }

  /**
   * Sends the attack again with each real name of A's in its path replaced by a made-up name of the
   * same shape; the two answers must be the same but for the names.
   */
  void oracle(Attack attack, RawHttp.Response resp, AttackFailures failures) {
    String target = attack.request().target;
    Map<String, String> swaps = new LinkedHashMap<>();
    String fakeSuffix = dice.suffix();
    for (Param p : attack.params()) {
      if (p.aReal() == null) {
        continue;
      }
      String fake = p.aReal().replace(tenants.rA, fakeSuffix);
      if (fake.equals(p.aReal())) {
        continue;
      }
      swaps.put(p.encoded(), AttackNames.encodeStyled(fake, p.style()));
    }
    if (swaps.isEmpty()) {
      return;
    }
    String twinTarget = target;
    for (Map.Entry<String, String> e : swaps.entrySet()) {
      twinTarget = twinTarget.replace(e.getKey(), e.getValue());
    }
    RawHttp.Request twin = new RawHttp.Request(attack.request().method, twinTarget);
    attack.request().headers.forEach(h -> twin.header(h[0], h[1]));
    twin.body = attack.request().body;
    RawHttp.Response twinResp = tenants.raw.send(twin, 5_000, 300);
    // The twin is an attack of its own: its answer is held to the same rules.
    check(
        new Attack(
            attack.index(), attack.who(), attack.template(), twin, List.of(), attack.query()),
        twinResp,
        failures);
    if (throttled(resp) || throttled(twinResp)) {
      return; // a rate limit or a full server says nothing about the names
    }
    String a = normalized(resp, tenants.rA, fakeSuffix);
    String b = normalized(twinResp, tenants.rA, fakeSuffix);
    if (resp.status != twinResp.status || !a.equals(b)) {
      failures.add(
          attack.index(),
          "existence-oracle",
          attack.route(),
          attack.describe() + "\n(twin: " + twin.method + " " + twinTarget + ")",
          resp + "\n--- twin answer ---\n" + twinResp,
          "an answer about A's real name differs from one about a made-up name of the same shape");
    }
  }

  static boolean throttled(RawHttp.Response r) {
    return r.status == 429 || r.status == 503;
  }

  static String normalized(RawHttp.Response r, String real, String fake) {
    if (!r.answered()) {
      return "(none)";
    }
    String body =
        AttackNames.decode(AttackNames.decode(r.bodyText()))
            .replace(real, "<N>")
            .replace(fake, "<N>");
    try {
      JsonNode j = Api.JSON.readTree(body);
      if (j != null && j.isObject()) {
        return r.status + " " + j.path("error").asText() + " " + j.path("message").asText();
      }
    } catch (Exception e) {
      // not JSON: compare the text
    }
    return r.status + " " + body;
  }

  /** Real ack ids from B's own fetches join the pool; what B stored under its names is adopted. */
  void harvest(Attack attack, RawHttp.Response resp) {
    if (resp.status < 200 || resp.status >= 300) {
      return;
    }
    if (attack.template().endsWith("/fetch") && attack.request().method.equals("POST")) {
      try {
        JsonNode j = Api.JSON.readTree(resp.bodyText());
        for (JsonNode e : j.path("events")) {
          if (e.path("ackId").isTextual() && tenants.bAcks.size() < 500) {
            tenants.bAcks.add(e.get("ackId").asText());
          }
        }
      } catch (Exception e) {
        // reported by check
      }
    }
    if (!attack.request().method.equals("POST")) {
      return;
    }
    // Only what B stored under its own names: a member id it joined its group with, the ids, keys
    // and idempotency keys of events it published to its topics, a subscription it created.
    Set<String> stored = new TreeSet<>();
    if (attack.template().endsWith("/fetch")) {
      attack.params().stream()
          .filter(p -> p.name().equals("member"))
          .forEach(p -> stored.add(AttackNames.decode(p.encoded())));
    }
    try {
      JsonNode body =
          attack.request().body == null ? null : Api.JSON.readTree(attack.request().body);
      if (body != null && attack.template().endsWith("/events")) {
        List<JsonNode> events = new ArrayList<>();
        if (body.has("events")) {
          body.get("events").forEach(events::add);
        } else {
          events.add(body);
        }
        for (JsonNode e : events) {
          for (String f : List.of("id", "key", "idempotencyKey")) {
            if (e.path(f).isTextual()) {
              stored.add(e.get(f).asText());
            }
          }
        }
      }
      if (body != null
          && attack.template().equals("/v1/subscriptions")
          && body.path("name").isTextual()) {
        stored.add(body.get("name").asText());
      }
    } catch (Exception e) {
      // not JSON: nothing stored
    }
    markers.adopt(stored);
  }

  /**
   * Holds the answer to a malformed request to its {@code expect}ation: a 4xx with a JSON problem
   * body (or, where allowed, a closed connection), naming no internals and none of A's names.
   */
  void malformedCheck(
      int index,
      String name,
      Expect expect,
      byte[] request,
      RawHttp.Response r,
      String described,
      AttackFailures failures) {
    String text = r.text();
    String requestText = new String(request, StandardCharsets.ISO_8859_1);
    String internal = exposedInternal(text, requestText);
    if (internal != null) {
      failures.add(
          index,
          "internals-exposed",
          name,
          described,
          r.toString(),
          "the answer names '" + internal + "'");
    }
    List<String> leaked = markers.leaks(requestText + "\n" + AttackNames.decode(requestText), text);
    if (!leaked.isEmpty()) {
      failures.add(
          index,
          "leak",
          name,
          described,
          r.toString(),
          "the answer holds A's " + String.join("; ", leaked));
    }
    if (!r.answered()) {
      if (expect != Expect.FOUR_XX_OR_CLOSE || r.timedOut) {
        failures.add(
            index,
            r.timedOut ? "no-answer-timeout" : "no-answer",
            name,
            described,
            r.toString(),
            "expected a 4xx answer");
      }
      return;
    }
    if (r.status < 400 || r.status >= 500) {
      failures.add(
          index,
          "accepted-or-not-4xx",
          name,
          described,
          r.toString(),
          "expected a 4xx, got " + r.status);
      return;
    }
    String problem = problem(r);
    if (problem != null) {
      failures.add(index, "not-a-json-problem", name, described, r.toString(), problem);
    }
  }
}
