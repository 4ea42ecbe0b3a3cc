package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.boxline.PartitionLag;
import io.boxline.spi.MonitoringStore;
import io.boxline.spi.StoreStats;
import io.boxline.testkit.Await;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link MonitoringStore}, method by method: the subscriptions' lag, the sequencer's backlog and
 * the store's counts of its own background work.
 */
public abstract class MonitoringContract extends StoreContract {
  @Nested
  class Lag {
    @Test
    void aNewSubscriptionStartsAtZeroOnEveryPartition() {
      assertThat(store.lag(sub.id()))
          .extracting(PartitionLag::partition, PartitionLag::position, PartitionLag::lastSequence)
          .containsExactlyInAnyOrder(tuple(0, 0L, 0L), tuple(1, 0L, 0L));
    }
  }

  @Nested
  class LagWithAge {
    @Test
    void namesWhenTheOldestUnhandledEventWasWritten() {
      fiveOnBothPartitions();
      assertThat(store.lagWithAge(sub.id()))
          .hasSize(2)
          .allSatisfy(l -> assertThat(l.oldestUnhandledAt()).isNotNull());
    }
  }

  @Nested
  class LagBySubscription {
    @Test
    void reportsEachSubscriptionsBacklogByName() {
      fiveOnBothPartitions();
      assertThat(store.lagBySubscription().get("billing"))
          .extracting(PartitionLag::backlog)
          .containsExactlyInAnyOrder(3L, 2L);
    }
  }

  @Nested
  class OutboxBacklog {
    @Test
    void countsCommittedRowsNotSequencedYet() {
      assertThat(store.outboxBacklog().events()).isZero();
      assertThat(store.outboxBacklog().oldestCreatedAt()).isNull();
      inTransaction(
          tx ->
              store.append(
                  tx, List.of(record(orders, 0, "k", null), record(orders, 1, "k", null))));
      assertThat(store.outboxBacklog().events()).isEqualTo(2);
      assertThat(store.outboxBacklog().oldestCreatedAt()).isNotNull();
      appendAndSequence(List.of());
      assertThat(store.outboxBacklog().events()).isZero();
    }
  }

  @Nested
  class Stats {
    @Test
    void statsCountOnlyTheStoresOwnBackgroundWork() {
      assertThat(store.stats()).as("before any work").isEqualTo(StoreStats.NONE);
      appendAndSequence(List.of(record(orders, 0, "k", null), record(orders, 1, "k", null)));
      if (target().countsOutboxVacuums()) {
        Await.until(WAIT, "an outbox vacuum is counted", store::stats, s -> s.outboxVacuums() > 0);
        assertThat(store.stats().outboxVacuumFailures()).isZero();
      } else {
        assertThat(store.stats())
            .as("a store with no background work of its own counts none")
            .isEqualTo(StoreStats.NONE);
      }
    }
  }
}
