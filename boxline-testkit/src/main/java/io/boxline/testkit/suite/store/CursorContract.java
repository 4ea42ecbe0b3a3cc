package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.PartitionLag;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CursorStore;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PartitionRead;
import io.boxline.spi.Settlement;
import io.boxline.spi.StoredEvent;
import io.boxline.testkit.suite.SuiteSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link CursorStore}'s reading side, method by method: fencing cursors, reading the log, and the
 * partitions a subscription has not caught up on. Settling is in {@link SettlementContract}.
 */
public abstract class CursorContract extends StoreContract {
  @Nested
  class FenceCursors {
    @Test
    void returnsThePositionsAndRefusesAnEpochThatIsNotNewer() {
      sequenced("k", "k");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      assertThat(SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 1}, "me"))
          .containsExactly(0L, 0L);
      assertThat(SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 2}, "other"))
          .as("each fence stands on its own: only the newer epoch wins")
          .containsExactly(-1L, 0L);
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 2, 1, List.of()))
          .isEqualTo(CommitOutcome.COMMITTED);
      assertThat(SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {3}, "next"))
          .as("a new owner starts where the cursor is")
          .containsExactly(2L);
    }
  }

  @Nested
  class Read {
    @Test
    void readsAPartitionAfterASequenceUpToTheLimit() {
      fiveOnBothPartitions();
      assertThat(store.read(orders.id(), 0, 0, 100))
          .extracting(StoredEvent::key)
          .containsExactly("k0", "k2", "k4");
      assertThat(store.read(orders.id(), 0, 1, 1))
          .extracting(StoredEvent::sequence)
          .containsExactly(2L);
      assertThat(store.read(orders.id(), 0, 3, 100)).isEmpty();
      assertThat(store.read(orders.id(), 1, 0, 100))
          .extracting(StoredEvent::sequence)
          .containsExactly(1L, 2L);
    }
  }

  @Nested
  class ReadEach {
    @Test
    void readsEachPartitionAsReadWouldInTheOrderAsked() {
      fiveOnBothPartitions();
      List<List<StoredEvent>> got =
          store.readEach(
              List.of(
                  new PartitionRead(orders.id(), 1, 0, 100),
                  new PartitionRead(orders.id(), 0, 1, 1),
                  new PartitionRead(orders.id(), 0, 3, 100),
                  new PartitionRead(orders.id(), 0, 0, 100)));
      assertThat(got).hasSize(4);
      assertThat(got.get(0)).extracting(StoredEvent::sequence).containsExactly(1L, 2L);
      assertThat(got.get(1)).extracting(StoredEvent::sequence).containsExactly(2L);
      assertThat(got.get(2)).isEmpty();
      assertThat(got.get(3)).extracting(StoredEvent::key).containsExactly("k0", "k2", "k4");
      assertThat(got.get(3))
          .usingRecursiveFieldByFieldElementComparator()
          .isEqualTo(store.read(orders.id(), 0, 0, 100));
      assertThat(store.readEach(List.of())).isEmpty();
    }
  }

  @Nested
  class ReadWhere {
    @Test
    void theLogIsReadByPositionKeyAndIdWithoutASubscription() {
      List<OutboxRecord> records = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        records.add(record(orders, 1, i % 2 == 0 ? "even" : "odd", null));
      }
      appendAndSequence(records);
      assertThat(store.readWhere(orders.id(), 1, 0, null, null, 10))
          .extracting(StoredEvent::sequence)
          .containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
      assertThat(store.readWhere(orders.id(), 1, 2, "even", null, 10))
          .extracting(StoredEvent::sequence)
          .containsExactly(3L, 5L);
      assertThat(store.readWhere(orders.id(), 1, 0, "odd", null, 2))
          .extracting(StoredEvent::sequence)
          .containsExactly(2L, 4L);
      assertThat(store.readWhere(orders.id(), 1, 0, null, records.get(3).eventId(), 10))
          .singleElement()
          .satisfies(e -> assertThat(e.sequence()).isEqualTo(4L));
      assertThat(store.readWhere(orders.id(), 1, 0, null, UUID.randomUUID(), 10)).isEmpty();
      assertThat(store.lag(sub.id()))
          .as("reading moves no cursor")
          .extracting(PartitionLag::position)
          .containsOnly(0L);
    }
  }

  @Nested
  class Backlogged {
    @Test
    void namesThePartitionsWhoseCursorIsBehindTheHead() {
      fiveOnBothPartitions();
      assertThat(store.backlogged(sub.id()))
          .extracting(Backlog::partition)
          .containsExactlyInAnyOrder(0, 1);
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      assertThat(store.settle(sub.id(), List.of(Settlement.move(p0, 1, 0, 3))))
          .containsExactly(CommitOutcome.COMMITTED);
      assertThat(store.backlogged(sub.id())).extracting(Backlog::partition).containsExactly(1);
    }
  }
}
