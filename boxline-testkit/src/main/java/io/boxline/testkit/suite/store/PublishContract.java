package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.boxline.TopicInfo;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PublishStore;
import io.boxline.spi.StoredEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link PublishStore}, method by method: writing to the outbox with idempotency keys, writing to
 * the log in the writer's transaction, and the partitions' heads. Its wake-ups ({@code
 * notifyOutbox}, {@code announce}, {@code announceIn}) are in {@link WakeupContract}.
 */
public abstract class PublishContract extends StoreContract {
  @Nested
  class Append {
    @Test
    void aSecondRecordWithTheSameIdempotencyKeyIsNotStoredAndNamesTheFirst() {
      OutboxRecord first = record(orders, 0, "k", "once");
      OutboxRecord second = record(orders, 1, "k", "once");
      List<UUID> r1 = inTransaction(tx -> store.append(tx, List.of(first)));
      List<UUID> r2 = inTransaction(tx -> store.append(tx, List.of(second)));
      assertThat(r1).containsExactly((UUID) null);
      assertThat(r2).containsExactly(first.eventId());
      assertThat(appendAndSequence(List.of()).events()).isEqualTo(1);
    }
  }

  @Nested
  class ClaimIdempotencyKeys {
    @Test
    void namesEarlierOwnersAndWritesNoEvent() {
      OutboxRecord stored = record(orders, 0, "k", "claimed-once");
      inTransaction(tx -> store.append(tx, List.of(stored)));
      // The same event again (a retry after a commit whose answer was lost): its key is owned.
      List<UUID> sameAgain = inTransaction(tx -> store.claimIdempotencyKeys(tx, List.of(stored)));
      assertThat(sameAgain).containsExactly(stored.eventId());
      List<UUID> appendedAgain = inTransaction(tx -> store.append(tx, List.of(stored)));
      assertThat(appendedAgain).containsExactly(stored.eventId());
      OutboxRecord again = record(orders, 1, "k", "claimed-once");
      OutboxRecord fresh = record(orders, 1, "k", "claimed-new");
      OutboxRecord keyless = record(orders, 1, "k", null);
      List<UUID> owners =
          inTransaction(tx -> store.claimIdempotencyKeys(tx, List.of(again, fresh, keyless)));
      assertThat(owners).containsExactly(stored.eventId(), null, null);
      // The claim holds: appending the fresh key again names the claimer; no claimed event was
      // written.
      List<UUID> later =
          inTransaction(tx -> store.append(tx, List.of(record(orders, 0, "k", "claimed-new"))));
      assertThat(later).containsExactly(fresh.eventId());
      assertThat(appendAndSequence(List.of()).events()).isEqualTo(1);
    }
  }

  @Nested
  class AppendToLog {
    @Test
    void inTransactionTopicsAreNumberedInTheWritersTransaction() {
      TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
      List<LogAppend> appended =
          inTransaction(
              tx ->
                  store.appendToLog(
                      tx, List.of(record(direct, 0, "a", null), record(direct, 0, "b", null))));
      assertThat(appended).hasSize(2);
      assertThat(store.read(direct.id(), 0, 0, 10))
          .extracting(StoredEvent::sequence, StoredEvent::key)
          .containsExactly(tuple(1L, "a"), tuple(2L, "b"));
    }
  }

  @Nested
  class Heads {
    @Test
    void reportEachPartitionsLastSequence() {
      fiveOnBothPartitions();
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      Map<Integer, Long> heads = new HashMap<>();
      store.heads(List.of(p0, p1)).forEach(h -> heads.put(h.partition(), h.lastSequence()));
      assertThat(heads).containsExactlyInAnyOrderEntriesOf(Map.of(0, 3L, 1, 2L));
    }
  }
}
