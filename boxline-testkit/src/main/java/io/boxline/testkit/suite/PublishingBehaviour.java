package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.PublishOptions;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import io.boxline.TypedHandlers;
import io.boxline.testkit.Await;
import io.boxline.testkit.suite.SuiteSupport.Recorder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Publishing that every store must show: typed and raw events, their headers and fields round trip,
 * rolled-back transactions publish nothing, idempotency keys, per-call overrides, topic names, and
 * instances migrating the schema at once. A dialect's test class extends this and says how to get a
 * database.
 */
public abstract class PublishingBehaviour extends DatabaseSuite {

  public record OrderPlaced(String customer, int counter) {}

  public record OrderShipped(String customer) {}

  private Boxline boxline() {
    return db.boxline(EventTypes.empty());
  }

  @Test
  void typedEventsArriveInOrderPerKeyAndDecode() {
    TopicName orders = TopicName.of("acme/shop", "orders");
    EventTypes types =
        EventTypes.builder()
            .register(
                EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::customer))
            .register(
                EventType.of(OrderShipped.class, "order.shipped", orders)
                    .key(OrderShipped::customer))
            .build();
    Boxline boxline = db.boxline(types);
    topic(boxline, "acme/shop/orders", 4);
    subscribe(boxline, "billing", orders);
    List<OrderPlaced> placed = new CopyOnWriteArrayList<>();
    List<OrderShipped> shipped = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .handler(
            TypedHandlers.builder(types)
                .on(OrderPlaced.class, placed::add)
                .on(OrderShipped.class, shipped::add)
                .build())
        .start();
    for (int i = 0; i < 30; i++) {
      int n = i;
      boxline.inTransaction(
          tx -> {
            boxline.publisher().publish(tx, new OrderPlaced("c" + (n % 3), n));
            return boxline.publisher().publish(tx, new OrderShipped("c" + (n % 3)));
          });
    }
    Await.until(WAIT, "30 + 30 events", () -> placed.size() == 30 && shipped.size() == 30);
    Map<String, Integer> last = new HashMap<>();
    for (OrderPlaced o : placed) {
      Integer prev = last.put(o.customer(), o.counter());
      assertThat(prev == null || prev < o.counter())
          .as("per-key order for %s: %s after %s", o.customer(), o.counter(), prev)
          .isTrue();
    }
  }

  @Test
  void rolledBackTransactionPublishesNothing() throws Exception {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/rb", 1);
    subscribe(boxline, "s", t);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      boxline.publisher().publish(c, raw(t, "k", "rolled-back"));
      c.rollback();
      boxline.publisher().publish(c, raw(t, "k", "committed"));
      c.commit();
      boxline
          .publisher()
          .committed(); // after-commit hook: hands the event to the sequencer at once
    }
    Await.until(WAIT, "committed event delivered", () -> seen.size() >= 1);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all).extracting(SuiteSupport::body).containsExactly("committed");
    assertThat(seen.all.get(0).sequence()).isEqualTo(1);
  }

  @Test
  void manyEventsInOneTransactionAndHeadersAndRawFieldsRoundTrip() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/raw", 2);
    subscribe(boxline, "s", t);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    UUID id = UUID.randomUUID();
    List<Object> batch = new ArrayList<>();
    batch.add(
        OutgoingEvent.builder(t)
            .id(id)
            .type("raw.bytes")
            .key("k1")
            .source("urn:test")
            .contentType("application/octet-stream")
            .payload(new byte[] {0, 1, 2, (byte) 255})
            .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            .header("x-tenant", "acme")
            .build());
    for (int i = 0; i < 99; i++) {
      batch.add(raw(t, "k" + (i % 5), "n" + i));
    }
    List<PublishResult> results =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    assertThat(results).hasSize(100);
    assertThat(results.get(0).eventId()).isEqualTo(id);
    assertThat(results).noneMatch(PublishResult::duplicate);
    Await.until(WAIT, "100 events", () -> seen.size() >= 100);
    Event first = seen.all.stream().filter(e -> e.id().equals(id)).findFirst().orElseThrow();
    assertThat(first.type()).isEqualTo("raw.bytes");
    assertThat(first.key()).isEqualTo("k1");
    assertThat(first.source()).isEqualTo("urn:test");
    assertThat(first.contentType()).isEqualTo("application/octet-stream");
    assertThat(first.payload()).containsExactly(0, 1, 2, 255);
    assertThat(first.headers())
        .containsEntry("x-tenant", "acme")
        .containsEntry("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    assertThat(first.createdAt()).isBefore(Instant.now().plusSeconds(60));
    assertThat(first.partition()).isEqualTo(results.get(0).partition());
    assertThat(first.partition()).isEqualTo(Partitioner.kafkaCompatible().partition("k1", 2));
    // Within one transaction, events of one key keep publish order.
    Map<String, List<Integer>> perKey = new HashMap<>();
    for (Event e : seen.all) {
      if (e.type().equals("test.event")) {
        perKey
            .computeIfAbsent(e.key(), k -> new ArrayList<>())
            .add(Integer.parseInt(body(e).substring(1)));
      }
    }
    perKey.values().forEach(v -> assertThat(v).isSorted());
  }

  @Test
  void idempotencyKeyStoresOneEventAndTellsTheCaller() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/idem", 2);
    TopicName other = topic(boxline, "acme/idem2", 2);
    subscribe(boxline, "s", t, other);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    OutgoingEvent.Builder base =
        OutgoingEvent.builder(t).type("x").key("k").idempotencyKey("pay-42");
    PublishResult first =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, base.payload(new byte[] {1}).build()));
    PublishResult again =
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, base.payload(new byte[] {2}).build()));
    assertThat(first.duplicate()).isFalse();
    assertThat(again.duplicate()).isTrue();
    assertThat(again.eventId()).isEqualTo(first.eventId());
    // Twice in one batch: the first wins, the second is reported as its duplicate.
    List<PublishResult> inBatch =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publishAll(
                        tx,
                        List.of(
                            OutgoingEvent.builder(t).type("x").idempotencyKey("b-1").build(),
                            OutgoingEvent.builder(t).type("x").idempotencyKey("b-1").build(),
                            OutgoingEvent.builder(other).type("x").idempotencyKey("b-1").build())));
    assertThat(inBatch).extracting(PublishResult::duplicate).containsExactly(false, true, false);
    assertThat(inBatch.get(1).eventId()).isEqualTo(inBatch.get(0).eventId());
    // A rolled-back claim frees the key.
    try {
      boxline.inTransaction(
          tx -> {
            boxline
                .publisher()
                .publish(tx, OutgoingEvent.builder(t).type("x").idempotencyKey("rb").build());
            throw new IllegalStateException("roll back");
          });
    } catch (IllegalStateException expected) {
      // rolled back
    }
    PublishResult afterRollback =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(tx, OutgoingEvent.builder(t).type("x").idempotencyKey("rb").build()));
    assertThat(afterRollback.duplicate()).isFalse();
    // Typed publish with an idempotency key through PublishOptions.
    Await.until(WAIT, "4 distinct events", () -> seen.size() >= 4);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all).hasSize(4);
    assertThat(
            seen.all.stream()
                .filter(e -> e.id().equals(first.eventId()))
                .findFirst()
                .orElseThrow()
                .payload())
        .containsExactly(1);
  }

  /**
   * The retry recipe for a commit whose answer was lost: the same event (same id, same key) is
   * published again. Its key is owned already, so it is a duplicate and stored once; the same holds
   * for the same event twice in one batch.
   */
  @Test
  void theSameEventPublishedAgainWithItsIdempotencyKeyIsStoredOnce() {
    Boxline boxline = boxline();
    TopicName t = topic(boxline, "acme/idemretry", 2);
    subscribe(boxline, "s", t);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    OutgoingEvent event =
        OutgoingEvent.builder(t).type("x").key("k").idempotencyKey("order-7").build();
    PublishResult first = boxline.inTransaction(tx -> boxline.publisher().publish(tx, event));
    PublishResult retried = boxline.inTransaction(tx -> boxline.publisher().publish(tx, event));
    assertThat(first.duplicate()).isFalse();
    assertThat(retried.duplicate()).as("the key is owned by the first publish").isTrue();
    assertThat(retried.eventId()).isEqualTo(first.eventId());
    OutgoingEvent twice = OutgoingEvent.builder(t).type("x").idempotencyKey("twice").build();
    List<PublishResult> batch =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, List.of(twice, twice)));
    assertThat(batch).extracting(PublishResult::duplicate).containsExactly(false, true);
    Await.until(WAIT, "2 events", () -> seen.size() >= 2);
    SuiteSupport.awaitCaughtUp(boxline, "s");
    assertThat(seen.all)
        .extracting(Event::id)
        .containsExactlyInAnyOrder(first.eventId(), twice.id());
  }

  @Test
  void typedPublishHonoursPerCallOverrides() {
    TopicName orders = TopicName.of("acme/ov", "orders");
    TopicName audit = TopicName.of("acme/ov", "audit");
    EventTypes types =
        EventTypes.builder()
            .register(
                EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::customer))
            .build();
    Boxline boxline = db.boxline(types);
    topic(boxline, "acme/ov/orders", 1);
    topic(boxline, "acme/ov/audit", 3);
    subscribe(boxline, "s", orders, audit);
    Recorder seen = new Recorder();
    boxline.consumer("s").handler(seen::record).start();
    PublishResult r =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(
                        tx,
                        new OrderPlaced("c1", 1),
                        PublishOptions.options()
                            .topic(audit)
                            .type("order.audited")
                            .key("other-key")
                            .header("h", "v")
                            .idempotencyKey("once")));
    PublishResult dup =
        boxline.inTransaction(
            tx ->
                boxline
                    .publisher()
                    .publish(
                        tx,
                        new OrderPlaced("c1", 1),
                        PublishOptions.options().topic(audit).idempotencyKey("once")));
    assertThat(dup.duplicate()).isTrue();
    assertThat(r.topic()).isEqualTo(audit);
    Await.until(WAIT, "1 event", () -> seen.size() >= 1);
    Event e = seen.all.get(0);
    assertThat(e.topic()).isEqualTo(audit);
    assertThat(e.type()).isEqualTo("order.audited");
    assertThat(e.key()).isEqualTo("other-key");
    assertThat(e.headers()).containsEntry("h", "v");
    assertThat(e.contentType()).isEqualTo("application/json");
    assertThat(e.payloadAs(OrderPlaced.class)).isEqualTo(new OrderPlaced("c1", 1));
  }

  @Test
  void twoInstancesStartingAtOnceMigrateOnce() throws Exception {
    int n = 4;
    CountDownLatch go = new CountDownLatch(1);
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Thread th =
          new Thread(
              () -> {
                try {
                  go.await();
                  db.boxline(b -> b);
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(th);
      th.start();
    }
    go.countDown();
    for (Thread th : threads) {
      th.join(60_000);
    }
    assertThat(failures).isEmpty();
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*), max(version) FROM " + db.schema() + ".schema_version")) {
      rs.next();
      assertThat(rs.getInt(1)).isEqualTo(rs.getInt(2));
      assertThat(rs.getInt(1)).isGreaterThanOrEqualTo(1);
    }
  }

  @Test
  void topicNamesAreCaseSensitive() {
    Boxline boxline = boxline();
    TopicName lower = topic(boxline, "acme/case/orders", 1);
    TopicName upper = topic(boxline, "acme/case/Orders", 2);
    assertThat(boxline.admin().topic(lower).orElseThrow().partitions()).isEqualTo(1);
    assertThat(boxline.admin().topic(upper).orElseThrow().partitions()).isEqualTo(2);
    assertThat(boxline.admin().topics()).hasSize(2);
  }

  /** Reads every (partition, seq) of a topic straight from the log table, for white-box checks. */
  protected Map<Integer, List<Long>> logSequences(String topicName) throws Exception {
    Map<Integer, List<Long>> out = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT l.partition, l.seq FROM "
                    + db.schema()
                    + ".log l JOIN "
                    + db.schema()
                    + ".topic t ON t.id = l.topic_id WHERE t.name = ? ORDER BY 1, 2")) {
      ps.setString(1, topicName);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.computeIfAbsent(rs.getInt(1), k -> new ArrayList<>()).add(rs.getLong(2));
        }
      }
    }
    return out;
  }

  protected static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
