package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.GroupPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadCodec;
import io.boxline.RetryPolicy;
import io.boxline.StartPosition;
import io.boxline.TopicName;
import io.boxline.TypedHandlers;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Proofs of what the API documents and nothing else tested: per-type retry policies, {@link
 * EventType#codec}, {@link TypedHandlers.Builder#otherwise}, a custom partitioner, the injected
 * clock, {@code migrate(false)}, {@link ConsumerHooks#onWorkerError} and the inbox by event id.
 */
public abstract class ClaimsBehaviour extends DatabaseSuite {
  /** Fails at once, parks nothing in place: one attempt, then dead. */
  private static final RetryPolicy ONE_ATTEMPT =
      RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(10))
          .inPlaceAttempts(1)
          .maxAttempts(1)
          .jitter(0);

  public record Order(String id, int amount) {}

  public record Refund(String id) {}

  /** {@code ConsumerBuilder.retryPolicy(eventType, policy)} overrides the consumer's policy. */
  @Test
  void aPerTypeRetryPolicyOverridesTheConsumersPolicyForThatTypeOnly() {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = topic(boxline, "acme/claims/retry", 1);
    subscribe(boxline, "s", t);
    Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    boxline
        .consumer("s")
        .retryPolicy(ONE_ATTEMPT)
        .retryPolicy(
            "patient",
            RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                .inPlaceAttempts(2)
                .maxAttempts(4)
                .jitter(0))
        .handler(
            e -> {
              attempts.computeIfAbsent(e.type(), k -> new AtomicInteger()).incrementAndGet();
              throw new IllegalStateException("always fails (expected by the test)");
            })
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .publisher()
                .publishAll(
                    tx, List.of(typed(t, "a", "impatient", "x"), typed(t, "b", "patient", "y"))));
    Await.until(
        WAIT,
        "both dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")),
        l -> l.size() == 2);
    Map<String, Integer> deadAttempts = new java.util.HashMap<>();
    for (DeadLetter d : boxline.deadLetters().list(DeadLetterQuery.of("s"))) {
      deadAttempts.put(d.event().type(), d.attempts());
    }
    assertThat(deadAttempts).containsEntry("impatient", 1).containsEntry("patient", 4);
    assertThat(attempts.get("impatient")).hasValue(1);
    assertThat(attempts.get("patient")).hasValue(4);
  }

  private static OutgoingEvent typed(TopicName t, String key, String type, String body) {
    return OutgoingEvent.builder(t)
        .type(type)
        .key(key)
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** A non-JSON codec: {@code id|amount} as text. */
  static final PayloadCodec PIPE =
      new PayloadCodec() {
        @Override
        public String contentType() {
          return "text/x-pipe";
        }

        @Override
        public byte[] encode(Object value) {
          Order o = (Order) value;
          return (o.id() + "|" + o.amount()).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public <T> T decode(byte[] payload, Class<T> type) {
          String[] parts = new String(payload, StandardCharsets.UTF_8).split("\\|");
          return type.cast(new Order(parts[0], Integer.parseInt(parts[1])));
        }
      };

  /**
   * {@code EventType.codec}: a typed publish is written with the registered codec (its bytes and
   * content type are in the log) and {@link TypedHandlers} decodes it with the same codec; {@code
   * otherwise} gets the events of every type without a typed handler, and none is dead-lettered.
   */
  @Test
  void aTypesCodecWritesAndReadsItsEventsAndOtherwiseTakesTheUnknownTypes() {
    TopicName t = TopicName.parse("acme/claims/codec");
    EventTypes types =
        EventTypes.builder()
            .register(EventType.of(Order.class, "order.placed", t).key(Order::id).codec(PIPE))
            .register(EventType.of(Refund.class, "refund.made", t).key(Refund::id))
            .build();
    Boxline boxline = db.boxline(types);
    topic(boxline, t.toString(), 2);
    subscribe(boxline, "s", t);
    List<Order> orders = new CopyOnWriteArrayList<>();
    List<Event> others = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(ONE_ATTEMPT)
        .handler(
            TypedHandlers.builder(types)
                .on(Order.class, orders::add)
                .otherwise(others::add)
                .build())
        .start();
    boxline.inTransaction(
        tx -> {
          boxline.publisher().publish(tx, new Order("o-1", 42));
          boxline.publisher().publish(tx, new Refund("r-1"));
          boxline.publisher().publish(tx, raw(t, "z", "unregistered"));
          return boxline.publisher().publish(tx, new Order("o-2", 7));
        });
    Await.until(WAIT, "4 handled", () -> orders.size() + others.size() == 4);
    assertThat(orders).containsExactlyInAnyOrder(new Order("o-1", 42), new Order("o-2", 7));
    assertThat(others)
        .extracting(Event::type)
        .containsExactlyInAnyOrder("refund.made", "test.event");
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s"))).isEmpty();

    Event stored =
        java.util.stream.IntStream.range(0, 2)
            .boxed()
            .flatMap(p -> boxline.admin().events(EventQuery.of(t, p)).stream())
            .filter(e -> "o-1".equals(e.key()))
            .findFirst()
            .orElseThrow();
    assertThat(stored.contentType()).isEqualTo("text/x-pipe");
    assertThat(body(stored)).isEqualTo("o-1|42");
    assertThat(stored.payloadAs(types)).isEqualTo(new Order("o-1", 42));
  }

  /** Without {@code otherwise}, an event of an unknown type is dead-lettered, never dropped. */
  @Test
  void withoutOtherwiseAnUnknownTypeIsDeadLettered() {
    TopicName t = TopicName.parse("acme/claims/unknown");
    EventTypes types =
        EventTypes.builder().register(EventType.of(Order.class, "order.placed", t)).build();
    Boxline boxline = db.boxline(types);
    topic(boxline, t.toString(), 1);
    subscribe(boxline, "s", t);
    List<Order> orders = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .handler(TypedHandlers.builder(types).on(Order.class, orders::add).build())
        .start();
    boxline.inTransaction(
        tx -> {
          boxline.publisher().publish(tx, raw(t, "z", "unregistered"));
          return boxline.publisher().publish(tx, new Order("o-1", 1));
        });
    Await.until(
        WAIT,
        "the unknown type dead-lettered",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")),
        l -> l.size() == 1);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("s")))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.event().type()).isEqualTo("test.event");
              assertThat(d.lastError()).contains("no handler for event type 'test.event'");
            });
    Await.until(WAIT, "the order handled", () -> orders.size() == 1);
  }

  /**
   * {@code Boxline.Builder.partitioner}: keyed events land on the partition the custom partitioner
   * names, for typed and raw publishes alike, and each key keeps its order.
   */
  @Test
  void aCustomPartitionerDecidesWhereKeyedEventsLand() {
    Boxline boxline =
        db.boxline(b -> b.partitioner((key, n) -> Integer.parseInt(key.substring(4)) % n));
    TopicName t = topic(boxline, "acme/claims/partitioned", 5);
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "s", t);
    for (int i = 0; i < 30; i++) {
      int n = i;
      boxline.inTransaction(
          tx -> boxline.publisher().publish(tx, raw(t, "key-" + (n % 10), "e-" + n)));
    }
    Await.until(WAIT, "30 handled", () -> seen.size() == 30);
    for (Event e : seen.all) {
      assertThat(e.partition())
          .as("%s", e.key())
          .isEqualTo(Integer.parseInt(e.key().substring(4)) % 5)
          // The default partitioner would put some of these keys elsewhere.
          .isNotNull();
    }
    long elsewhereByDefault =
        seen.all.stream()
            .filter(
                e ->
                    io.boxline.Partitioner.kafkaCompatible().partition(e.key(), 5) != e.partition())
            .count();
    assertThat(elsewhereByDefault)
        .as("the custom partitioner was used, not the default")
        .isPositive();
    Map<String, List<Integer>> byKey = new ConcurrentHashMap<>();
    for (Event e : seen.all) {
      byKey
          .computeIfAbsent(e.key(), k -> new ArrayList<>())
          .add(Integer.parseInt(body(e).substring(2)));
    }
    byKey.values().forEach(l -> assertThat(l).isSorted().hasSize(3));
  }

  /** A clock the test moves by hand. */
  static final class HandClock extends Clock {
    final AtomicReference<Instant> now;

    HandClock(Instant start) {
      now = new AtomicReference<>(start);
    }

    void advance(Duration d) {
      now.updateAndGet(i -> i.plus(d));
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now.get();
    }
  }

  /**
   * {@code Boxline.Builder.clock}: a failed attempt's next attempt is set an hour (the backoff)
   * after the injected clock's time, and the retry is made once that clock, not the wall clock,
   * reaches it. The failure and dead-letter times are the database's.
   */
  @Test
  void theInjectedClockDecidesWhenAParkedRetryIsDue() {
    Instant start = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    HandClock clock = new HandClock(start);
    Boxline boxline = db.boxline(b -> b.clock(clock));
    TopicName t = topic(boxline, "acme/claims/clock", 1);
    subscribe(boxline, "s", t);
    AtomicInteger calls = new AtomicInteger();
    List<Integer> handledOn = new CopyOnWriteArrayList<>();
    boxline
        .consumer("s")
        .retryPolicy(
            RetryPolicy.exponential(Duration.ofHours(1), Duration.ofHours(1))
                .inPlaceAttempts(1)
                .maxAttempts(3)
                .jitter(0))
        .handler(
            e -> {
              int call = calls.incrementAndGet();
              if (call == 1 || body(e).equals("always-fails")) {
                throw new IllegalStateException("fails (expected by the test)");
              }
              handledOn.add(call);
            })
        .start();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "once")));
    Await.until(WAIT, "parked for a retry", () -> nextAttemptAt("once") != null);
    assertThat(nextAttemptAt("once")).isEqualTo(start.plus(Duration.ofHours(1)));
    assertThat(calls).hasValue(1);

    clock.advance(Duration.ofMinutes(61));
    Await.until(
        WAIT,
        "retried once the injected clock reached the next attempt",
        () -> handledOn.size() == 1);
    assertThat(handledOn).containsExactly(2);
    Await.until(WAIT, "the parked row removed", () -> nextAttemptAt("once") == null);

    // A dead letter's times come from the database, not from the (now an hour ahead) clock.
    Instant dbBefore = db.databaseNow();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "j", "always-fails")));
    Await.until(WAIT, "parked", () -> nextAttemptAt("always-fails") != null);
    assertThat(nextAttemptAt("always-fails")).isEqualTo(clock.instant().plus(Duration.ofHours(1)));
    clock.advance(Duration.ofMinutes(61));
    Await.until(
        WAIT,
        "parked again",
        () -> clock.instant().plus(Duration.ofHours(1)).equals(nextAttemptAt("always-fails")));
    clock.advance(Duration.ofMinutes(61));
    Await.until(
        WAIT,
        "dead-lettered after 3 attempts",
        () -> boxline.deadLetters().list(DeadLetterQuery.of("s")),
        l -> l.size() == 1);
    DeadLetter dead = boxline.deadLetters().list(DeadLetterQuery.of("s")).get(0);
    assertThat(dead.attempts()).isEqualTo(3);
    assertThat(Duration.between(dbBefore, dead.deadAt()).abs())
        .as("stamped by the database, not the clock 3 hours ahead")
        .isLessThan(Duration.ofMinutes(10));
  }

  /** The stored next attempt of the event with this body parked for a retry, or null. */
  private Instant nextAttemptAt(String body) {
    String sql =
        "SELECT k.next_attempt_at, l.payload FROM "
            + db.table("parked")
            + " k JOIN "
            + db.table("log")
            + " l ON l.topic_id = k.topic_id AND l."
            + partitionColumn()
            + " = k."
            + partitionColumn()
            + " AND l.seq = k.seq WHERE k.state = 'RETRY'";
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        if (new String(rs.getBytes(2), StandardCharsets.UTF_8).equals(body)) {
          return instant(rs, 1);
        }
      }
      return null;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private String partitionColumn() {
    return switch (db.dialect()) {
      case MARIADB -> "`partition`";
      case H2, H2_FILE -> "\"PARTITION\"";
      default -> "partition";
    };
  }

  private Instant instant(ResultSet rs, int column) throws SQLException {
    if (db.dialect() == TestDatabase.Dialect.POSTGRESQL) {
      return rs.getTimestamp(column).toInstant();
    }
    long micros = rs.getLong(column); // MariaDB and H2 keep epoch microseconds
    return Instant.ofEpochSecond(micros / 1_000_000, (micros % 1_000_000) * 1_000);
  }

  /**
   * {@code migrate(false)}: start() creates nothing, the first call that needs the schema fails
   * naming the missing table, and once the schema is migrated the same instance works.
   */
  @Test
  void withoutMigrateTheSchemaIsLeftAloneAndUsedOnceInPlace() {
    JdbcStore.Builder store = JdbcStore.builder(db.dataSource()).schema(db.schema());
    try (Boxline unmigrated =
        Boxline.builder().store(store.build()).migrate(false).sequencer(false).build().start()) {
      assertThat(tableExists("topic")).as("start() created no table").isFalse();
      assertThatThrownBy(
              () -> unmigrated.admin().createNamespace(io.boxline.NamespacePath.of("acme")))
          .hasStackTraceContaining("namespace");

      Boxline migrating = db.boxline(b -> b);
      assertThat(tableExists("topic")).as("the default migrates").isTrue();
      TopicName t = topic(unmigrated, "acme/claims/migrated", 1);
      SuiteSupport.Recorder seen = SuiteSupport.record(unmigrated, "s", t);
      unmigrated.inTransaction(tx -> unmigrated.publisher().publish(tx, raw(t, "k", "hello")));
      Await.until(WAIT, "handled (sequenced by the migrating instance)", () -> seen.size() == 1);
      assertThat(body(seen.all.get(0))).isEqualTo("hello");
      assertThat(migrating.admin().topic(t)).isPresent();
    }
  }

  private boolean tableExists(String table) {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.executeQuery("SELECT count(*) FROM " + db.table(table)).close();
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * {@code ConsumerHooks.onWorkerError}: a consumer that fails outside the handler (here: the
   * parked events' table is gone), first while checking in with its group, then in the retry pass
   * of a partition it holds, reports each failure to the hook and retries on its own; once the
   * table is back it delivers.
   */
  @Test
  void aWorkerFailingOutsideTheHandlerCallsOnWorkerErrorAndRecovers() throws Exception {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = topic(boxline, "acme/claims/worker", 1);
    subscribe(boxline, "s", t);
    // Only a full check-in (the first, then every 10th) reads the parked events: check-ins every
    // 100 ms bring the second failing one about a second after the first instead of 18 s later
    // under the default policy. The deadline (20 missed check-ins) leaves a busy machine room.
    boxline
        .admin()
        .setGroupPolicy(
            "s",
            GroupPolicy.DEFAULT
                .withMinCheckInInterval(Duration.ofMillis(100))
                .withDeadlineMultiplier(20));
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    List<String> handled = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean flakyFailed =
        new java.util.concurrent.atomic.AtomicBoolean();
    execute(renameParked("parked", "parked_hidden"));
    Consumer c =
        boxline
            .consumer("s")
            .hooks(
                new ConsumerHooks() {
                  @Override
                  public void onWorkerError(Throwable error) {
                    errors.add(error);
                  }
                })
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofSeconds(2), Duration.ofSeconds(2))
                    .inPlaceAttempts(1)
                    .jitter(0))
            .handler(
                e -> {
                  if (body(e).equals("flaky") && flakyFailed.compareAndSet(false, true)) {
                    throw new IllegalStateException("first attempt fails (expected by the test)");
                  }
                  handled.add(body(e));
                })
            .start();
    Await.until(WAIT, "two worker errors reported", () -> errors.size() >= 2);
    assertThat(handled).isEmpty();
    assertThat(errors.get(0)).hasStackTraceContaining("parked");

    execute(renameParked("parked_hidden", "parked"));
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "after")));
    Await.until(WAIT, "delivered once the table is back", () -> handled.size() == 1);
    int reported = errors.size();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "k", "later")));
    Await.until(WAIT, "the next one too", () -> handled.size() == 2);
    assertThat(errors).as("no worker error once healthy").hasSize(reported);

    // A worker of a held partition: its retry pass cannot read the parked events.
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, "j", "flaky")));
    Await.until(WAIT, "flaky parked for a retry", () -> nextAttemptAt("flaky") != null);
    execute(renameParked("parked", "parked_hidden"));
    Await.until(
        WAIT,
        "the retry pass's failure reported",
        () -> errors.stream().anyMatch(e -> String.valueOf(e.getMessage()).contains("due_parked")));
    execute(renameParked("parked_hidden", "parked"));
    Await.until(WAIT, "flaky handled on its retry", () -> handled.contains("flaky"));
    c.close();
  }

  private String renameParked(String from, String to) {
    return switch (db.dialect()) {
      case MARIADB -> "RENAME TABLE " + db.table(from) + " TO " + db.table(to);
      default -> "ALTER TABLE " + db.table(from) + " RENAME TO " + to;
    };
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /**
   * {@code ConsumerBuilder.inbox()}: an event whose id the subscription handled before is skipped,
   * even when the cursor is rewound over it; a subscription without the inbox gets it again, and
   * another subscription's inbox is its own.
   */
  @Test
  void theInboxSkipsEventsWhoseIdTheSubscriptionHandledBefore() {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = topic(boxline, "acme/claims/inbox", 2);
    subscribe(boxline, "deduped", t);
    subscribe(boxline, "plain", t);
    List<java.util.UUID> deduped = new CopyOnWriteArrayList<>();
    List<java.util.UUID> plain = new CopyOnWriteArrayList<>();
    Consumer a = boxline.consumer("deduped").inbox().handler(e -> deduped.add(e.id())).start();
    Consumer b = boxline.consumer("plain").handler(e -> plain.add(e.id())).start();
    SuiteSupport.publish(boxline, t, "k", 6);
    Await.until(WAIT, "6 each", () -> deduped.size() == 6 && plain.size() == 6);
    assertThat(boxline.admin().inboxSize("deduped")).isEqualTo(6);
    assertThat(boxline.admin().inboxSize("plain")).isZero();
    a.close();
    b.close();

    boxline.admin().rewind("deduped", StartPosition.earliest());
    boxline.admin().rewind("plain", StartPosition.earliest());
    boxline.consumer("deduped").inbox().handler(e -> deduped.add(e.id())).start();
    boxline.consumer("plain").handler(e -> plain.add(e.id())).start();
    Await.until(WAIT, "the plain subscription got all 6 again", () -> plain.size() == 12);
    SuiteSupport.awaitCaughtUp(boxline, "deduped");
    assertThat(deduped)
        .as("skipped by event id after the rewind")
        .hasSize(6)
        .doesNotHaveDuplicates();
    assertThat(plain.subList(6, 12)).containsExactlyInAnyOrderElementsOf(plain.subList(0, 6));

    subscribe(boxline, "fresh", t);
    boxline.admin().rewind("fresh", StartPosition.earliest());
    List<java.util.UUID> fresh = new CopyOnWriteArrayList<>();
    boxline.consumer("fresh").inbox().handler(e -> fresh.add(e.id())).start();
    Await.until(WAIT, "another subscription's inbox is its own", () -> fresh.size() == 6);
    assertThat(fresh).containsExactlyInAnyOrderElementsOf(deduped);
  }
}
