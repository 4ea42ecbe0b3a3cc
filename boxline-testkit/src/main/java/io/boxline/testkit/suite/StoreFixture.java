package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.NamespacePath;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the store contract suites ({@link StoreContractBehaviour}, {@link
 * StoreFencingContractBehaviour}) share: a store with no engine on top, a namespace with a
 * two-partition topic sequenced by the sequencer ({@link #ORDERS}), a one-partition topic numbered
 * in the writer's transaction ({@link #DIRECT}) and a subscription to the first ("billing").
 */
public abstract class StoreFixture extends DatabaseSuite {
  static final Duration TTL = Duration.ofSeconds(30);
  static final TopicName ORDERS = TopicName.of("acme/contract", "orders");
  static final TopicName DIRECT = TopicName.of("acme/contract", "direct");

  Store store;
  TopicInfo orders;
  SubscriptionInfo sub;

  /**
   * The store under test: by default one on the test's database ({@link
   * io.boxline.testkit.TestDatabase#store()}); a store without a database overrides this (and
   * returns null from {@code newDatabase}).
   */
  protected Store newStore() {
    return db.store();
  }

  @BeforeEach
  void openStore() {
    store = newStore();
    store.createNamespace(NamespacePath.of("acme/contract"));
    orders = store.createTopic(ORDERS, 2);
    store.createTopic(DIRECT, 1, Sequencing.IN_TRANSACTION);
    sub = store.createSubscription(SubscriptionSpec.of("billing", ORDERS));
  }

  static OutboxRecord record(TopicInfo t, int partition, String key, String idempotency) {
    return record(t, partition, key, idempotency, "order.placed");
  }

  static OutboxRecord record(
      TopicInfo t, int partition, String key, String idempotency, String type) {
    return new OutboxRecord(
        UUID.randomUUID(),
        t.id(),
        partition,
        key,
        type,
        "urn:test",
        "application/json",
        ("{\"key\": \"" + key + "\"}").getBytes(StandardCharsets.UTF_8),
        Map.of("tenant", "acme"),
        idempotency,
        null);
  }

  <T> T inTransaction(Function<Connection, T> work) {
    try (Connection tx = store.openTransaction()) {
      T result = work.apply(tx);
      tx.commit();
      return result;
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Appends {@code records} in one transaction and sequences them; returns the batch. */
  SequencedBatch appendAndSequence(List<OutboxRecord> records) {
    if (!records.isEmpty()) {
      inTransaction(tx -> store.append(tx, records));
    }
    assertThat(store.acquireSequencerLease("me", TTL).held()).isTrue();
    return store.sequence("me", TTL, 1000, (topic, key) -> 0);
  }
}
