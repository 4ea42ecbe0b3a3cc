package io.boxline.server;

import static io.boxline.server.TwoTenants.subPath;
import static io.boxline.server.TwoTenants.topicPath;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A's state, compared before and after an attack: as the API shows it to a token for "*", and as
 * rows straight from the database; and the heads of every topic, A's and B's.
 */
final class TenantSnapshots {
  static final Set<String> VOLATILE = Set.of("lagSeconds", "readAt", "ageSeconds");

  final TwoTenants tenants;

  TenantSnapshots(TwoTenants tenants) {
    this.tenants = tenants;
  }

  static JsonNode stripVolatile(JsonNode n) {
    if (n.isObject()) {
      ObjectNode o = ((ObjectNode) n).deepCopy();
      VOLATILE.forEach(o::remove);
      List<String> names = new ArrayList<>();
      o.fieldNames().forEachRemaining(names::add);
      for (String f : names) {
        o.set(f, stripVolatile(o.get(f)));
      }
      return o;
    }
    if (n.isArray()) {
      ArrayNode a = JsonNodeFactory.instance.arrayNode();
      n.forEach(x -> a.add(stripVolatile(x)));
      return a;
    }
    return n;
  }

  String read(String path) {
    Api.Reply r = tenants.star.get(path);
    if (r.status() != 200) {
      return r.status() + " " + r.body();
    }
    return stripVolatile(r.json()).toString();
  }

  boolean isA(String topicName) {
    return topicName.equals("ta") || topicName.startsWith("ta/");
  }

  /** A's namespaces, topics with their events, subscriptions with everything the API shows. */
  Map<String, String> apiSnapshot() {
    Map<String, String> s = new TreeMap<>();
    List<String> ns = new ArrayList<>();
    tenants
        .star
        .get("/v1/namespaces")
        .json()
        .get("namespaces")
        .forEach(
            n -> {
              if (isA(n.asText())) {
                ns.add(n.asText());
              }
            });
    s.put("namespaces", ns.toString());
    for (JsonNode t : tenants.star.get("/v1/topics").json().get("topics")) {
      String name = t.get("name").asText();
      if (!isA(name)) {
        continue;
      }
      s.put("topic " + name, read(topicPath(name)));
      try {
        s.put(
            "events " + name,
            tenants.star.allEvents(topicPath(name), t.get("partitions").asInt()).toString());
      } catch (AssertionError e) {
        s.put("events " + name, "unreadable: " + e.getMessage());
      }
    }
    for (JsonNode sub : tenants.star.get("/v1/subscriptions").json().get("subscriptions")) {
      String name = sub.get("name").asText();
      boolean touchesA = false;
      for (JsonNode t : sub.get("topics")) {
        touchesA |= isA(t.asText());
      }
      if (!touchesA && !tenants.aSubs.contains(name) && !tenants.aSubBare.contains(name)) {
        continue;
      }
      String p = subPath(name);
      s.put("subscription " + name, read(p));
      for (String tail :
          List.of(
              "lag",
              "group",
              "group-policy",
              "failures",
              "retries?limit=10000",
              "dead-letters?limit=10000",
              "dead-letters/reasons")) {
        s.put("subscription " + name + " " + tail, read(p + "/" + tail));
      }
    }
    List<String> f = new ArrayList<>();
    tenants
        .star
        .get("/v1/failures")
        .json()
        .get("failures")
        .forEach(
            x -> {
              if (tenants.aSubs.contains(x.path("subscription").asText())) {
                f.add(stripVolatile(x).toString());
              }
            });
    s.put("failures", f.toString());
    return s;
  }

  /** The rows of A's namespaces, topics and subscriptions, straight from the schema. */
  Map<String, String> dbSnapshot() throws Exception {
    Map<String, String> s = new TreeMap<>();
    try (Connection c = Databases.postgres();
        Statement st = c.createStatement()) {
      Set<String> tables = new TreeSet<>();
      try (ResultSet rs =
          st.executeQuery(
              "SELECT table_name FROM information_schema.tables WHERE table_schema = '"
                  + tenants.schema
                  + "'")) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      String ns =
          ids(
              st,
              "SELECT id FROM "
                  + tenants.schema
                  + ".namespace WHERE path = 'ta' OR path LIKE 'ta/%'");
      String topics =
          ids(st, "SELECT id FROM " + tenants.schema + ".topic WHERE namespace_id IN (" + ns + ")");
      StringBuilder names = new StringBuilder("''");
      for (String n : tenants.aSubs) {
        names.append(",'").append(n.replace("'", "''")).append('\'');
      }
      for (String n : tenants.aSubBare) {
        names.append(",'").append(n.replace("'", "''")).append('\'');
      }
      String subs =
          ids(
              st,
              "SELECT subscription_id FROM "
                  + tenants.schema
                  + ".subscription_topic WHERE topic_id IN ("
                  + topics
                  + ") UNION SELECT id FROM "
                  + tenants.schema
                  + ".subscription WHERE name IN ("
                  + names
                  + ")");
      StringBuilder subNames = new StringBuilder(names);
      try (ResultSet rs =
          st.executeQuery(
              "SELECT name FROM " + tenants.schema + ".subscription WHERE id IN (" + subs + ")")) {
        while (rs.next()) {
          subNames.append(",'").append(rs.getString(1).replace("'", "''")).append('\'');
        }
      }
      Map<String, String> where = new LinkedHashMap<>();
      where.put("namespace", "id IN (" + ns + ")");
      where.put("topic", "id IN (" + topics + ")");
      where.put("partition", "topic_id IN (" + topics + ")");
      where.put("log", "topic_id IN (" + topics + ")");
      where.put("outbox", "topic_id IN (" + topics + ")");
      where.put("outbox_rejected", "topic_id IN (" + topics + ")");
      where.put("idempotency", "topic_id IN (" + topics + ")");
      where.put("subscription", "id IN (" + subs + ")");
      where.put(
          "subscription_topic",
          "topic_id IN (" + topics + ") OR subscription_id IN (" + subs + ")");
      where.put("cursor", "topic_id IN (" + topics + ") OR subscription_id IN (" + subs + ")");
      where.put("member", "group_name IN (" + subNames + ")");
      where.put("lease", "group_name IN (" + subNames + ") OR topic_id IN (" + topics + ")");
      where.put("group_policy", "group_name IN (" + subNames + ")");
      where.put("parked", "subscription_id IN (" + subs + ") OR topic_id IN (" + topics + ")");
      where.put("inbox", "subscription_id IN (" + subs + ")");
      for (Map.Entry<String, String> w : where.entrySet()) {
        if (!tables.contains(w.getKey())) {
          continue;
        }
        StringBuilder rows = new StringBuilder();
        String sql =
            "SELECT t::text FROM "
                + tenants.schema
                + ".\""
                + w.getKey()
                + "\" t WHERE "
                + w.getValue()
                + " ORDER BY 1";
        try (ResultSet rs = st.executeQuery(sql)) {
          while (rs.next()) {
            rows.append(rs.getString(1)).append('\n');
          }
        } catch (java.sql.SQLException e) {
          rows.append("(cannot read: ").append(e.getMessage()).append(')');
        }
        s.put("table " + w.getKey(), rows.toString());
      }
    }
    return s;
  }

  static String ids(Statement st, String sql) throws java.sql.SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out.isEmpty() ? "-1" : String.join(",", out);
  }

  static void compare(
      String kind, Map<String, String> before, Map<String, String> after, AttackFailures failures) {
    Set<String> keys = new TreeSet<>(before.keySet());
    keys.addAll(after.keySet());
    for (String k : keys) {
      String x = before.get(k);
      String y = after.get(k);
      if (x == null ? y == null : x.equals(y)) {
        continue;
      }
      failures.add(
          -1,
          kind,
          k,
          "("
              + (kind.startsWith("written")
                  ? "heads of every topic, A's and B's"
                  : "state of tenant A")
              + ": "
              + k
              + ")",
          "before: "
              + RawHttp.truncate(String.valueOf(x), 1500)
              + "\nafter:  "
              + RawHttp.truncate(String.valueOf(y), 1500),
          "changed: " + k + " " + firstDifference(x, y));
    }
  }

  static String firstDifference(String x, String y) {
    if (x == null || y == null) {
      return x == null ? "(appeared)" : "(disappeared)";
    }
    int i = 0;
    while (i < x.length() && i < y.length() && x.charAt(i) == y.charAt(i)) {
      i++;
    }
    int from = Math.max(0, i - 80);
    return "at char "
        + i
        + ": before …"
        + x.substring(from, Math.min(x.length(), i + 120))
        + "… after …"
        + y.substring(from, Math.min(y.length(), i + 120))
        + "…";
  }

  /** The heads and event counts of every topic, A's and B's. */
  Map<String, String> heads() {
    Map<String, String> out = new TreeMap<>();
    for (JsonNode t : tenants.star.get("/v1/topics").json().get("topics")) {
      String name = t.get("name").asText();
      JsonNode state = tenants.star.get(topicPath(name)).json();
      out.put(name, state.get("heads") + " events=" + state.get("events"));
    }
    return out;
  }
}
