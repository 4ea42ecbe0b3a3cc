package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Bodies each endpoint takes as they are, on B's own things, and one hostile change to such a body:
 * a value no field expects, a field added, misspelt or left out.
 */
final class OneFaultBodies extends AttackGenerator {
  OneFaultBodies(AttackNames names) {
    super(names);
  }

  /**
   * A body the endpoint takes as it is, on B's own things: the start of a one-fault mutation, so
   * that what is judged is the one hostile value, not a missing field.
   */
  JsonNode wellFormed(String template) {
    ObjectNode o = NODES.objectNode();
    if (template.equals("/v1/namespaces")) {
      o.put("name", "tb/ns-" + suffix());
    } else if (template.equals("/v1/topics")) {
      o.put("name", "tb/t-" + suffix()).put("partitions", 1 + rnd.nextInt(3));
      if (chance(50)) {
        o.put("sequencing", pick("sequencer", "in-transaction"));
      }
    } else if (template.endsWith("/retention")) {
      o.put("maxAge", "30d").put("keepUnconsumed", true).put("maxEventsPerPartition", 1000);
      o.put("abandonAfter", "7d");
    } else if (template.endsWith("/events")) {
      if (chance(50)) {
        return wellFormedEvent();
      }
      ArrayNode events = o.putArray("events");
      for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
        events.add(wellFormedEvent());
      }
    } else if (template.equals("/v1/subscriptions")) {
      o.put("name", pick("tb/s-", "s-") + suffix());
      o.putArray("topics").add(pick(tenants.bCoreTopics));
      o.put("start", pick("earliest", "latest", "2020-01-01T00:00:00Z"));
    } else if (template.endsWith("group-policy")) {
      o.put("minCheckInInterval", "5m").put("maxCheckInInterval", "10m");
      o.put("deadlineMultiplier", 3).put("slack", 0.1).put("checkInRate", 8);
      o.put("batchSize", 0).put("maxMembers", 0).put("releaseGrace", "10s");
      o.put("idleRelease", "10s");
    } else if (template.endsWith("/rewind")) {
      o.put("to", pick("earliest", "latest", "2020-01-01T00:00:00Z"));
    } else if (template.endsWith("/redrive") || template.endsWith("/discard")) {
      o.put("dryRun", true).put("topic", pick(tenants.bCoreTopics)).put("type", "BType");
      o.put("key", pick(tenants.bKeys)).put("limit", 10).put("deadAfter", "2020-01-01T00:00:00Z");
      o.put("error", "b").put("after", pick(tenants.bCoreTopics) + "/0/1");
    } else if (template.endsWith("/fetch")) {
      o.put("max", 10).put("waitMillis", 0).put("weight", 1);
    } else if (template.endsWith("/settle")) {
      ArrayNode list = o.putArray("settle");
      ObjectNode x = list.addObject();
      x.put("ackId", tenants.bAcks.isEmpty() ? "1.0.1.0.1" : pick(tenants.bAcks));
      String outcome = pick("done", "retry", "dead");
      x.put("outcome", outcome);
      if (!outcome.equals("done")) {
        x.put("reason", "b-reason");
      }
      if (outcome.equals("retry")) {
        x.put("retryIn", "1h");
      }
    } else {
      return null;
    }
    return o;
  }

  ObjectNode wellFormedEvent() {
    ObjectNode e = NODES.objectNode();
    e.put("type", "BType").put("key", pick(tenants.bKeys));
    e.putObject("payload").put("b", rnd.nextInt(100));
    if (chance(40)) {
      e.putObject("headers").put("h-" + suffix(), "v");
    }
    if (chance(30)) {
      e.put("source", "b-source");
    }
    if (chance(30)) {
      e.put("idempotencyKey", "b-idem-" + suffix());
    }
    if (chance(20)) {
      e.put("id", UUID.randomUUID().toString());
    }
    if (chance(15)) {
      e.put("deliverAt", "2020-01-01T00:00:00Z");
    }
    return e;
  }

  /**
   * One hostile change, anywhere in the body: a field's value (also deep in a list) made odd, a
   * field added or left out.
   */
  JsonNode oneFault(JsonNode body) {
    List<ObjectNode> objects = new ArrayList<>();
    collectObjects(body, objects);
    if (objects.isEmpty()) {
      return body;
    }
    ObjectNode target = pick(objects);
    List<String> fields = new ArrayList<>();
    target.fieldNames().forEachRemaining(fields::add);
    int k = rnd.nextInt(100);
    if (k < 70 && !fields.isEmpty()) {
      target.set(pick(fields), oddValue());
    } else if (k < 85 || fields.isEmpty()) {
      target.set(
          fields.isEmpty() || chance(50)
              ? pick("extra", "namespace", "tenant", suffix())
              : names.misspell(pick(fields)),
          oddValue());
    } else {
      target.remove(pick(fields));
    }
    return body;
  }

  static void collectObjects(JsonNode n, List<ObjectNode> out) {
    if (n.isObject()) {
      out.add((ObjectNode) n);
      n.forEach(x -> collectObjects(x, out));
    } else if (n.isArray()) {
      n.forEach(x -> collectObjects(x, out));
    }
  }

  /**
   * A value no field expects: NUL, lone surrogates, huge strings, times and numbers at the edges.
   */
  JsonNode oddValue() {
    return pick(
        () -> text("\u0000"),
        () -> text("a\u0000b"),
        () -> text(LONE_SURROGATE),
        () -> text("x".repeat(3000)),
        () -> text("k".repeat(10_000)),
        () -> text(""),
        () -> text(" "),
        () -> NODES.numberNode(-1),
        () -> NODES.numberNode(0),
        () -> NODES.numberNode(1e308),
        () -> NODES.numberNode(1e-320),
        () -> NODES.numberNode(new java.math.BigInteger("18446744073709551616")),
        () -> NODES.numberNode(1.5),
        () -> NODES.booleanNode(true),
        () -> NODES.nullNode(),
        () -> NODES.arrayNode(),
        () -> NODES.objectNode(),
        () -> text("999999999d"),
        () -> text("PT2562047788015215H"),
        () -> text("+1000000000-01-01T00:00:00Z"),
        () -> text("-1000000000-01-01T00:00:00Z"),
        () -> text("+294277-01-01T00:00:00Z"),
        () -> text("-4714-11-24T00:00:00Z"),
        () -> text("NaN"),
        () -> text("${jndi:ldap://127.0.0.1/x}"),
        () -> text("../../etc/passwd"),
        () -> text("\uD83D\uDE00"),
        () -> text("tb/x/0/99999999999999999999"));
  }
}
