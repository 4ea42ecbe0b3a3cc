package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Settlements for the attack, most of them well formed but for the ack id: one of B's real ack ids,
 * one of A's, or one changed or spliced without knowing the format.
 */
final class AttackAcks extends AttackGenerator {
  AttackAcks(AttackNames names) {
    super(names);
  }

  String settleBody() {
    ObjectNode body = NODES.objectNode();
    if (chance(4)) {
      body.set("settle", anyValue());
      return body.toString();
    }
    ArrayNode list = body.putArray(chance(96) ? "settle" : pick("acks", "Settle", "settles"));
    // Mostly one settlement, well formed but for its ack id, so the ack id is what is judged.
    int n = chance(65) ? 1 : 2 + rnd.nextInt(3);
    boolean sloppy = chance(20);
    for (int i = 0; i < n; i++) {
      ObjectNode s = list.addObject();
      s.set(sloppy && chance(30) ? names.misspell("ackId") : "ackId", ackValue());
      String outcome = pick("done", "done", "retry", "dead", "DONE");
      if (sloppy) {
        s.set("outcome", any("done", "retry", "dead", "x", 1, null));
      } else if (chance(80)) {
        s.put("outcome", outcome);
      }
      if (outcome.equals("retry") && chance(50)) {
        s.set(
            "retryIn",
            sloppy
                ? any("1s", "-1s", "x", 5, "999999999d", "PT2562047788015215H")
                : any("1s", "1h", "PT0S"));
      }
      if (!outcome.equals("done") && chance(50)) {
        s.set("reason", any("b-reason-" + tenants.rB, "", "x".repeat(3000), "\u0000"));
      }
      if (sloppy && chance(20)) {
        s.set(
            pick("subscription", "topic", "member"),
            text(pick(pick(tenants.aSubs), pick(tenants.aTopics), pick(tenants.aMembers))));
      }
    }
    return body.toString();
  }

  JsonNode ackValue() {
    int k = rnd.nextInt(100);
    if (k < 12 && !tenants.bAcks.isEmpty()) {
      return text(pick(tenants.bAcks));
    }
    if (k < 27) {
      return text(pick(tenants.aAcks));
    }
    if (k < 62) {
      return text(
          mutateAck(
              pick(
                  chance(60)
                      ? tenants.aAcks
                      : tenants.bAcks.isEmpty() ? tenants.aAcks : tenants.bAcks)));
    }
    if (k < 72) {
      String x = pick(tenants.aAcks);
      String y = pick(tenants.bAcks.isEmpty() ? tenants.aAcks : tenants.bAcks);
      int i = rnd.nextInt(Math.min(x.length(), y.length()) + 1);
      return text(
          chance(50)
              ? x.substring(0, i) + y.substring(Math.min(i, y.length()))
              : y.substring(0, Math.min(i, y.length())) + x.substring(Math.min(i, x.length())));
    }
    if (k < 88) {
      return text(
          pick(
              "1.0.1.0.1",
              "1.0.0.0.1",
              "0.0.0.0.0",
              "2.1.1.r2.3",
              "1.0.1.0",
              "-1.0.1.0.1",
              "99999999999999999999.0.1.0.1",
              "1.0.1.0.1.0",
              "1..1.0.1",
              ".....",
              "1.0.1.r.1",
              randomDigits()));
    }
    return any(
        "", null, 123, "x".repeat(5000), "\u0000", List.of("1.0.1.0.1"), Map.of("ackId", "1"));
  }

  String randomDigits() {
    StringBuilder sb = new StringBuilder();
    int parts = 3 + rnd.nextInt(4);
    for (int i = 0; i < parts; i++) {
      sb.append(i == 0 ? "" : ".")
          .append(chance(10) ? "r" : "")
          .append(rnd.nextInt(chance(50) ? 10 : 100000));
    }
    return sb.toString();
  }

  /** An ack id changed without knowing its format: a run of digits or one character at a time. */
  String mutateAck(String ack) {
    String s = ack;
    int edits = 1 + rnd.nextInt(2);
    for (int e = 0; e < edits; e++) {
      List<int[]> runs = new ArrayList<>();
      Matcher m = Pattern.compile("\\d+").matcher(s);
      while (m.find()) {
        runs.add(new int[] {m.start(), m.end()});
      }
      int kind = rnd.nextInt(6);
      if (kind <= 2 && !runs.isEmpty()) {
        int[] r = pick(runs);
        String digits = s.substring(r[0], r[1]);
        String replaced;
        switch (kind) {
          case 0:
            replaced =
                new java.math.BigInteger(digits)
                    .add(java.math.BigInteger.valueOf(chance(50) ? 1 : -1))
                    .max(java.math.BigInteger.ZERO)
                    .toString();
            break;
          case 1:
            replaced =
                pick(
                    "0", "1", "2", "-1", "99999999999999999999", String.valueOf(rnd.nextInt(1000)));
            break;
          default:
            // The run at the same place in another real ack id (of the other tenant, maybe).
            String other =
                pick(
                    chance(50)
                        ? tenants.aAcks
                        : tenants.bAcks.isEmpty() ? tenants.aAcks : tenants.bAcks);
            List<String> otherRuns = new ArrayList<>();
            Matcher om = Pattern.compile("\\d+").matcher(other);
            while (om.find()) {
              otherRuns.add(om.group());
            }
            int idx = runs.indexOf(r);
            replaced = idx < otherRuns.size() ? otherRuns.get(idx) : digits;
        }
        s = s.substring(0, r[0]) + replaced + s.substring(r[1]);
      } else if (kind == 3 && !s.isEmpty()) {
        int i = rnd.nextInt(s.length());
        String chars = "0123456789abcdefABCDEF._-";
        s = s.substring(0, i) + chars.charAt(rnd.nextInt(chars.length())) + s.substring(i + 1);
      } else if (kind == 4 && s.length() > 1) {
        s = s.substring(0, 1 + rnd.nextInt(s.length() - 1));
      } else {
        s = s + pick(".1", "0", "=", ".r1", "." + s);
      }
    }
    return s;
  }
}
