package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Rows no writer of Boxline produces — headers that are not a JSON object of strings, an empty
 * event type — written by hand into the outbox or over events already in the log. Neither the
 * sequencer nor any consumer may stall on them: each is dead-lettered with its reason after the
 * retry policy, by every kind of handler (plain, batch, transactional, on the committing thread),
 * and every other event, of the same partition and of other topics, is delivered in order. The bad
 * values are generated (seeded, printed), not a hand-picked few.
 */
public abstract class MalformedRowBehaviour extends DatabaseSuite {
  private static final RetryPolicy POLICY =
      RetryPolicy.exponential(Duration.ofMillis(2), Duration.ofMillis(10))
          .inPlaceAttempts(1)
          .maxAttempts(2);
  private static final int BAD_ROWS = 40;

  /** Events the handlers of one subscription saw, and the malformed events it reported. */
  private static final class Seen {
    final List<Event> handled = new CopyOnWriteArrayList<>();
    final Set<UUID> reported = ConcurrentHashMap.newKeySet();
  }

  private final Map<String, Seen> seen = new ConcurrentHashMap<>();
  private Boxline boxline;
  private long seed;
  private Random random;

  private void open() {
    seed = System.nanoTime();
    random = new Random(seed);
    System.out.println("MalformedRowBehaviour seed " + seed);
    BoxlineObserver observer =
        new BoxlineObserver() {
          @Override
          public void malformed(String subscription, Event event, String reason) {
            seen.computeIfAbsent(subscription, s -> new Seen()).reported.add(event.id());
          }
        };
    boxline = db.boxline(b -> b.eventTypes(EventTypes.empty()).observer(observer));
  }

  /**
   * Headers a store cannot decode as a JSON object of strings: nested objects, arrays, numbers,
   * booleans and nulls as values, and top-level values that are not objects; on databases that
   * store headers as text (not PostgreSQL's jsonb), also text that is not JSON at all.
   */
  private String badHeaders() {
    String name = randomName();
    String[] values = {
      "{\"x\": " + random.nextInt() + "}",
      "{\"deep\": {\"er\": \"" + name + "\"}}",
      "[\"" + name + "\"]",
      "true",
      "null",
      String.valueOf(random.nextDouble()),
      "false",
      "{}",
      "[]",
    };
    int kind = random.nextInt(db.dialect() == TestDatabase.Dialect.POSTGRESQL ? 7 : 9);
    switch (kind) {
      case 0:
        return "{\"" + name + "\": " + randomNonString(values) + "}";
      case 1:
        return "{\"ok\": \"fine\", \"" + name + "\": null}";
      case 2:
        return "[" + randomNonString(values) + "]";
      case 3:
        return "\"" + name + "\"";
      case 4:
        return String.valueOf(random.nextLong());
      case 5:
        return random.nextBoolean() ? "true" : "null";
      case 6:
        return "{\"a\": \"b\", \"" + name + "\": [\"c\", 1]}";
      case 7:
        return "{\"" + name + "\": \"unterminated";
      default:
        return "not json " + name;
    }
  }

  private String randomNonString(String[] values) {
    String v = values[random.nextInt(values.length)];
    return v.equals("{}") || v.equals("[]") ? "{\"n\": 1}" : v;
  }

  private String randomName() {
    String alphabet = "abcXYZ-_.ü字😀 ";
    StringBuilder b = new StringBuilder();
    int n = 1 + random.nextInt(12);
    for (int i = 0; i < n; ) {
      int cp =
          alphabet.codePointAt(
              alphabet.offsetByCodePoints(
                  0, random.nextInt(alphabet.codePointCount(0, alphabet.length()))));
      b.appendCodePoint(cp);
      i++;
    }
    return b.toString().replace("\"", "");
  }

  /** A bad row: headers that cannot be decoded, or (one in five) an empty event type. */
  private record Bad(UUID id, String key, String headers, String type) {
    String expectedReason() {
      return headers == null ? "the stored event type is empty" : "cannot be decoded";
    }
  }

  private Bad nextBad(int i) {
    UUID id = UUID.randomUUID();
    String key = "bad-" + i;
    if (random.nextInt(5) == 0) {
      return new Bad(id, key, null, random.nextBoolean() ? "" : "   ");
    }
    return new Bad(id, key, badHeaders(), "test.event");
  }

  /** Writes {@code bad} into the outbox as a trigger or a script would, partition left open. */
  private void insertIntoOutbox(long topicId, Bad bad) throws Exception {
    insertIntoOutbox(topicId, null, bad);
  }

  /** Writes {@code bad} into the outbox as a script would, with a partition when not null. */
  private void insertIntoOutbox(long topicId, Integer partition, Bad bad) throws Exception {
    boolean pg = db.dialect() == TestDatabase.Dialect.POSTGRESQL;
    String partitionColumn =
        pg
            ? "partition"
            : db.dialect() == TestDatabase.Dialect.MARIADB ? "`partition`" : "\"PARTITION\"";
    String sql =
        "INSERT INTO "
            + db.table("outbox")
            + " (event_id, topic_id, "
            + partitionColumn
            + ", event_key, event_type, content_type, payload, headers"
            + (pg
                ? ") VALUES (?, ?, ?, ?, ?, 'text/plain', ?, CAST(? AS jsonb))"
                : ", created_at) VALUES (?, ?, ?, ?, ?, 'text/plain', ?, ?, ?)");
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bindId(ps, 1, bad.id());
      ps.setLong(2, topicId);
      if (partition == null) {
        ps.setNull(3, java.sql.Types.INTEGER);
      } else {
        ps.setInt(3, partition);
      }
      ps.setString(4, bad.key());
      ps.setString(5, bad.type());
      ps.setBytes(6, ("bad " + bad.key()).getBytes(StandardCharsets.UTF_8));
      ps.setString(7, bad.headers());
      if (!pg) {
        ps.setLong(8, System.currentTimeMillis() * 1000);
      }
      ps.executeUpdate();
    }
  }

  /** Overwrites an event already in the log with {@code bad}'s headers or type. */
  private void corruptInLog(UUID eventId, Bad bad) throws Exception {
    boolean pg = db.dialect() == TestDatabase.Dialect.POSTGRESQL;
    String sql =
        "UPDATE "
            + db.table("log")
            + " SET headers = "
            + (pg ? "CAST(? AS jsonb)" : "?")
            + ", event_type = ? WHERE event_id = ?";
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, bad.headers());
      ps.setString(2, bad.type());
      bindId(ps, 3, eventId);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  private void bindId(PreparedStatement ps, int i, UUID id) throws Exception {
    if (db.dialect() == TestDatabase.Dialect.POSTGRESQL) {
      ps.setObject(i, id);
    } else {
      ps.setString(i, id.toString());
    }
  }

  private void consume(String subscription, String kind) {
    Seen s = seen.computeIfAbsent(subscription, x -> new Seen());
    var builder = boxline.consumer(subscription).retryPolicy(POLICY).batchSize(7);
    switch (kind) {
      case "plain":
        builder.handler(s.handled::add);
        break;
      case "batch":
        builder.batchHandler(s.handled::addAll);
        break;
      case "transactional":
        builder.transactionalHandler((e, tx) -> s.handled.add(e));
        break;
      case "committing":
        builder.handleOnCommittingThread(true).handler(s.handled::add);
        break;
      default:
        throw new IllegalArgumentException(kind);
    }
    builder.start();
  }

  /**
   * Every subscription handled exactly the good events, each key in publish order, and
   * dead-lettered exactly the bad ones with their reasons; each bad event was reported.
   */
  private void assertOutcome(
      List<String> subscriptions, Map<String, List<String>> goodByKey, List<Bad> bads) {
    int good = goodByKey.values().stream().mapToInt(List::size).sum();
    for (String sub : subscriptions) {
      Seen s = seen.get(sub);
      Await.until(
          WAIT,
          sub
              + " handled "
              + good
              + " good events and dead-lettered "
              + bads.size()
              + " (seed "
              + seed
              + ")",
          () -> s.handled.size() + "/" + deadLetters(sub).size(),
          x -> s.handled.size() >= good && deadLetters(sub).size() >= bads.size());
      Map<String, List<String>> handledByKey = new LinkedHashMap<>();
      // A transactional handler is called again for events whose batch rolled back (its database
      // writes are not repeated): count each event once, where it was first handled.
      Set<UUID> once = new java.util.HashSet<>();
      for (Event e : s.handled) {
        if (!once.add(e.id())) {
          assertThat(sub)
              .as("only a transactional handler sees an event twice")
              .isEqualTo("transactional");
          continue;
        }
        handledByKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(SuiteSupport.body(e));
      }
      assertThat(handledByKey).as(sub + " (seed " + seed + ")").isEqualTo(goodByKey);
      Map<UUID, DeadLetter> dead =
          deadLetters(sub).stream().collect(Collectors.toMap(d -> d.event().id(), d -> d));
      assertThat(dead.keySet())
          .as(sub + " dead letters (seed " + seed + ")")
          .isEqualTo(bads.stream().map(Bad::id).collect(Collectors.toSet()));
      for (Bad b : bads) {
        DeadLetter d = dead.get(b.id());
        assertThat(d.lastError())
            .as(sub + " " + b)
            .contains("MalformedEventException")
            .contains(b.expectedReason());
        assertThat(d.attempts()).isEqualTo(POLICY.maxAttempts());
      }
      assertThat(s.reported).as(sub + " reported every malformed event").containsAll(dead.keySet());
      SuiteSupport.awaitCaughtUp(boxline, sub);
    }
  }

  private List<DeadLetter> deadLetters(String subscription) {
    return boxline.deadLetters().list(DeadLetterQuery.of(subscription));
  }

  /**
   * Bad rows written into the outbox between good events of the same partition, and of a second
   * topic: the sequencer moves them all, and plain, batch and transactional consumers dead-letter
   * the bad ones while the good ones of both topics arrive in order.
   */
  @Test
  void badRowsInTheOutboxAreDeadLetteredAndNothingElseStalls() throws Exception {
    open();
    TopicName a = topic(boxline, "acme/rows/a", 1);
    TopicName b = topic(boxline, "acme/rows/b", 2);
    List<String> subs = List.of("plain", "batch", "transactional");
    for (String sub : subs) {
      subscribe(boxline, sub, a, b);
      consume(sub, sub);
    }
    long topicA = boxline.admin().topic(a).orElseThrow().id();
    Map<String, List<String>> good = new LinkedHashMap<>();
    List<Bad> bads = new ArrayList<>();
    for (int i = 0; i < BAD_ROWS; i++) {
      for (TopicName t : List.of(a, b)) {
        String key = "good-" + t.name() + "-" + (i % 5);
        String body = t.name() + "-" + i;
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, key, body)));
        good.computeIfAbsent(key, k -> new ArrayList<>()).add(body);
      }
      Bad bad = nextBad(i);
      insertIntoOutbox(topicA, bad);
      bads.add(bad);
    }
    assertOutcome(subs, good, bads);
  }

  /**
   * Events of an in-transaction topic overwritten in the log with bad headers or types before the
   * consumers start, then more events published: all four kinds of handler (the committing-thread
   * one included) dead-letter the bad ones and deliver the rest.
   */
  @Test
  void badRowsInTheLogAreDeadLetteredByEveryKindOfHandler() throws Exception {
    open();
    TopicName t = topic(boxline, "acme/rows/direct", 1, Sequencing.IN_TRANSACTION);
    List<String> subs = List.of("plain", "batch", "transactional", "committing");
    for (String sub : subs) {
      subscribe(boxline, sub, t);
    }
    Map<String, List<String>> good = new LinkedHashMap<>();
    List<Bad> bads = new ArrayList<>();
    Map<UUID, Bad> toCorrupt = new HashMap<>();
    for (int i = 0; i < BAD_ROWS; i++) {
      String key = "good-" + (i % 5);
      String body = "before-" + i;
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, key, body)));
      good.computeIfAbsent(key, k -> new ArrayList<>()).add(body);
      Bad bad = nextBad(i);
      UUID id =
          boxline.inTransaction(
              tx -> boxline.publisher().publish(tx, raw(t, bad.key(), "bad")).eventId());
      Bad stored = new Bad(id, bad.key(), bad.headers(), bad.type());
      toCorrupt.put(id, stored);
      bads.add(stored);
    }
    for (Map.Entry<UUID, Bad> e : toCorrupt.entrySet()) {
      corruptInLog(e.getKey(), e.getValue());
    }
    for (String sub : subs) {
      consume(sub, sub);
    }
    for (int i = 0; i < 20; i++) {
      String key = "good-" + (i % 5);
      String body = "after-" + i;
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, key, body)));
      good.computeIfAbsent(key, k -> new ArrayList<>()).add(body);
    }
    assertOutcome(subs, good, bads);
  }

  /**
   * Outbox rows naming a topic or a partition that does not exist (as a script could write them)
   * are set aside into outbox_rejected, with the reason, and counted; the events published before,
   * between and after them, on two topics, are all delivered in order.
   */
  @Test
  void unplaceableOutboxRowsAreSetAsideAndSequencingGoesOn() throws Exception {
    open();
    TopicName a = topic(boxline, "acme/rows/a", 1);
    TopicName b = topic(boxline, "acme/rows/b", 3);
    subscribe(boxline, "plain", a, b);
    consume("plain", "plain");
    long topicA = boxline.admin().topic(a).orElseThrow().id();
    Map<String, List<String>> good = new LinkedHashMap<>();
    List<UUID> unplaceable = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      for (TopicName t : List.of(a, b)) {
        String key = "good-" + t.name() + "-" + (i % 3);
        String body = t.name() + "-" + i;
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, key, body)));
        good.computeIfAbsent(key, k -> new ArrayList<>()).add(body);
      }
      if (i % 4 == 0) {
        Bad row = new Bad(UUID.randomUUID(), "lost-" + i, null, "test.event");
        boolean noTopic = random.nextBoolean();
        insertIntoOutbox(
            noTopic ? topicA + 1_000_000 + i : topicA,
            noTopic ? null : 1 + random.nextInt(100),
            row);
        unplaceable.add(row.id());
      }
    }
    assertOutcome(List.of("plain"), good, List.of());
    Await.until(
        WAIT,
        "rows set aside",
        () -> boxline.stats().outboxRowsSetAside(),
        n -> n == unplaceable.size());
    List<UUID> rejected = new ArrayList<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT event_id, reason FROM " + db.table("outbox_rejected") + " ORDER BY id");
        java.sql.ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rejected.add(UUID.fromString(rs.getString(1)));
        assertThat(rs.getString(2)).isEqualTo("its topic or partition does not exist");
      }
    }
    assertThat(rejected).containsExactlyElementsOf(unplaceable);
  }

  /**
   * The payload of the typed events of {@link #undecodablePayloadsAreDeadLetteredByTypedHandlers}.
   */
  public record Order(String id, int amount) {}

  /**
   * Payloads a codec cannot decode (generated: truncated JSON, binary, wrong shapes, a content type
   * nobody registered) and types nobody registered, through {@code TypedHandlers}: each is
   * dead-lettered with the codec's or the registry's reason, and every decodable event arrives.
   */
  @Test
  void undecodablePayloadsAreDeadLetteredByTypedHandlers() {
    seed = System.nanoTime();
    random = new Random(seed);
    TopicName t = TopicName.of("acme/rows", "typed");
    io.boxline.EventTypes types =
        io.boxline.EventTypes.builder()
            .register(io.boxline.EventType.of(Order.class, "order.placed", t))
            .build();
    boxline = db.boxline(b -> b.eventTypes(types));
    topic(boxline, "acme/rows/typed", 2);
    subscribe(boxline, "typed", t);
    List<Order> handled = new CopyOnWriteArrayList<>();
    boxline
        .consumer("typed")
        .retryPolicy(POLICY)
        .handler(io.boxline.TypedHandlers.builder(types).on(Order.class, handled::add).build())
        .start();
    List<Order> good = new ArrayList<>();
    Map<UUID, String> bad = new LinkedHashMap<>();
    for (int i = 0; i < 60; i++) {
      if (i % 3 == 0) {
        Order o = new Order("o-" + i, i);
        good.add(o);
        boxline.inTransaction(tx -> boxline.publisher().publish(tx, o));
        continue;
      }
      String[] shapes = {
        "{\"id\": \"o-" + i,
        "[1, 2, 3]",
        "{\"id\": {\"nested\": true}, \"amount\": 1}",
        "{\"amount\": \"not a number\"}",
        "",
        new String(new char[] {(char) random.nextInt(32), 'x'}),
      };
      boolean unknownType = random.nextInt(4) == 0;
      byte[] payload =
          random.nextInt(5) == 0
              ? new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1}
              : shapes[random.nextInt(shapes.length)].getBytes(StandardCharsets.UTF_8);
      io.boxline.OutgoingEvent e =
          io.boxline.OutgoingEvent.builder(t)
              .type(unknownType ? "order.unknown" : "order.placed")
              .key("bad-" + i)
              .contentType(random.nextBoolean() ? "application/json" : "application/x-unheard-of")
              .payload(payload)
              .build();
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
      bad.put(e.id(), unknownType ? "no handler for event type" : "cannot decode");
    }
    Await.until(
        WAIT,
        "good handled and bad dead-lettered (seed " + seed + ")",
        () -> handled.size() + "/" + deadLetters("typed").size(),
        x -> handled.size() >= good.size() && deadLetters("typed").size() >= bad.size());
    assertThat(handled).containsExactlyInAnyOrderElementsOf(good);
    Map<UUID, DeadLetter> dead =
        deadLetters("typed").stream().collect(Collectors.toMap(d -> d.event().id(), d -> d));
    assertThat(dead.keySet()).isEqualTo(bad.keySet());
    bad.forEach(
        (id, reason) -> assertThat(dead.get(id).lastError()).as("seed " + seed).contains(reason));
  }
}
