package io.boxline.server;

import static io.boxline.server.Api.enc;

import io.boxline.server.Attack.Param;
import io.boxline.server.TwoTenants.Who;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The attack's requests: a route of {@code /openapi.json} (or a path the API does not have), most
 * often one that takes ack ids, member ids and events; a method; path parameters, a query, a body
 * and headers, odd ones among them; and the Authorization of one of B's callers (or none, or a bad
 * one).
 */
final class AttackRequests extends AttackGenerator {
  /**
   * Whose turn each request is: every one of B's tokens, no token and a bad token, in a fixed
   * cycle; the roles that reach the most code (admin, producer, consumer) more often.
   */
  static final Who[] TURNS = {
    Who.ADMIN,
    Who.CONSUMER,
    Who.PRODUCER,
    Who.NONE,
    Who.ADMIN,
    Who.OPERATOR,
    Who.CONSUMER,
    Who.VIEWER,
    Who.BAD,
    Who.ADMIN,
    Who.PRODUCER,
    Who.CONSUMER
  };

  final AttackBodies bodies;
  final List<String[]> routes = new ArrayList<>(); // {method, template} from /openapi.json
  final List<String[]> extraRoutes = new ArrayList<>(); // paths the API does not have

  AttackRequests(AttackNames names) {
    super(names);
    this.bodies = new AttackBodies(names);
  }

  /** The routes {@code anonymous} reads from /openapi.json, and paths the API does not have. */
  void readRoutes(Api anonymous) {
    for (String r : new TreeSet<>(anonymous.describedRoutes())) {
      routes.add(r.split(" ", 2));
    }
    for (String extra :
        List.of(
            "GET /v1",
            "GET /v1/",
            "GET /V1/topics",
            "GET /v1//topics",
            "GET /v2/topics",
            "GET /v1/topics/{topic}/",
            "GET /v1/topics/{topic}/partitions",
            "GET /v1/topics/{topic}/partitions/{partition}",
            "GET /v1/subscriptions/{subscription}/members",
            "GET /v1/subscriptions/{subscription}/members/{member}",
            "POST /v1/topics/{topic}/events/{sequence}",
            "GET /v1/namespaces/{namespace}",
            "GET /v1/namespaces/{namespace}/topics",
            "POST /v1/subscriptions/{subscription}/members/{member}/ack")) {
      extraRoutes.add(extra.split(" ", 2));
    }
  }

  Attack generate(int index) {
    Who who = TURNS[index % TURNS.length];
    String[] route = pickRoute();
    String method = route[0];
    if (chance(12)) {
      method =
          pick(
              "GET",
              "POST",
              "PUT",
              "DELETE",
              "PATCH",
              "HEAD",
              "OPTIONS",
              "TRACE",
              "get",
              "FOO",
              "PROPFIND",
              "Post");
    }
    String template = route[1];
    List<Param> params = new ArrayList<>();
    String subChoice = null;
    Matcher m = Pattern.compile("\\{([a-z]+)\\}").matcher(template);
    StringBuilder path = new StringBuilder();
    int last = 0;
    boolean consume = template.contains("/members/");
    while (m.find()) {
      path.append(template, last, m.start());
      String name = m.group(1);
      Param p;
      switch (name) {
        case "topic":
          p = names.topicParam(method, template);
          break;
        case "subscription":
          p = names.subscriptionParam(method, template, consume);
          subChoice = AttackNames.decode(p.encoded());
          break;
        case "member":
          p = names.memberParam(subChoice);
          break;
        case "namespace":
          p = names.namespaceParam();
          break;
        case "partition":
          p =
              names.plain(
                  "partition",
                  pick(
                      "0",
                      "1",
                      "3",
                      "0",
                      "1",
                      "-1",
                      "4",
                      "65536",
                      "99999999999",
                      "abc",
                      "0x1",
                      "%2B1",
                      "1.0",
                      "%20"));
          break;
        case "sequence":
          p =
              names.plain(
                  "sequence",
                  pick(
                      "1",
                      "2",
                      "5",
                      "0",
                      "-1",
                      "9223372036854775807",
                      "9223372036854775808",
                      "1e3",
                      "abc"));
          break;
        case "file":
          p =
              names.plain(
                  "file",
                  pick(
                      "index.html",
                      "app.js",
                      "style.css",
                      "x.html",
                      "INDEX.HTML",
                      "..%2F..%2Fetc%2Fpasswd",
                      "%2e%2e",
                      "app.js%00.html"));
          break;
        default:
          p = names.plain(name, suffix());
      }
      params.add(p);
      path.append(p.encoded());
      last = m.end();
    }
    path.append(template.substring(last));
    String query = query(template);
    String target = path + (query.isEmpty() ? "" : "?" + query);
    RawHttp.Request req = new RawHttp.Request(method, target);
    authorization(req, who);
    String body = bodies.body(method, template);
    if (body != null) {
      req.body(body);
      if (chance(85)) {
        req.header("Content-Type", "application/json");
      } else if (chance(60)) {
        req.header(
            "Content-Type",
            pick(
                "text/plain",
                "application/x-www-form-urlencoded",
                "application/json; charset=latin1",
                "",
                "multipart/form-data; boundary=x",
                "application/xml"));
      }
      if (chance(3)) {
        req.header("Expect", "100-continue");
      }
    }
    if (template.endsWith("/tail") ? chance(50) : chance(4)) {
      req.header("Last-Event-ID", names.position());
    }
    if (chance(5)) {
      req.header(
          "Accept",
          pick("text/html", "*/*", "application/json", "text/event-stream", "application/xml"));
    }
    if (chance(4)) {
      req.header(
          pick("X-Forwarded-For", "X-Real-IP", "Forwarded"),
          pick("127.0.0.1", "10.0.0.1", "for=unknown"));
    }
    if (chance(3)) {
      req.header(pick("X-Boxline-Namespace", "X-Tenant", "X-Namespace"), pick("ta", "*", "tb"));
    }
    if (chance(3)) {
      req.header("If-None-Match", pick("*", "\"x\"", "W/\"0\""));
    }
    return new Attack(index, who, template, req, params, query);
  }

  /** A route, the ones that take ack ids, member ids and events more often than the rest. */
  String[] pickRoute() {
    if (chance(6)) {
      return pick(extraRoutes);
    }
    int total = 0;
    for (String[] r : routes) {
      total += weight(r);
    }
    int x = rnd.nextInt(total);
    for (String[] r : routes) {
      x -= weight(r);
      if (x < 0) {
        return r;
      }
    }
    return routes.get(0);
  }

  static int weight(String[] route) {
    String t = route[1];
    if (t.endsWith("/settle")) {
      return 14;
    }
    if (t.endsWith("/fetch") || t.endsWith("/events") || t.endsWith("/members/{member}")) {
      return 4;
    }
    if (t.contains("{subscription}") || t.contains("{topic}")) {
      return 2;
    }
    return 1;
  }

  void authorization(RawHttp.Request req, Who who) {
    switch (who) {
      case NONE:
        if (chance(20)) {
          req.header("Authorization", pick("", "Bearer", "Bearer ", " "));
        }
        return;
      case BAD:
        String bad =
            pick(
                () -> "Bearer " + suffix() + suffix(),
                () -> "Bearer " + pick(new ArrayList<>(tenants.aSecrets.keySet())),
                () -> "Bearer " + pick(new ArrayList<>(tenants.bTokenNames.values())),
                () -> "Bearer " + names.mutate(pick(new ArrayList<>(tenants.bSecrets.values()))),
                () ->
                    "Bearer "
                        + pick(new ArrayList<>(tenants.bSecrets.values())).toUpperCase(Locale.ROOT),
                () ->
                    "Basic "
                        + Base64.getEncoder()
                            .encodeToString(
                                ("ta-admin-" + tenants.rA + ":x").getBytes(StandardCharsets.UTF_8)),
                () ->
                    "Basic "
                        + Base64.getEncoder()
                            .encodeToString(
                                ("star-admin:" + suffix()).getBytes(StandardCharsets.UTF_8)),
                () -> "Bearer " + "x".repeat(5000),
                () -> "Bearer *",
                () -> "Bearer ta",
                () -> "Token " + pick(new ArrayList<>(tenants.bSecrets.values())),
                () -> pick(new ArrayList<>(tenants.bSecrets.values())));
        req.header("Authorization", bad);
        return;
      default:
        String secret = tenants.bSecrets.get(who);
        String value =
            chance(80)
                ? "Bearer " + secret
                : pick(
                    "bearer " + secret,
                    "BEARER " + secret,
                    "Bearer  " + secret,
                    "Bearer " + secret + " ");
        req.header("Authorization", value);
        if (chance(4)) {
          req.header("Authorization", "Bearer " + suffix());
        }
    }
  }

  String query(String template) {
    List<String> queryNames = new ArrayList<>();
    if (template.endsWith("/events")) {
      queryNames.addAll(List.of("after", "key", "id", "limit", "at", "payload"));
    } else if (template.endsWith("{sequence}")) {
      queryNames.add("payload");
    } else if (template.endsWith("/tail")) {
      queryNames.addAll(List.of("from", "key", "type", "position"));
    } else if (template.equals("/v1/topics/{topic}")
        || template.equals("/v1/subscriptions/{subscription}")) {
      queryNames.add("force");
    } else if (template.endsWith("/retries")) {
      queryNames.addAll(List.of("limit", "after"));
    } else if (template.endsWith("/dead-letters")) {
      queryNames.addAll(
          List.of(
              "topic",
              "type",
              "key",
              "eventId",
              "error",
              "deadBefore",
              "deadAfter",
              "after",
              "limit"));
    } else if (template.endsWith("/reasons")) {
      queryNames.add("limit");
    }
    queryNames.addAll(List.of("namespace", "token", "debug", "tenant", "x"));
    int n = chance(35) ? 0 : 1 + rnd.nextInt(3);
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name =
          chance(85)
              ? pick(queryNames.subList(0, Math.max(1, queryNames.size() - (chance(80) ? 5 : 0))))
              : pick(queryNames);
      if (chance(3)) {
        parts.add(enc(name));
        continue;
      }
      parts.add(enc(name) + "=" + enc(queryValue(name)).replace("+", "%20"));
    }
    return String.join("&", parts);
  }

  String queryValue(String name) {
    switch (name) {
      case "force":
        return pick("true", "false", "yes", "", "TRUE");
      case "limit":
        return pick("1", "10", "1000", "0", "-1", "1001", "10001", "99999999999", "abc", "1e2");
      case "after":
        return chance(50) ? pick("0", "5", "-1", "abc", "9223372036854775807") : names.position3();
      case "key":
        return chance(85)
            ? pick(chance(50) ? tenants.aKeys : tenants.bKeys)
            : pick("\u0000", "k".repeat(5000), "%");
      case "id":
      case "eventId":
        return pick(
            pick(tenants.aEventIds),
            pick(tenants.bEventIds),
            UUID.randomUUID().toString(),
            "abc",
            "");
      case "at":
      case "deadBefore":
      case "deadAfter":
        return pick(
            "2020-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "now",
            "abc",
            "1970-01-01T00:00:00Z",
            "",
            "+1000000000-01-01T00:00:00Z",
            "-1000000000-01-01T00:00:00Z");
      case "payload":
        return pick("base64", "json", "xml", "");
      case "from":
        return pick("earliest", "latest", "beginning", "", "EARLIEST");
      case "position":
        return names.position();
      case "type":
        return pick(tenants.aType, "BType", suffix(), "", "\u0000");
      case "topic":
        return pick(
            pick(tenants.aTopics), pick(tenants.bTopics), names.mutate(pick(tenants.aTopics)), "x");
      case "error":
        return pick(tenants.aDeadReason.substring(0, 6), "poison", "%", "_", "", "\u0000", "\\");
      case "namespace":
      case "tenant":
        return pick("ta", "*", "tb");
      case "token":
        return pick(new ArrayList<>(tenants.aSecrets.keySet()));
      default:
        return suffix();
    }
  }
}
