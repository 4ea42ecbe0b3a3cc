package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The attack's request bodies: junk; half the time a body the endpoint takes with one fault ({@link
 * OneFaultBodies}); else JSON with some fields known, misspelt, unknown or missing, holding A's
 * names, B's, made-up ones and values at the edges; events; settlements ({@link AttackAcks}).
 */
final class AttackBodies extends AttackGenerator {
  final OneFaultBodies faults;
  final AttackAcks acks;

  AttackBodies(AttackNames names) {
    super(names);
    this.faults = new OneFaultBodies(names);
    this.acks = new AttackAcks(names);
  }

  String body(String method, String template) {
    boolean writes =
        method.equalsIgnoreCase("POST")
            || method.equalsIgnoreCase("PUT")
            || method.equalsIgnoreCase("PATCH");
    if (!(writes ? chance(92) : chance(12))) {
      return null;
    }
    if (chance(8)) {
      return junkBody();
    }
    if (chance(55)) {
      JsonNode valid = faults.wellFormed(template);
      if (valid != null) {
        return withSurrogates(faults.oneFault(valid).toString());
      }
    }
    ObjectNode o;
    if (template.equals("/v1/namespaces")) {
      o = object(Map.of("name", this::nameValue));
    } else if (template.equals("/v1/topics")) {
      o =
          object(
              Map.of(
                  "name",
                  this::nameValue,
                  "partitions",
                  this::partitionsValue,
                  "sequencing",
                  () -> any("sequencer", "in-transaction", "IN_TRANSACTION", "x", 1, null)));
    } else if (template.endsWith("/retention")) {
      o =
          object(
              Map.of(
                  "maxAge",
                  this::durationValue,
                  "keepUnconsumed",
                  this::boolValue,
                  "maxEventsPerPartition",
                  this::intValue,
                  "abandonAfter",
                  this::durationValue));
    } else if (template.endsWith("/events")) {
      return eventsBody();
    } else if (template.equals("/v1/subscriptions")) {
      o =
          object(
              Map.of(
                  "name",
                  this::subNameValue,
                  "topics",
                  this::topicsValue,
                  "start",
                  this::startValue));
    } else if (template.endsWith("group-policy")) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      for (String d :
          List.of("minCheckInInterval", "releaseGrace", "idleRelease", "maxCheckInInterval")) {
        f.put(d, this::durationValue);
      }
      for (String n :
          List.of("checkInRate", "deadlineMultiplier", "slack", "batchSize", "maxMembers")) {
        f.put(n, this::numberValue);
      }
      o = object(f);
    } else if (template.endsWith("/rewind")) {
      o = object(Map.of("to", this::startValue));
    } else if (template.endsWith("/redrive") || template.endsWith("/discard")) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      f.put(
          "topic",
          () ->
              text(
                  pick(
                      pick(tenants.aTopics),
                      pick(tenants.bTopics),
                      names.mutate(pick(tenants.aTopics)))));
      f.put("type", () -> text(pick(tenants.aType, "BType", suffix())));
      f.put("key", () -> text(pick(pick(tenants.aKeys), pick(tenants.bKeys))));
      f.put("eventId", () -> text(pick(pick(tenants.aEventIds), pick(tenants.bEventIds), "x")));
      f.put("error", () -> text(pick("A-DEAD", "poison", "%")));
      f.put("deadBefore", () -> text(pick("2020-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "x")));
      f.put("deadAfter", () -> text(pick("2020-01-01T00:00:00Z", "x")));
      f.put("after", () -> text(names.position3()));
      f.put("limit", this::intValue);
      f.put("dryRun", this::boolValue);
      o = object(f);
    } else if (template.endsWith("/fetch")) {
      o =
          object(
              Map.of(
                  "weight",
                  () -> any(1, 0, -1, 1000, 1001, 0.5, "1", 1e308, null),
                  "max",
                  () -> any(1, 10, 100, 10000, 0, 10001, -5, "5", 2.5),
                  "waitMillis",
                  () -> any(0, 10, 50, 100, -1, 30001, "100", 1.5, null)));
    } else if (template.endsWith("/settle") || template.endsWith("/ack")) {
      return acks.settleBody();
    } else {
      o = object(Map.of("name", this::nameValue, "x", this::anyValue));
    }
    return withSurrogates(o.toString());
  }

  String junkBody() {
    return pick(
        "",
        "null",
        "[]",
        "{}",
        "{",
        "\"x\"",
        "123",
        "[1,2",
        "{\"a\":{\"b\":{\"c\":[]}}}",
        "[".repeat(200) + "]".repeat(200),
        "\uFEFF{}",
        "{\"name\":\"tb/x\",\"name\":\"ta/x\"}",
        "{\"name\":\"ta/secret-orders-" + tenants.rA + "\"}",
        "name=ta",
        "{\"type\":\"T\",\"key\":\"\\u0000\"}",
        "{'single':'quotes'}",
        "{\"a\":1}garbage",
        "x".repeat(70_000));
  }

  /** An object with some of these fields (some misspelt, some unknown, some missing). */
  ObjectNode object(Map<String, Supplier<JsonNode>> fields) {
    ObjectNode o = NODES.objectNode();
    for (Map.Entry<String, Supplier<JsonNode>> f : new TreeMap<>(fields).entrySet()) {
      if (chance(25)) {
        continue;
      }
      String name = chance(8) ? names.misspell(f.getKey()) : f.getKey();
      o.set(name, f.getValue().get());
    }
    if (chance(8)) {
      o.set(
          pick("extra", "namespace", "tenant", "owner", "admin", "id", "__proto__", suffix()),
          anyValue());
    }
    return o;
  }

  JsonNode nameValue() {
    return chance(85)
        ? text(
            pick(
                pick(tenants.aNamespaces),
                pick(tenants.aTopics),
                names.mutate(pick(tenants.aTopics)),
                "tb/" + suffix(),
                "tb/" + suffix() + "/" + suffix(),
                pick(tenants.bTopics),
                names.odd("tb/" + suffix()),
                "ta/" + suffix(),
                "*",
                ""))
        : anyValue();
  }

  JsonNode subNameValue() {
    return chance(85)
        ? text(
            pick(
                pick(tenants.aSubs),
                pick(tenants.aSubBare),
                "ta/" + pick(tenants.aSubBare),
                names.mutate(pick(tenants.aSubBare)),
                "tb/" + suffix(),
                suffix(),
                pick(tenants.bSubs),
                names.odd(suffix()),
                "*",
                ""))
        : anyValue();
  }

  JsonNode topicsValue() {
    if (chance(10)) {
      return anyValue();
    }
    ArrayNode a = NODES.arrayNode();
    int n = rnd.nextInt(3) + (chance(90) ? 1 : 0);
    for (int i = 0; i < n; i++) {
      a.add(
          pick(
              pick(tenants.aTopics),
              pick(tenants.bTopics),
              names.mutate(pick(tenants.aTopics)),
              "tb/" + suffix(),
              "ta/*",
              "*"));
    }
    return a;
  }

  JsonNode startValue() {
    return any(
        "earliest",
        "latest",
        "2020-01-01T00:00:00Z",
        "yesterday",
        5,
        "",
        null,
        "9999-01-01T00:00:00Z");
  }

  JsonNode partitionsValue() {
    return any(1, 2, 4, 0, -1, 65537, "4", 1.5, null, true);
  }

  JsonNode durationValue() {
    return any("1s", "30d", "PT1H", "-1s", "often", "", 5, "999999999d", "250ms", null);
  }

  JsonNode boolValue() {
    return any(true, false, "true", 1, null);
  }

  JsonNode intValue() {
    return any(0, 1, 100, -1, 2147483648L, 1.5, "10", null, 100000, 100001);
  }

  JsonNode numberValue() {
    return any(0, 0.1, 1, 3, 8, 1000, -1, 1e9, "1", null, 100001);
  }

  String eventsBody() {
    if (chance(5)) {
      StringBuilder sb = new StringBuilder("{\"events\":[");
      for (int i = 0; i < 1001; i++) {
        sb.append(i == 0 ? "" : ",").append("{}");
      }
      return sb.append("]}").toString();
    }
    int n = chance(60) ? 1 : rnd.nextInt(5);
    List<ObjectNode> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      f.put(
          "type",
          () ->
              chance(90)
                  ? text(pick("BType", "B." + suffix(), "", "\u0000", "x".repeat(300)))
                  : anyValue());
      f.put(
          "key",
          () ->
              chance(85)
                  ? text(
                      pick(pick(tenants.bKeys), pick(tenants.aKeys), "b-" + suffix(), "", "\u0000"))
                  : anyValue());
      f.put("payload", this::anyValue);
      if (chance(15)) {
        f.put("payloadBase64", () -> text(pick("aGVsbG8=", "!!!", "", "aGVsbG8")));
      }
      f.put(
          "contentType",
          () ->
              text(
                  pick(
                      "application/json",
                      "text/plain",
                      "application/octet-stream",
                      "",
                      "x".repeat(1000))));
      f.put(
          "headers",
          () -> chance(70) ? Api.JSON.valueToTree(Map.of("h-" + suffix(), "v")) : anyValue());
      f.put("idempotencyKey", () -> text(pick(pick(tenants.aIdemKeys), "b-idem-" + suffix(), "")));
      f.put(
          "id",
          () ->
              text(
                  pick(
                      pick(tenants.aEventIds),
                      pick(tenants.bEventIds),
                      UUID.randomUUID().toString(),
                      "not-a-uuid")));
      f.put("source", () -> text(pick("b-source", "", "\u0000")));
      f.put(
          "deliverAt",
          () ->
              text(
                  pick(
                      "2020-01-01T00:00:00Z",
                      "9999-12-31T23:59:59Z",
                      "tomorrow",
                      "+1000000000-01-01T00:00:00Z")));
      ObjectNode e = object(f);
      if (!e.has("deliverAt") || chance(70)) {
        e.remove("deliverAt");
      }
      events.add(e);
    }
    if (n == 1 && chance(60)) {
      return events.get(0).toString();
    }
    ObjectNode body = NODES.objectNode();
    ArrayNode a = body.putArray(chance(95) ? "events" : "event");
    events.forEach(a::add);
    if (chance(5)) {
      body.put("type", "BType");
    }
    return body.toString();
  }
}
