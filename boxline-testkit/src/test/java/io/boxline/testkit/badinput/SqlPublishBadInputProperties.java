package io.boxline.testkit.badinput;

import static io.boxline.testkit.badinput.Inputs.asSent;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Bad input through the SQL {@code publish} routine (docs/sql-publish.md), called over JDBC as an
 * application in another language would. A call the Java publisher would accept is accepted and the
 * event reads back exactly (what the driver sent: it sends a lone surrogate as '?'); a refusal is
 * an SQL error whose message starts with {@code boxline:} and names the argument (or the database's
 * own error for a NUL, or for text longer than the routine's parameter), and the outbox, log and
 * idempotency tables hold the same number of rows as before.
 */
abstract class SqlPublishBadInputProperties {
  static final ObjectMapper JSON = new ObjectMapper();

  private static final Comparator<JsonNode> SAME_JSON =
      (a, b) ->
          a.isNumber() && b.isNumber()
              ? a.decimalValue().compareTo(b.decimalValue())
              : a.equals(b) ? 0 : 1;

  /** The event id each accepted idempotency key (as sent) got first. */
  private final Map<String, UUID> firstWithKey = new HashMap<>();

  TestDatabase db;
  Boxline boxline;
  TopicName events;

  abstract TestDatabase newDatabase(String hint);

  /** Calls the routine in its own transaction and returns the event id. */
  abstract UUID publish(
      Connection c,
      String topic,
      String type,
      String payload,
      String key,
      String headers,
      String idempotencyKey,
      String source)
      throws SQLException;

  /** Whether an SQL error that is not Boxline's own is the database refusing the value itself. */
  abstract boolean databaseRefusal(SQLException e);

  @BeforeProperty
  void open() {
    db = newDatabase("badsql");
    boxline =
        db.boxline(store -> store.wakeupPoll(Duration.ofMillis(1), Duration.ofMillis(20)), b -> b);
    boxline.admin().createNamespace(NamespacePath.of("prop/sql"));
    events = TopicName.of("prop/sql", "events");
    boxline.admin().createTopic(events, 3);
  }

  @AfterProperty
  void close() {
    firstWithKey.clear();
    db.close();
  }

  private long rows() {
    return Inputs.rows(
        db.dataSource(), db.table("outbox"), db.table("log"), db.table("idempotency"));
  }

  @Provide
  Arbitrary<String> topic() {
    return Arbitraries.frequencyOf(
        Tuple.of(8, Arbitraries.just("prop/sql/events")),
        Tuple.of(2, Inputs.textOrNull()),
        Tuple.of(
            1,
            Arbitraries.of(
                "prop/sql/missing",
                "prop/sql/events'; --",
                "prop/sql",
                "events",
                "/prop/sql/events",
                "prop/sql/events/")));
  }

  @Provide
  Arbitrary<String> textOrNull() {
    return Inputs.textOrNull();
  }

  /** JSON text: objects of generated strings, numbers, literals, and text that is not JSON. */
  @Provide
  Arbitrary<String> payload() {
    return Arbitraries.frequencyOf(
            Tuple.of(6, Inputs.text().map(t -> json(Map.of("body", t, "n", 1.5)))),
            Tuple.of(2, Inputs.text().map(SqlPublishBadInputProperties::json)),
            Tuple.of(
                2,
                Arbitraries.of(
                    "null",
                    "0",
                    "-1e308",
                    "[]",
                    "{}",
                    "[1,\"a\",null,{\"b\":[]}]",
                    "\"\\u0000\"",
                    "{\"a\":\"\\ud800\"}",
                    "true")),
            Tuple.of(1, Arbitraries.of("", " ", "{", "NaN", "{'a':1}", "x'; DROP TABLE log; --")))
        .injectNull(0.03);
  }

  /** Headers as an object of generated strings, as other JSON, or as text that is not JSON. */
  @Provide
  Arbitrary<String> headers() {
    return Arbitraries.frequencyOf(
            Tuple.of(6, Inputs.headers().map(SqlPublishBadInputProperties::json)),
            Tuple.of(
                2,
                Arbitraries.of(
                    "{}",
                    "[]",
                    "1",
                    "\"s\"",
                    "null",
                    "{\"a\":1}",
                    "{\"a\":null}",
                    "{\"a\":{\"b\":\"c\"}}",
                    "{\"\":\"v\"}",
                    "{\"h\":\"\\u0000\"}")),
            Tuple.of(1, Arbitraries.of("{", "x'; DROP TABLE log; --")))
        .injectNull(0.3);
  }

  static String json(Object o) {
    try {
      return JSON.writeValueAsString(o);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The headers as the Java publisher would take them, or null when they are not all strings. */
  private static Map<String, String> stringHeaders(String headers) {
    if (headers == null) {
      return Map.of();
    }
    try {
      JsonNode n = JSON.readTree(headers);
      if (n == null || !n.isObject()) {
        return null;
      }
      Map<String, String> m = new LinkedHashMap<>();
      for (var it = n.fields(); it.hasNext(); ) {
        var f = it.next();
        if (!f.getValue().isTextual()) {
          return null;
        }
        m.put(f.getKey(), f.getValue().textValue());
      }
      return m;
    } catch (Exception e) {
      return null;
    }
  }

  private static boolean isJson(String s) {
    try {
      return s != null && JSON.readTree(s) != null && !s.isBlank();
    } catch (Exception e) {
      return false;
    }
  }

  /**
   * Why the Java publisher (or the routine's own rules for JSON and topics) refuses these values,
   * or null when it takes them. The values are first made what the driver sends.
   */
  private String javaRefusal(
      String topic,
      String type,
      String payload,
      String key,
      String headers,
      String idem,
      String source) {
    if (!"prop/sql/events".equals(topic)) {
      return "topic";
    }
    if (!isJson(payload)) {
      return "payload";
    }
    String lower = payload.toLowerCase();
    if (lower.contains("\\u0000") || lower.contains("\\ud8") || lower.contains("\\udc")) {
      return "either: PostgreSQL's jsonb refuses a \\u0000 or lone-surrogate escape, MariaDB keeps it";
    }
    Map<String, String> h = stringHeaders(asSent(headers));
    if (h == null) {
      return "headers";
    }
    try {
      OutgoingEvent.builder(events)
          .type(asSent(type))
          .key(asSent(key))
          .source(asSent(source))
          .headers(h)
          .idempotencyKey(asSent(idem))
          .build();
      return null;
    } catch (ValidationException e) {
      return e.getMessage();
    }
  }

  /**
   * An idempotency key of spaces is a key, as in Java (MariaDB's publish procedure refused it
   * before version 12: its {@code = ''} ignores trailing spaces).
   */
  @net.jqwik.api.Example
  void anIdempotencyKeyOfSpacesIsAKey() throws Exception {
    long before = rows();
    UUID first;
    UUID again;
    UUID other;
    try (Connection c = db.dataSource().getConnection()) {
      first = publish(c, "prop/sql/events", "t", "{}", null, null, "   ", null);
      again = publish(c, "prop/sql/events", "t", "{}", null, null, "   ", null);
      other = publish(c, "prop/sql/events", "t", "{}", null, null, "  ", null);
    }
    assertThat(again).isEqualTo(first);
    assertThat(other).isNotEqualTo(first);
    // Two events, each with its key row: the repeat wrote nothing.
    assertThat(rows()).isEqualTo(before + 4);
  }

  @Property(tries = 400)
  void sqlPublishStoresExactlyOrRefusesWithBoxlinesMessage(
      @ForAll("topic") String topic,
      @ForAll("textOrNull") String type,
      @ForAll("payload") String payload,
      @ForAll("textOrNull") String key,
      @ForAll("headers") String headers,
      @ForAll("textOrNull") String idempotencyKey,
      @ForAll("textOrNull") String source)
      throws Exception {
    String refusal = javaRefusal(topic, type, payload, key, headers, idempotencyKey, source);
    long before = rows();
    UUID id;
    try (Connection c = db.dataSource().getConnection()) {
      id = publish(c, topic, type, payload, key, headers, idempotencyKey, source);
    } catch (SQLException e) {
      String m = e.getMessage();
      assertThat(m.contains("boxline:") || databaseRefusal(e))
          .as("Boxline's refusal or the database's own: %s", m)
          .isTrue();
      if (m.contains("boxline:")) {
        assertThat(m)
            .as("names the argument")
            .containsAnyOf(
                "topic",
                "p_type",
                "p_payload",
                "p_key",
                "p_headers",
                "p_idempotency_key",
                "p_source");
      }
      assertThat(rows()).as("nothing written").isEqualTo(before);
      assertThat(refusal).as("refused what the Java publisher takes: %s", m).isNotNull();
      return;
    }
    assertThat(id).isNotNull();
    if (idempotencyKey != null && firstWithKey.containsKey(asSent(idempotencyKey))) {
      // A generated key met again: the first event's id, nothing written.
      assertThat(id).isEqualTo(firstWithKey.get(asSent(idempotencyKey)));
      assertThat(rows()).isEqualTo(before);
      return;
    }
    if (refusal != null) {
      // The routines count characters as the databases do (code points, where Java counts UTF-16
      // units), and MariaDB's TRIM takes only spaces as blank: values over a limit in Java's count
      // but within the routine's, or blank only by Unicode's spaces, are stored as given.
      assertThat(refusal)
          .as("accepted what the Java publisher refuses")
          .containsAnyOf("characters long", "must not be empty", "must be set", "either:");
    }
    Event back = awaitEvent(id);
    assertThat(back.type()).isEqualTo(asSent(type));
    assertThat(back.key()).isEqualTo(asSent(key));
    assertThat(back.source()).isEqualTo(asSent(source));
    assertThat(back.contentType()).isEqualTo("application/json");
    assertThat(back.headers()).isEqualTo(stringHeaders(asSent(headers)));
    // The same JSON: numbers compared by value (jsonb writes -1e308 out in full).
    assertThat(JSON.readTree(back.payload()).equals(SAME_JSON, JSON.readTree(asSent(payload))))
        .as("payload %s read back as %s", payload, new String(back.payload(), UTF_8))
        .isTrue();
    if (idempotencyKey != null) {
      firstWithKey.put(asSent(idempotencyKey), id);
      long stored = rows();
      try (Connection c = db.dataSource().getConnection()) {
        UUID again = publish(c, topic, "again", "{}", null, null, idempotencyKey, null);
        assertThat(again).as("the first event's id").isEqualTo(id);
      }
      assertThat(rows()).isEqualTo(stored);
    }
  }

  private Event awaitEvent(UUID id) {
    Event[] found = new Event[1];
    Await.until(
        Duration.ofSeconds(20),
        "event " + id + " sequenced",
        () -> {
          for (int p = 0; p < 3; p++) {
            List<Event> e = boxline.admin().events(EventQuery.of(events, p).eventId(id).limit(1));
            if (!e.isEmpty()) {
              found[0] = e.get(0);
              return true;
            }
          }
          return false;
        });
    return found[0];
  }
}
