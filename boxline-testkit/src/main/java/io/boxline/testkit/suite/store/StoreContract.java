package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What the store contract suites share. The {@link Store} SPI is checked role by role, with no
 * engine on top (in the style of River's driver tests): one abstract class per role interface of
 * the SPI, with one {@link org.junit.jupiter.api.Nested} class per method holding that method's
 * cases. The behaviour suites prove the guarantees through the engine; these pin down the contract
 * a store implements, so that a change inside one dialect, or a new store, is checked where it
 * breaks. Every refusal the javadoc names is checked to write nothing.
 *
 * <p>The roles: {@link CatalogContract}, {@link PublishContract}, {@link SequencerContract}, {@link
 * CursorContract}, {@link SettlementContract}, {@link ParkingContract}, {@link InboxContract},
 * {@link RetentionContract}, {@link MonitoringContract} and {@link WakeupContract}. A dialect runs
 * each of them in a test class of its own that names the dialect's {@link StoreTarget} (e.g. {@code
 * PostgresCatalogContractTest}): top-level classes, so that a test filter such as {@code
 * -Dtest='H2*'} runs every nested class once, through its role.
 *
 * <p>Every test gets a fresh store, on a fresh database from the target, with a namespace holding a
 * two-partition topic sequenced by the sequencer ({@link #ORDERS}), a one-partition topic numbered
 * in the writer's transaction ({@link #DIRECT}) and a subscription to the first ("billing"); both
 * are closed after the test.
 */
public abstract class StoreContract {
  static final Duration TTL = Duration.ofSeconds(30);
  static final Duration WAIT = SuiteSupport.WAIT;
  static final TopicName ORDERS = TopicName.of("acme/contract", "orders");
  static final TopicName DIRECT = TopicName.of("acme/contract", "direct");

  /** The test's database; null for a store without one. */
  protected TestDatabase db;

  Store store;
  TopicInfo orders;
  SubscriptionInfo sub;

  /** The store under test and its database. */
  protected abstract StoreTarget target();

  @BeforeEach
  void openStore(TestInfo info) {
    db = target().newDatabase(info.getTestMethod().map(Method::getName).orElse("t"));
    store = target().newStore(db);
    store.createNamespace(NamespacePath.of("acme/contract"));
    orders = store.createTopic(ORDERS, 2);
    store.createTopic(DIRECT, 1, Sequencing.IN_TRANSACTION);
    sub = store.createSubscription(SubscriptionSpec.of("billing", ORDERS));
  }

  @AfterEach
  void closeStore() {
    try {
      if (store != null) {
        store.close(); // safe to call twice: the database closes the stores it made again
      }
    } finally {
      if (db != null) {
        db.close();
      }
    }
  }

  /** Another store on the test's data, as a second process opens it. */
  Store anotherStore() {
    return target().anotherStore(db, store);
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

  /** Events with these keys on orders' partition 0, sequenced 1, 2, ... in this order. */
  List<OutboxRecord> sequenced(String... keys) {
    List<OutboxRecord> records = Arrays.stream(keys).map(k -> record(orders, 0, k, null)).toList();
    assertThat(appendAndSequence(records).events()).isEqualTo(keys.length);
    return records;
  }

  /**
   * Five events on orders, keys k0 to k4, alternately on partitions 0 and 1: partition 0 holds
   * sequences 1 to 3 (k0, k2, k4), partition 1 sequences 1 and 2 (k1, k3).
   */
  List<OutboxRecord> fiveOnBothPartitions() {
    List<OutboxRecord> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      records.add(record(orders, i % 2, "k" + i, null));
    }
    appendAndSequence(records);
    return records;
  }

  /** Billing's cursor on orders' {@code partition}. */
  long position(int partition) {
    return store.lag(sub.id()).stream()
        .filter(l -> l.partition() == partition)
        .map(PartitionLag::position)
        .findFirst()
        .orElseThrow();
  }

  static Park retry(long seq, OutboxRecord r) {
    return new Park(
        seq,
        r.eventId(),
        r.key(),
        r.type(),
        ParkState.RETRY,
        1,
        Instant.now().plusSeconds(60),
        "boom");
  }

  static Park dead(long seq, OutboxRecord r, String error) {
    return new Park(seq, r.eventId(), r.key(), r.type(), ParkState.DEAD, 3, Instant.now(), error);
  }

  /** Runs {@code work} on a thread of its own, so that a test can bound how long it waits. */
  static <T> FutureTask<T> onAnotherThread(Callable<T> work) {
    FutureTask<T> task = new FutureTask<>(work);
    Thread t = new Thread(task, "contract-other-consumer");
    t.setDaemon(true);
    t.start();
    return task;
  }

  /** {@code work}, failing the test after {@link #WAIT} instead of hanging on a lock left held. */
  static <T> T within(Callable<T> work) throws Exception {
    return onAnotherThread(work).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
