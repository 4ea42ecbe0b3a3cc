package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The SQL-level {@code publish()} (PostgreSQL's function, MariaDB's procedure) applies the Java
 * publisher's rules: hundreds of generated bad arguments are each refused with a "boxline:" message
 * naming the argument, and nothing is written; generated good ones are delivered exactly as given.
 */
public abstract class SqlPublishBehaviour extends DatabaseSuite {

  /** The arguments of one call. */
  public record Args(
      String topic,
      String type,
      String payload,
      String key,
      String headers,
      String idempotencyKey,
      String source) {}

  /** Calls the dialect's publish in {@code c}'s transaction; returns the event id. */
  protected abstract String callPublish(Connection c, String schema, Args args) throws SQLException;

  /** Whether the database stores text with a NUL character (MariaDB does, PostgreSQL refuses). */
  protected abstract boolean storesNul();

  private static final String TOPIC = "acme/sql/orders";

  private Boxline boxline;
  private TopicName topic;

  private void open() {
    boxline = db.boxline(EventTypes.empty());
    topic = topic(boxline, TOPIC, 3);
  }

  private Args good() {
    return new Args(
        TOPIC, "order.placed", "{\"id\": 1}", "k", "{\"tenant\": \"acme\"}", null, null);
  }

  private long rows() throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (SELECT count(*) FROM "
                    + db.table("outbox")
                    + ") + (SELECT count(*) FROM "
                    + db.table("log")
                    + ") + (SELECT count(*) FROM "
                    + db.table("idempotency")
                    + ")")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** One generated bad call and the argument its refusal must name. */
  private record Case(Args args, String names) {}

  private static String q(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  private Case badCase(Random r) {
    Args g = good();
    String word = "w" + r.nextInt(1000);
    char control = "\n\t\r\u0001\u001f\u007f\u0085".charAt(r.nextInt(7));
    int kind = r.nextInt(storesNul() ? 18 : 16);
    switch (kind) {
      case 0:
        return new Case(
            new Args(g.topic(), null, g.payload(), g.key(), g.headers(), null, null), "p_type");
      case 1:
        return new Case(
            new Args(
                g.topic(), " ".repeat(r.nextInt(4)), g.payload(), g.key(), g.headers(), null, null),
            "p_type");
      case 2:
        return new Case(
            new Args(
                g.topic(), "order" + control + word, g.payload(), g.key(), g.headers(), null, null),
            "p_type");
      case 3:
        return new Case(
            new Args(
                g.topic(),
                "t".repeat(257 + r.nextInt(50)),
                g.payload(),
                g.key(),
                g.headers(),
                null,
                null),
            "p_type");
      case 4:
        return new Case(
            new Args(g.topic(), g.type(), null, g.key(), g.headers(), null, null), "p_payload");
      case 5:
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                "k".repeat(513 + r.nextInt(100)),
                g.headers(),
                null,
                null),
            "p_key");
      case 6:
        return new Case(
            new Args(g.topic(), g.type(), g.payload(), g.key(), g.headers(), "", null),
            "p_idempotency_key");
      case 7:
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                g.key(),
                g.headers(),
                "i".repeat(513 + r.nextInt(9)),
                null),
            "p_idempotency_key");
      case 8:
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                g.key(),
                g.headers(),
                null,
                "s".repeat(4097 + r.nextInt(9))),
            "p_source");
      case 9:
        String[] notObjects = {
          "[]", "[\"" + word + "\"]", "\"" + word + "\"", "1", "true", "null", "2.5"
        };
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                g.key(),
                notObjects[r.nextInt(notObjects.length)],
                null,
                null),
            "p_headers");
      case 10:
      case 11:
        String[] notStrings = {
          "1", "-2.5", "true", "false", "null", "{}", "{\"a\": \"b\"}", "[]", "[\"x\"]"
        };
        String headers =
            "{\"ok\": \"v\", \""
                + word
                + "\": "
                + notStrings[r.nextInt(notStrings.length)]
                + (r.nextBoolean() ? ", \"z\": \"w\"}" : "}");
        return new Case(
            new Args(g.topic(), g.type(), g.payload(), g.key(), headers, null, null), "p_headers");
      case 12:
        String name =
            r.nextBoolean()
                ? " ".repeat(r.nextInt(3))
                : word
                    + (control == '\n'
                        ? "\\n"
                        : control == '\t'
                            ? "\\t"
                            : control == '\r' ? "\\r" : String.format("\\u%04x", (int) control));
        return new Case(
            new Args(
                g.topic(), g.type(), g.payload(), g.key(), "{\"" + name + "\": \"v\"}", null, null),
            "p_headers");
      case 13:
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                g.key(),
                "{\"" + "n".repeat(257) + "\": \"v\"}",
                null,
                null),
            "p_headers");
      case 14:
        return new Case(
            new Args("acme/sql/" + word, g.type(), g.payload(), g.key(), g.headers(), null, null),
            "does not exist");
      case 15:
        return new Case(
            new Args(
                r.nextBoolean() ? null : word,
                g.type(),
                g.payload(),
                g.key(),
                g.headers(),
                null,
                null),
            "no namespace");
      case 16:
        return new Case(
            new Args(g.topic(), g.type(), g.payload(), word + '\0', g.headers(), null, null),
            "p_key");
      default:
        return new Case(
            new Args(
                g.topic(),
                g.type(),
                g.payload(),
                g.key(),
                "{\"h\": \"" + word + "\\u0000\"}",
                null,
                null),
            "p_headers");
    }
  }

  /**
   * 500 generated bad calls, each after a good call in the same transaction: every one is refused
   * with a "boxline:" message naming the argument, and (after the rollback) nothing is written.
   */
  @Test
  void badArgumentsAreRefusedNamingThemAndNothingIsWritten() throws Exception {
    open();
    long seed = System.nanoTime();
    Random r = new Random(seed);
    long before = rows();
    Map<String, Integer> byArgument = new HashMap<>();
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 500; i++) {
        Case bad = badCase(r);
        callPublish(c, db.schema(), good());
        assertThatThrownBy(() -> callPublish(c, db.schema(), bad.args()))
            .as("seed " + seed + ": " + bad)
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("boxline:")
            .hasMessageContaining(bad.names());
        c.rollback();
        byArgument.merge(bad.names(), 1, Integer::sum);
      }
    }
    assertThat(rows()).as("nothing written (seed " + seed + ")").isEqualTo(before);
    assertThat(byArgument.keySet())
        .as("every kind of refusal was tried")
        .hasSizeGreaterThanOrEqualTo(8);
  }

  /**
   * Generated good calls (header objects of strings with quotes, escapes, characters outside the
   * BMP; keys and idempotency keys up to their limits; an empty object, stored as no headers) are
   * delivered with exactly the headers, key, type and source given.
   */
  @Test
  void goodArgumentsArriveExactlyAsGiven() throws Exception {
    open();
    long seed = System.nanoTime();
    Random r = new Random(seed);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "sql", topic);
    Map<UUID, Args> sent = new LinkedHashMap<>();
    Map<UUID, Map<String, String>> expectedHeaders = new HashMap<>();
    String[] samples = {
      "plain", "quo\"te", "back\\slash", "字", "😀", "tab\tinside", "' OR 1=1 --", ""
    };
    try (Connection c = db.dataSource().getConnection()) {
      for (int i = 0; i < 60; i++) {
        Map<String, String> headers = new LinkedHashMap<>();
        int n = r.nextInt(4);
        for (int h = 0; h < n; h++) {
          String name = "h" + h + samples[r.nextInt(samples.length)].replace("\t", "_");
          headers.put(name, samples[r.nextInt(samples.length)] + i);
        }
        StringBuilder json = new StringBuilder("{");
        headers.forEach(
            (k, v) ->
                json.append(json.length() > 1 ? ", " : "")
                    .append('"')
                    .append(q(k))
                    .append("\": \"")
                    .append(q(v).replace("\t", "\\t"))
                    .append('"'));
        json.append('}');
        String key =
            r.nextInt(10) == 0 ? "字".repeat(512) : "key-" + samples[r.nextInt(samples.length)] + i;
        String idem = r.nextInt(3) == 0 ? i + "😀".repeat(255) : null;
        Args a =
            new Args(
                TOPIC,
                "order." + samples[r.nextInt(samples.length)].replace("\t", "_") + i,
                "{\"n\": " + i + "}",
                key,
                r.nextInt(5) == 0 ? null : json.toString(),
                idem,
                r.nextBoolean() ? null : "urn:" + samples[r.nextInt(samples.length)]);
        UUID id = UUID.fromString(callPublish(c, db.schema(), a));
        sent.put(id, a);
        expectedHeaders.put(id, a.headers() == null ? Map.of() : headers);
      }
    }
    Await.until(WAIT, "60 events (seed " + seed + ")", () -> seen.size() >= sent.size());
    Map<UUID, Event> byId = new HashMap<>();
    seen.all.forEach(e -> byId.put(e.id(), e));
    List<String> mismatches = new ArrayList<>();
    sent.forEach(
        (id, a) -> {
          Event e = byId.get(id);
          if (e == null
              || !e.type().equals(a.type())
              || !e.key().equals(a.key())
              || !java.util.Objects.equals(e.source(), a.source())
              || !e.headers().equals(expectedHeaders.get(id))) {
            mismatches.add(a + " -> " + e + " " + (e == null ? "" : e.headers()));
          }
        });
    assertThat(mismatches).as("seed " + seed).isEmpty();
  }
}
