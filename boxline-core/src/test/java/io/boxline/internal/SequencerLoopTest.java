package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.NamespacePath;
import io.boxline.Partitioner;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoredEvent;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sequencer loop over the in-memory store: what it moves from the outbox to the log. */
class SequencerLoopTest {
  private static final Duration TTL = Duration.ofSeconds(2);
  private static final TopicName ORDERS = TopicName.of("acme/seq", "orders");

  private final MutableClock clock = new MutableClock(Instant.parse("2024-05-01T10:00:00Z"));
  private InMemoryStore store;
  private TopicInfo orders;
  private SequencerLoop loop;

  @BeforeEach
  void setUp() {
    store = InMemoryStore.create(clock);
    store.createNamespace(NamespacePath.of("acme/seq"));
    orders = store.createTopic(ORDERS, 4);
  }

  @AfterEach
  void tearDown() {
    if (loop != null) {
      loop.stop(Duration.ofSeconds(2));
    }
    store.close();
  }

  private SequencerLoop startLoop(String owner) {
    SequencerLoop l =
        new SequencerLoop(
            store,
            owner,
            TTL,
            100,
            Duration.ofMillis(20),
            Duration.ZERO,
            new WakeupBus(),
            new TopicCache(store),
            Partitioner.kafkaCompatible(),
            Observers.of(List.of()),
            new RecentEvents());
    l.start();
    return l;
  }

  private OutboxRecord record(int partition, String key, String body) {
    return new OutboxRecord(
        UUID.randomUUID(),
        orders.id(),
        partition,
        key,
        "order.placed",
        null,
        "text/plain",
        body.getBytes(StandardCharsets.UTF_8),
        Map.of(),
        null,
        null);
  }

  /** Appends each list in a transaction of its own, in order. */
  @SafeVarargs
  private void commit(List<OutboxRecord>... transactions) throws SQLException {
    for (List<OutboxRecord> records : transactions) {
      try (Connection tx = store.openTransaction()) {
        store.append(tx, records);
        tx.commit();
      }
    }
  }

  private List<StoredEvent> log(int partition) {
    return store.read(orders.id(), partition, 0, 1000);
  }

  private static String body(StoredEvent e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  @Test
  void movesCommittedOutboxRowsIntoTheLogGapFreeInOutboxOrder() throws SQLException {
    loop = startLoop("seq-a");
    Waits.until("the loop leads", loop::isLeader);
    List<OutboxRecord> first = List.of(record(0, "a", "1"), record(1, "b", "2"));
    List<OutboxRecord> second = List.of(record(0, "c", "3"), record(0, "a", "4"));
    List<OutboxRecord> third = List.of(record(1, "d", "5"), record(0, "e", "6"));
    commit(first, second, third);
    loop.committedLocally();

    Waits.until("the outbox is empty", () -> store.outboxBacklog().events() == 0);
    assertThat(log(0)).extracting(StoredEvent::sequence).containsExactly(1L, 2L, 3L, 4L);
    assertThat(log(0)).extracting(SequencerLoopTest::body).containsExactly("1", "3", "4", "6");
    assertThat(log(1)).extracting(StoredEvent::sequence).containsExactly(1L, 2L);
    assertThat(log(1)).extracting(SequencerLoopTest::body).containsExactly("2", "5");
    assertThat(log(0).get(0).id()).isEqualTo(first.get(0).eventId());
    Waits.until("the loop counts them", () -> loop.events.get() == 6);
  }

  @Test
  void rowsWithoutAPartitionArePlacedByKeyAndKeepTheirOrderPerKey() throws SQLException {
    loop = startLoop("seq-a");
    Partitioner partitioner = Partitioner.kafkaCompatible();
    List<OutboxRecord> records = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      records.add(record(-1, "key-" + (i % 5), Integer.toString(i)));
    }
    commit(records.subList(0, 15), records.subList(15, 40));
    loop.committedLocally();

    Waits.until("the outbox is empty", () -> store.outboxBacklog().events() == 0);
    int seen = 0;
    for (int p = 0; p < 4; p++) {
      List<StoredEvent> events = log(p);
      seen += events.size();
      Map<String, Integer> lastByKey = new java.util.HashMap<>();
      for (int i = 0; i < events.size(); i++) {
        StoredEvent e = events.get(i);
        assertThat(e.sequence()).as("gap-free from 1").isEqualTo(i + 1);
        assertThat(partitioner.partition(e.key(), 4)).as("partition of " + e.key()).isEqualTo(p);
        int n = Integer.parseInt(body(e));
        Integer before = lastByKey.put(e.key(), n);
        assertThat(before == null || before < n).as(e.key() + " in publish order").isTrue();
      }
    }
    assertThat(seen).isEqualTo(40);
  }

  @Test
  void aLoopThatLostItsLeaseStopsSequencingAndAStoppedLoopHandsTheLeaseOver() throws SQLException {
    loop = startLoop("seq-a");
    Waits.until("the loop leads", loop::isLeader);
    commit(List.of(record(0, "a", "1")));
    loop.committedLocally();
    Waits.until("the first event is sequenced", () -> log(0).size() == 1);

    // The loop's lease runs out on the store's clock (again, if the loop renewed it in between).
    Waits.until(
        "another owner takes the lease",
        () -> {
          clock.advance(TTL.multipliedBy(2));
          return store.acquireSequencerLease("seq-b", TTL).held();
        });
    Waits.until("the loop notices", () -> !loop.isLeader());

    commit(List.of(record(0, "a", "2"), record(1, "b", "3")));
    loop.committedLocally(); // a look by a loop that does not lead moves nothing
    SequencedBatch taken = store.sequence("seq-b", TTL, 100, (t, k) -> 0);
    assertThat(taken.events()).as("every row was left for the new leader").isEqualTo(2);
    assertThat(loop.events.get()).isEqualTo(1);
    assertThat(loop.isLeader()).isFalse();

    loop.stop(Duration.ofSeconds(2)); // else it competes for the lease freed next
    store.releaseSequencerLease("seq-b");
    SequencerLoop other = startLoop("seq-c");
    try {
      Waits.until("a standby takes the free lease", other::isLeader);
      other.stop(Duration.ofSeconds(2));
      assertThat(store.acquireSequencerLease("seq-d", TTL))
          .as("a stopped loop hands the lease back at once")
          .isNotEqualTo(LeaseStatus.NOT_HELD);
    } finally {
      other.stop(Duration.ofSeconds(2));
    }
  }
}
