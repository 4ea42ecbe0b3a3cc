package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.ConnectionStateException;
import io.boxline.EventTypes;
import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.PayloadTooLargeException;
import io.boxline.PublishResult;
import io.boxline.Sequencing;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.StoredEvent;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The publisher over the in-memory store, without a sequencer: what it writes, and what not. */
class DefaultPublisherTest {
  private static final TopicName ORDERS = TopicName.of("acme/pub", "orders");
  private static final TopicName DIRECT = TopicName.of("acme/pub", "direct");
  private static final int MAX_PAYLOAD = 64;

  private final MutableClock clock = new MutableClock(Instant.parse("2024-05-01T10:00:00Z"));
  private InMemoryStore store;
  private DefaultPublisher publisher;
  private Announcer announcer;
  private TopicInfo orders;

  @BeforeEach
  void setUp() {
    store = InMemoryStore.create(clock);
    store.createNamespace(NamespacePath.of("acme/pub"));
    orders = store.createTopic(ORDERS, 3);
    store.createTopic(DIRECT, 1, Sequencing.IN_TRANSACTION);
    WakeupBus bus = new WakeupBus();
    RecentEvents recent = new RecentEvents();
    announcer = new Announcer(store, bus, recent, "test", Duration.ofMillis(2));
    publisher =
        new DefaultPublisher(
            store,
            new TopicCache(store),
            EventTypes.empty(),
            Partitioner.kafkaCompatible(),
            MAX_PAYLOAD,
            null,
            0,
            Observers.of(List.of()),
            List.of(),
            announcer);
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private static OutgoingEvent event(TopicName topic, String key, String body) {
    return OutgoingEvent.builder(topic)
        .type("order.placed")
        .key(key)
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static OutgoingEvent keyed(String idempotencyKey, String body) {
    return OutgoingEvent.builder(ORDERS)
        .type("order.placed")
        .key("k")
        .contentType("text/plain")
        .payload(body.getBytes(StandardCharsets.UTF_8))
        .idempotencyKey(idempotencyKey)
        .build();
  }

  private <T> T committed(Function<Connection, T> work) throws SQLException {
    try (Connection tx = store.openTransaction()) {
      T result = work.apply(tx);
      tx.commit();
      return result;
    }
  }

  /** Sequences everything in the outbox and returns the log of every partition, in order. */
  private List<StoredEvent> sequencedLog() {
    assertThat(store.acquireSequencerLease("test", Duration.ofSeconds(5)).held()).isTrue();
    store.sequence("test", Duration.ofSeconds(5), 1000, (t, k) -> 0);
    List<StoredEvent> all = new ArrayList<>();
    for (int p = 0; p < orders.partitions(); p++) {
      all.addAll(store.read(orders.id(), p, 0, 1000));
    }
    return all;
  }

  private static String body(StoredEvent e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  @Test
  void anIdempotencyKeyUsedBeforeReportsADuplicateNamingTheFirstEvent() throws SQLException {
    PublishResult first = committed(tx -> publisher.publish(tx, keyed("order-1", "a")));
    PublishResult again = committed(tx -> publisher.publish(tx, keyed("order-1", "b")));
    List<PublishResult> inOneCall =
        committed(
            tx -> publisher.publishAll(tx, List.of(keyed("order-2", "c"), keyed("order-2", "d"))));

    assertThat(first.duplicate()).isFalse();
    assertThat(again.duplicate()).isTrue();
    assertThat(again.eventId()).isEqualTo(first.eventId());
    assertThat(inOneCall.get(0).duplicate()).isFalse();
    assertThat(inOneCall.get(1).duplicate()).isTrue();
    assertThat(inOneCall.get(1).eventId()).isEqualTo(inOneCall.get(0).eventId());
    assertThat(sequencedLog()).extracting(DefaultPublisherTest::body).containsExactly("a", "c");
  }

  @Test
  void aKeyClaimedInARolledBackTransactionIsFreeAgain() throws SQLException {
    try (Connection tx = store.openTransaction()) {
      assertThat(publisher.publish(tx, keyed("order-1", "lost")).duplicate()).isFalse();
      tx.rollback();
    }
    PublishResult kept = committed(tx -> publisher.publish(tx, keyed("order-1", "kept")));
    assertThat(kept.duplicate()).isFalse();
    assertThat(sequencedLog()).extracting(DefaultPublisherTest::body).containsExactly("kept");
  }

  @Test
  void aBatchWithAnInvalidEventWritesNothing() throws SQLException {
    String tooLarge = "x".repeat(MAX_PAYLOAD + 1);
    TopicName missing = TopicName.of("acme/pub", "missing");
    try (Connection tx = store.openTransaction()) {
      assertThatThrownBy(
              () ->
                  publisher.publishAll(
                      tx, List.of(event(ORDERS, "k", "fine"), event(ORDERS, "k", tooLarge))))
          .isInstanceOf(PayloadTooLargeException.class);
      assertThatThrownBy(
              () ->
                  publisher.publishAll(
                      tx, List.of(event(ORDERS, "k", "fine"), event(missing, "k", "x"))))
          .isInstanceOf(NotFoundException.class)
          .hasMessageContaining("acme/pub/missing");
      tx.commit(); // even a commit of the same transaction finds nothing written
    }
    assertThat(store.outboxBacklog().events()).isZero();
    assertThat(sequencedLog()).isEmpty();
  }

  @Test
  void aClosedConnectionIsRefusedBeforeAnythingIsWritten() throws SQLException {
    Connection tx = store.openTransaction();
    tx.close();
    assertThatThrownBy(() -> publisher.publish(tx, event(ORDERS, "k", "a")))
        .isInstanceOf(ConnectionStateException.class)
        .hasMessageContaining("closed");
    assertThat(store.outboxBacklog().events()).isZero();
  }

  @Test
  void publishAllKeepsTheOrderOfTheListAndPartitionsByKey() throws SQLException {
    List<OutgoingEvent> events = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      events.add(event(ORDERS, i % 2 == 0 ? "even" : "odd", Integer.toString(i)));
    }
    List<PublishResult> results = committed(tx -> publisher.publishAll(tx, events));

    assertThat(results)
        .extracting(PublishResult::eventId)
        .containsExactlyElementsOf(events.stream().map(OutgoingEvent::id).toList());
    int even = Partitioner.kafkaCompatible().partition("even", 3);
    assertThat(results.get(0).partition()).isEqualTo(even);
    List<String> evens =
        store.read(orders.id(), even, 0, 100).stream().map(DefaultPublisherTest::body).toList();
    assertThat(evens).isEmpty(); // not sequenced yet: only in the outbox
    List<StoredEvent> log = sequencedLog();
    assertThat(log.stream().filter(e -> e.key().equals("even")).map(DefaultPublisherTest::body))
        .containsExactly("0", "2", "4", "6", "8", "10");
    assertThat(log.stream().filter(e -> e.key().equals("odd")).map(DefaultPublisherTest::body))
        .containsExactly("1", "3", "5", "7", "9", "11");
  }

  @Test
  void inTransactionTopicsAreNumberedByTheProducerAndVisibleAtItsCommit() throws SQLException {
    TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
    PartitionKey p0 = PartitionKey.of(direct.id(), 0);
    try (Connection tx = store.openTransaction()) {
      publisher.publishAll(tx, List.of(event(DIRECT, "k", "1"), event(DIRECT, "k", "2")));
      assertThat(store.heads(List.of(p0)).get(0).lastSequence())
          .as("uncommitted: the head stays")
          .isZero();
      assertThat(store.read(direct.id(), 0, 0, 10)).isEmpty();
      tx.commit();
    }
    assertThat(store.heads(List.of(p0)).get(0).lastSequence()).isEqualTo(2);
    assertThat(store.read(direct.id(), 0, 0, 10))
        .extracting(StoredEvent::sequence, DefaultPublisherTest::body)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(1L, "1"),
            org.assertj.core.groups.Tuple.tuple(2L, "2"));
    assertThat(store.outboxBacklog().events()).as("no outbox for such topics").isZero();
  }

  @Test
  void aJoinedTransactionHoldsInTransactionTopicsBackToItsCommitAndForgetsWhatASavepointUndid()
      throws SQLException {
    TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
    PartitionKey p0 = PartitionKey.of(direct.id(), 0);
    try (Connection tx = store.openTransaction()) {
      TransactionScope scope = TransactionScope.join(tx);
      JoinedScope joined = new JoinedScope(scope, publisher);
      publisher.publish(tx, event(DIRECT, "k", "1"));
      Object savepoint = new Object();
      joined.savepoint(savepoint);
      publisher.publish(tx, event(DIRECT, "k", "undone"));
      joined.rolledBackTo(savepoint);
      publisher.publish(tx, event(DIRECT, "k", "2"));
      assertThat(store.read(direct.id(), 0, 0, 10)).as("held back until the commit").isEmpty();
      joined.beforeCommit();
      tx.commit();
      joined.afterCommit();
      joined.completed();
      joined.completed(); // idempotent
    }
    assertThat(store.heads(List.of(p0)).get(0).lastSequence()).isEqualTo(2);
    assertThat(store.read(direct.id(), 0, 0, 10))
        .extracting(DefaultPublisherTest::body)
        .containsExactly("1", "2");
  }

  @Test
  void aTransactionIsJoinedOnceAndForgottenWhenItCompletes() throws SQLException {
    try (Connection tx = store.openTransaction()) {
      JoinedScope joined = new JoinedScope(TransactionScope.join(tx), publisher);
      assertThat(TransactionScope.of(tx)).isNotNull();
      assertThatThrownBy(() -> TransactionScope.join(tx))
          .isInstanceOf(ConnectionStateException.class)
          .hasMessageContaining("joined already");
      assertThatThrownBy(() -> joined.rolledBackTo("never set"))
          .isInstanceOf(ConnectionStateException.class)
          .hasMessageContaining("never reported");
      joined.completed();
      assertThat(TransactionScope.of(tx)).as("forgotten").isNull();
      tx.rollback();
    }
  }
}
