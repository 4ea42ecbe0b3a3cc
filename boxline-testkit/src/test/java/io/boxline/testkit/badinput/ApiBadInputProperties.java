package io.boxline.testkit.badinput;

import static io.boxline.testkit.badinput.Inputs.refusedClearly;
import static io.boxline.testkit.badinput.Inputs.rows;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.Names;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TaskOptions;
import io.boxline.Tasks;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Bad input through the Java API on a real database: partition counts, every field of an event
 * (key, type, source, content type, headers, idempotency key, payload, delivery time), event
 * queries, subscription specs with start positions and rewinds, and task scheduling. Each input is
 * accepted and reads back exactly as given, or is refused with a {@code ValidationException} (a
 * {@code NotFoundException} for a name that does not exist) whose message names the problem, and
 * the tables it would have written hold the same number of rows as before.
 */
abstract class ApiBadInputProperties {
  static final int PARTITION_TRIES = 100;
  static final int EVENT_TRIES = 300;
  static final int QUERY_TRIES = 300;
  static final int SUBSCRIPTION_TRIES = 200;
  static final int TASK_TRIES = 150;

  private static final AtomicInteger UNIQUE = new AtomicInteger();

  TestDatabase db;
  Boxline boxline;
  TopicName events;
  TopicName other;

  /** The query topic's events by partition, read once from the log (the model queries filter). */
  private final Map<Integer, List<Event>> queryLog = new HashMap<>();

  private TopicName queried;

  abstract TestDatabase newDatabase(String hint);

  @BeforeProperty
  void open() {
    db = newDatabase("badapi");
    boxline = db.boxline(b -> b);
    boxline.admin().createNamespace(NamespacePath.of("prop/in"));
    events = TopicName.of("prop/in", "events");
    other = TopicName.of("prop/in", "other");
    // In-transaction sequencing: a committed event is in the log at once, no waiting.
    boxline.admin().createTopic(events, 4, Sequencing.IN_TRANSACTION);
    boxline.admin().createTopic(other, 2, Sequencing.IN_TRANSACTION);
  }

  @AfterProperty
  void close() {
    db.close();
  }

  private long rowsOf(String... tables) {
    String[] qualified = new String[tables.length];
    for (int i = 0; i < tables.length; i++) {
      qualified[i] = db.table(tables[i]);
    }
    return rows(db.dataSource(), qualified);
  }

  // ------------------------------------------------------------------ generators

  @Provide
  Arbitrary<String> text() {
    return Inputs.text();
  }

  @Provide
  Arbitrary<String> textOrNull() {
    return Inputs.textOrNull();
  }

  @Provide
  Arbitrary<Map<String, String>> headers() {
    return Inputs.headers();
  }

  @Provide
  Arbitrary<byte[]> payload() {
    return Inputs.payload();
  }

  @Provide
  Arbitrary<Instant> instantOrNull() {
    return Inputs.instant().injectNull(0.3);
  }

  @Provide
  Arbitrary<Integer> partitionCount() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(1, 64),
        Arbitraries.of(Integer.MIN_VALUE, -1, 0, 65_537, Integer.MAX_VALUE));
  }

  /** Earliest (null), latest (Instant.EPOCH) or a generated time: StartPosition.at refuses some. */
  @Provide
  Arbitrary<Instant> start() {
    return Arbitraries.oneOf(Arbitraries.of(Instant.EPOCH), Inputs.instant().injectNull(0.3));
  }

  private static StartPosition position(Instant t) {
    return t == null
        ? StartPosition.earliest()
        : t.equals(Instant.EPOCH) ? StartPosition.latest() : StartPosition.at(t);
  }

  // ------------------------------------------------------------------ topics and partitions

  @Property(tries = PARTITION_TRIES)
  void partitionCountsAreKeptOrRefused(@ForAll("partitionCount") int n, @ForAll Sequencing seq) {
    TopicName name = TopicName.of("prop/in", "p" + UNIQUE.incrementAndGet());
    long before = rowsOf("topic", "partition");
    TopicInfo info;
    try {
      info = boxline.admin().createTopic(name, n, seq);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(n < 1 || n > 65_536).as("refused only outside 1 to 65536").isTrue();
      assertThat(e.getMessage()).contains(Integer.toString(n)).contains("partitions");
      assertThat(rowsOf("topic", "partition")).as("nothing written").isEqualTo(before);
      assertThat(boxline.admin().topic(name)).isEmpty();
      return;
    }
    assertThat(n).as("accepted only within 1 to 65536").isBetween(1, 65_536);
    assertThat(info.partitions()).isEqualTo(n);
    TopicInfo back = boxline.admin().topic(name).orElseThrow();
    assertThat(back.partitions()).isEqualTo(n);
    assertThat(back.sequencing()).isEqualTo(seq);
    assertThat(boxline.admin().topicState(name).heads()).hasSize(n);
    assertThat(boxline.admin().deleteTopic(name, true)).isTrue();
  }

  /** The largest documented count, once: too slow to leave to chance among the tries. */
  @Example
  void theLargestPartitionCountIsKept() {
    TopicName name = TopicName.of("prop/in", "widest");
    assertThat(boxline.admin().createTopic(name, 65_536).partitions()).isEqualTo(65_536);
    assertThat(boxline.admin().topic(name).orElseThrow().partitions()).isEqualTo(65_536);
    assertThat(boxline.admin().deleteTopic(name, true)).isTrue();
  }

  // ------------------------------------------------------------------ publishing

  @Property(tries = EVENT_TRIES)
  void everyFieldOfAnEventComesBackOrTheEventIsRefused(
      @ForAll("textOrNull") String key,
      @ForAll("textOrNull") String type,
      @ForAll("textOrNull") String source,
      @ForAll("textOrNull") String contentType,
      @ForAll("headers") Map<String, String> headers,
      @ForAll("textOrNull") String idempotencyKey,
      @ForAll("payload") byte[] payload,
      @ForAll("instantOrNull") Instant deliverAt) {
    long before = rowsOf("log", "outbox", "idempotency");
    OutgoingEvent e;
    PublishResult r;
    try {
      e =
          OutgoingEvent.builder(events)
              .key(key)
              .type(type)
              .source(source)
              .contentType(contentType)
              .headers(headers)
              .idempotencyKey(idempotencyKey)
              .payload(payload)
              .deliverAt(deliverAt)
              .build();
      r = boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
    } catch (RuntimeException refused) {
      refusedClearly(refused);
      assertThat(rowsOf("log", "outbox", "idempotency")).as("nothing written").isEqualTo(before);
      return;
    }
    if (r.duplicate()) { // a generated idempotency key met again
      assertThat(rowsOf("log", "outbox", "idempotency")).isEqualTo(before);
      return;
    }
    Event back = readBack(events, r);
    assertThat(back.id()).isEqualTo(e.id());
    assertThat(back.key()).isEqualTo(key);
    assertThat(back.type()).isEqualTo(type);
    assertThat(back.source()).isEqualTo(source);
    assertThat(back.contentType())
        .isEqualTo(contentType == null ? "application/octet-stream" : contentType);
    assertThat(back.headers()).isEqualTo(headers);
    assertThat(back.payload()).isEqualTo(payload);
    // Delivery times are kept to the microsecond, as the databases store them.
    assertThat(e.deliverAt()).isEqualTo(micros(deliverAt));
    assertThat(back.deliverAt()).as("deliverAt").isEqualTo(e.deliverAt());
    if (idempotencyKey != null) {
      long stored = rowsOf("log", "outbox", "idempotency");
      OutgoingEvent again =
          OutgoingEvent.builder(events)
              .type("again")
              .idempotencyKey(idempotencyKey)
              .payload("other".getBytes(StandardCharsets.UTF_8))
              .build();
      PublishResult second = boxline.inTransaction(tx -> boxline.publisher().publish(tx, again));
      assertThat(second.duplicate()).isTrue();
      assertThat(second.eventId()).isEqualTo(r.eventId());
      assertThat(rowsOf("log", "outbox", "idempotency")).isEqualTo(stored);
    }
  }

  private static Instant micros(Instant t) {
    return t == null ? null : t.truncatedTo(ChronoUnit.MICROS);
  }

  private Event readBack(TopicName topic, PublishResult r) {
    List<Event> found =
        boxline.admin().events(EventQuery.of(topic, r.partition()).eventId(r.eventId()).limit(1));
    assertThat(found).as("event %s in the log", r.eventId()).hasSize(1);
    return found.get(0);
  }

  // ------------------------------------------------------------------ reading

  private static final String[] QUERY_KEYS = {
    "k1", "k2", "x'; DROP TABLE log; --", "ünïcödé ñ", "emoji \uD83D\uDE00", "%", "_", "k1 "
  };

  /** A topic of 3 partitions with 60 events over a few nasty keys; its log is the model. */
  private TopicName queried() {
    if (queried == null) {
      TopicName t = TopicName.of("prop/in", "queried");
      boxline.admin().createTopic(t, 3, Sequencing.IN_TRANSACTION);
      List<Object> batch = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        batch.add(
            OutgoingEvent.builder(t)
                .type("q")
                .key(i % 9 == 8 ? null : QUERY_KEYS[i % 9])
                .payload(new byte[] {(byte) i})
                .build());
      }
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
      for (int p = 0; p < 3; p++) {
        queryLog.put(p, boxline.admin().events(EventQuery.of(t, p).limit(10_000)));
      }
      assertThat(queryLog.values().stream().mapToInt(List::size).sum()).isEqualTo(60);
      queried = t;
    }
    return queried;
  }

  @Provide
  Arbitrary<Integer> partitionArg() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(0, 2),
        Arbitraries.of(Integer.MIN_VALUE, -1, 3, 4, Integer.MAX_VALUE));
  }

  @Provide
  Arbitrary<Long> afterArg() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(0, 30), Arbitraries.of(Long.MIN_VALUE, -1L, Long.MAX_VALUE));
  }

  @Provide
  Arbitrary<String> keyArg() {
    return Arbitraries.oneOf(Arbitraries.of(QUERY_KEYS), Inputs.textOrNull());
  }

  @Provide
  Arbitrary<Integer> limitArg() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(1, 30),
        Arbitraries.of(Integer.MIN_VALUE, -1, 0, 10_000, 10_001, Integer.MAX_VALUE));
  }

  @Provide
  Arbitrary<Integer> idChoice() {
    return Arbitraries.integers().between(-2, 59);
  }

  @Property(tries = QUERY_TRIES)
  void eventQueriesAnswerExactlyOrAreRefused(
      @ForAll("partitionArg") int partition,
      @ForAll("afterArg") long after,
      @ForAll("keyArg") String key,
      @ForAll("limitArg") int limit,
      @ForAll("idChoice") int idChoice,
      @ForAll boolean missingTopic) {
    TopicName topic = missingTopic ? TopicName.of("prop/in", "missing") : queried();
    List<Event> all = new ArrayList<>();
    queryLog.values().forEach(all::addAll);
    // -2: no id filter; -1: an id nobody has; 0..59: an event's id (perhaps on another partition)
    UUID id =
        idChoice == -2
            ? null
            : idChoice == -1 || all.isEmpty() ? UUID.randomUUID() : all.get(idChoice).id();
    List<Event> answer;
    try {
      answer = boxline.admin().events(new EventQuery(topic, partition, after, key, id, limit));
    } catch (RuntimeException e) {
      refusedClearly(e);
      boolean badKey = false;
      try {
        Names.requireStorable("event key", key, Names.MAX_KEY_LENGTH);
      } catch (ValidationException v) {
        badKey = true;
      }
      assertThat(
              missingTopic
                  || partition < 0
                  || partition > 2
                  || after < 0
                  || limit < 1
                  || limit > 10_000
                  || badKey)
          .as("refused only with a reason: %s", e.getMessage())
          .isTrue();
      return;
    }
    assertThat(missingTopic).as("a missing topic is refused").isFalse();
    assertThat(partition).isBetween(0, 2);
    List<UUID> expected =
        queryLog.get(partition).stream()
            .filter(ev -> ev.sequence() > after)
            .filter(ev -> key == null || key.equals(ev.key()))
            .filter(ev -> id == null || id.equals(ev.id()))
            .limit(limit)
            .map(Event::id)
            .toList();
    assertThat(answer.stream().map(Event::id).toList()).isEqualTo(expected);
  }

  /** A partition that does not exist names the partitions that do. */
  @Example
  void aMissingPartitionIsNamed() {
    TopicName t = queried();
    try {
      boxline.admin().events(EventQuery.of(t, 7));
      throw new AssertionError("partition 7 of 3 was read");
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(e.getMessage()).contains("7").contains("0 to 2");
    }
  }

  // ------------------------------------------------------------------ subscriptions

  @Provide
  Arbitrary<List<Integer>> topicChoice() {
    return Arbitraries.integers().between(0, 2).list().ofMaxSize(3);
  }

  @Property(tries = SUBSCRIPTION_TRIES)
  void subscriptionsStartWhereAskedOrAreRefused(
      @ForAll("text") String name,
      @ForAll("topicChoice") List<Integer> topicChoice,
      @ForAll("start") Instant start,
      @ForAll("start") Instant rewindTo) {
    TopicName[] candidates = {events, other, TopicName.of("prop/in", "missing")};
    TopicName[] topics = topicChoice.stream().map(i -> candidates[i]).toArray(TopicName[]::new);
    String[] tables = {"subscription", "subscription_topic", "cursor"};
    long before = rowsOf(tables);
    int subscriptions = boxline.admin().subscriptions().size();
    SubscriptionSpec spec;
    try {
      spec = SubscriptionSpec.of(name, topics).startAt(position(start));
      boxline.admin().createSubscription(spec);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(rowsOf(tables)).as("nothing written").isEqualTo(before);
      assertThat(boxline.admin().subscriptions()).hasSize(subscriptions);
      return;
    }
    try {
      SubscriptionInfo back = boxline.admin().subscription(name).orElseThrow();
      assertThat(back.name()).isEqualTo(name);
      assertThat(back.topics()).containsExactlyInAnyOrderElementsOf(spec.topics());
      assertThat(back.start()).as("start position").isEqualTo(spec.start());
      assertThat(spec.start().timestamp()).isEqualTo(position(start).timestamp());
      if (start != null && !start.equals(Instant.EPOCH)) {
        assertThat(spec.start().timestamp()).isEqualTo(micros(start));
      }
      var lag = boxline.admin().lag(name);
      try {
        boxline.admin().rewind(name, position(rewindTo));
      } catch (RuntimeException e) {
        refusedClearly(e);
        assertThat(boxline.admin().lag(name)).as("cursors unchanged").isEqualTo(lag);
      }
    } finally { // also after a failure: jqwik's shrinking tries the same names again
      assertThat(boxline.admin().deleteSubscription(name, true)).isTrue();
    }
    assertThat(rowsOf(tables)).isEqualTo(before);
  }

  // ------------------------------------------------------------------ tasks

  @Property(tries = TASK_TRIES)
  void tasksAreScheduledAsGivenOrRefused(
      @ForAll("textOrNull") String taskType,
      @ForAll("textOrNull") String payload,
      @ForAll("textOrNull") String idempotencyKey,
      @ForAll("textOrNull") String orderingKey,
      @ForAll("instantOrNull") Instant runAt) {
    boxline.tasks().blocked(); // creates the tasks topic first, so a refusal has nothing to add
    TopicName tasks = TopicName.parse(Tasks.TOPIC);
    long before = rowsOf("log", "outbox", "idempotency");
    PublishResult r;
    try {
      r =
          boxline.inTransaction(
              tx ->
                  boxline
                      .tasks()
                      .schedule(
                          tx,
                          taskType,
                          payload,
                          TaskOptions.options()
                              .idempotencyKey(idempotencyKey)
                              .orderingKey(orderingKey)
                              .runAt(runAt)));
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(rowsOf("log", "outbox", "idempotency")).as("nothing written").isEqualTo(before);
      return;
    }
    if (r.duplicate()) {
      assertThat(rowsOf("log", "outbox", "idempotency")).isEqualTo(before);
      return;
    }
    Event[] back = new Event[1];
    Await.until(
        Duration.ofSeconds(20),
        "task " + r.eventId() + " sequenced",
        () -> {
          Optional<Event> e =
              boxline
                  .admin()
                  .events(EventQuery.of(tasks, r.partition()).eventId(r.eventId()).limit(1))
                  .stream()
                  .findFirst();
          e.ifPresent(ev -> back[0] = ev);
          return e.isPresent();
        });
    assertThat(back[0].type()).isEqualTo(taskType);
    assertThat(back[0].key()).isEqualTo(orderingKey);
    assertThat(back[0].deliverAt()).as("runAt").isEqualTo(micros(runAt));
    assertThat(back[0].payloadAs(String.class)).as("payload").isEqualTo(payload);
  }
}
