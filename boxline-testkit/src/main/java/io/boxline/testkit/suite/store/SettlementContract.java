package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.FailureCounts;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CursorStore;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.SubscriptionSettlement;
import io.boxline.testkit.suite.SuiteSupport;
import java.sql.Connection;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link CursorStore}'s settling side, method by method: {@code settle}, with and without events
 * handed over in memory, and {@code settleIn}, in the caller's transaction. Every refusal the
 * javadoc names is checked to write nothing.
 */
public abstract class SettlementContract extends StoreContract {
  @Nested
  class Settle {
    @Test
    void cursorCommitsAreFencedByEpochAndByPosition() {
      appendAndSequence(List.of(record(orders, 0, "k", null), record(orders, 0, "k", null)));
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      long[] positions = SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      assertThat(positions).containsExactly(0L);
      assertThat(SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "other"))
          .as("an epoch that is not newer is refused")
          .containsExactly(-1L);
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 0, List.of()))
          .isEqualTo(CommitOutcome.FENCED);
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of()))
          .isEqualTo(CommitOutcome.COMMITTED);
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 2, 1, List.of()))
          .as("the cursor is at 1, not 0")
          .isEqualTo(CommitOutcome.CURSOR_MOVED);
      assertThat(SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next"))
          .containsExactly(1L);
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 1, 2, 1, List.of()))
          .isEqualTo(CommitOutcome.FENCED);
      assertThat(position(0)).isEqualTo(1);
    }

    @Test
    void eachMoveStandsOnItsOwn() {
      fiveOnBothPartitions();
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 1}, "me");
      assertThat(
              store.settle(
                  sub.id(), List.of(Settlement.move(p0, 1, 0, 3), Settlement.move(p1, 0, 0, 2))))
          .as("each move stands on its own: the second carries a stale epoch")
          .containsExactly(CommitOutcome.COMMITTED, CommitOutcome.FENCED);
      assertThat(store.backlogged(sub.id())).extracting(Backlog::partition).containsExactly(1);
    }

    @Test
    void aSettlementOutsideATransactionFinishesParkedEventsToo() {
      List<OutboxRecord> records = sequenced("k", "z");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      assertThat(
              SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of(retry(1, records.get(0)))))
          .isEqualTo(CommitOutcome.COMMITTED);
      assertThat(
              store.settle(sub.id(), List.of(Settlement.move(p0, 1, 1, 2).finishing(List.of(1L)))))
          .containsExactly(CommitOutcome.COMMITTED);
      assertThat(store.parked(sub.id(), p0, false).blockedKeys()).isEmpty();
      assertThat(position(0)).isEqualTo(2);
    }

    @Test
    void aHandedOverBatchCommitsOnlyWhileTheLogHoldsItsEventsAtTheirSequences() {
      List<OutboxRecord> records = sequenced("k", "k", "z");
      UUID[] ids = records.stream().map(OutboxRecord::eventId).toArray(UUID[]::new);
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      List<Park> parks = List.of(retry(2, records.get(1)));
      long[] first = {1, 2};

      // What the log can hold after a crash lost a handed-over batch: other events at its
      // sequences, or none past its head.
      assertThat(held(0, 2, 1, parks, first, ids[0], UUID.randomUUID()))
          .as("another event at sequence 2")
          .isEqualTo(CommitOutcome.LOG_CHANGED);
      assertThat(held(0, 2, 1, parks, first, ids[1], ids[0]))
          .as("the same events at other sequences")
          .isEqualTo(CommitOutcome.LOG_CHANGED);
      assertThat(held(0, 4, 1, List.of(), new long[] {3, 4}, ids[2], UUID.randomUUID()))
          .as("sequence 4 is past the head")
          .isEqualTo(CommitOutcome.LOG_CHANGED);
      assertThat(held(0, 2, 0, parks, first, UUID.randomUUID(), ids[1]))
          .as("the log is checked first, before the epoch")
          .isEqualTo(CommitOutcome.LOG_CHANGED);
      assertThat(position(0)).isZero();
      assertThat(store.failureCounts()).as("no park written").isEmpty();

      assertThat(held(0, 2, 1, parks, first, ids[0], ids[1])).isEqualTo(CommitOutcome.COMMITTED);
      assertThat(position(0)).isEqualTo(2);
      assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 1, 0, 0));
      assertThat(held(2, 3, 1, List.of(), new long[] {3}, ids[2]))
          .as("without parks")
          .isEqualTo(CommitOutcome.COMMITTED);
      assertThat(position(0)).isEqualTo(3);
    }

    @Test
    void aHandedOverBatchIsFencedByEpochAndPositionAndThenWritesNothing() {
      List<OutboxRecord> records = sequenced("k", "z");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of()))
          .isEqualTo(CommitOutcome.COMMITTED);
      List<Park> dead = List.of(dead(2, records.get(1), "gave up"));
      long[] seqs = {2};
      UUID id = records.get(1).eventId();

      assertThat(held(0, 2, 1, dead, seqs, id))
          .as("the cursor is at 1")
          .isEqualTo(CommitOutcome.CURSOR_MOVED);
      assertThat(held(0, 2, 1, List.of(), seqs, id))
          .as("the cursor is at 1, without parks")
          .isEqualTo(CommitOutcome.CURSOR_MOVED);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next");
      assertThat(held(1, 2, 1, dead, seqs, id))
          .as("another consumer holds epoch 2")
          .isEqualTo(CommitOutcome.FENCED);
      assertThat(held(1, 2, 1, List.of(), seqs, id))
          .as("another consumer holds epoch 2, without parks")
          .isEqualTo(CommitOutcome.FENCED);
      assertThat(position(0)).isEqualTo(1);
      assertThat(store.failureCounts()).as("no park written").isEmpty();

      assertThat(held(1, 2, 2, dead, seqs, id)).isEqualTo(CommitOutcome.COMMITTED);
      assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 0, 0, 1));
    }

    /** Settles billing's move on orders' partition 0 of the events handed over at {@code seqs}. */
    private CommitOutcome held(
        long from, long to, long epoch, List<Park> parks, long[] seqs, UUID... ids) {
      return SuiteSupport.settleHeld(
          store, sub.id(), PartitionKey.of(orders.id(), 0), from, to, epoch, parks, seqs, ids);
    }
  }

  @Nested
  class SettleAcross {
    @Test
    void theMovesOfSeveralSubscriptionsEachStandOnTheirOwnAndAnswerInInputOrder() {
      fiveOnBothPartitions();
      SubscriptionInfo audit =
          store.createSubscription(io.boxline.SubscriptionSpec.of("audit", ORDERS));
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      PartitionKey p1 = PartitionKey.of(orders.id(), 1);
      SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 1}, "me");
      SuiteSupport.fence(store, audit.id(), List.of(p0), new long[] {4}, "me");
      assertThat(
              store.settleAcross(
                  List.of(
                      new SubscriptionSettlement(audit.id(), Settlement.move(p0, 4, 0, 3)),
                      new SubscriptionSettlement(sub.id(), Settlement.move(p0, 1, 0, 3)),
                      new SubscriptionSettlement(sub.id(), Settlement.move(p1, 1, 0, 2)),
                      new SubscriptionSettlement(audit.id(), Settlement.move(p1, 9, 0, 1)))))
          .as("in input order; audit's partition 1 was never fenced at epoch 9")
          .containsExactly(
              CommitOutcome.COMMITTED,
              CommitOutcome.COMMITTED,
              CommitOutcome.COMMITTED,
              CommitOutcome.FENCED);
      assertThat(position(0)).as("billing's cursor").isEqualTo(3);
      assertThat(position(1)).isEqualTo(2);
      assertThat(store.backlogged(audit.id()))
          .as("audit: partition 0 read to its end, partition 1 untouched")
          .extracting(Backlog::partition)
          .containsExactly(1);
      assertThat(store.settleAcross(List.of())).isEmpty();
    }
  }

  @Nested
  class SettleIn {
    @Test
    void aSettlementInTheCallersTransactionCommitsWithItsWritesItsParksAndTheCursorMove()
        throws Exception {
      List<OutboxRecord> records = sequenced("k", "k", "z");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");

      Connection tx = store.openTransaction();
      assertThat(store.inboxClaim(tx, sub.id(), "m-1")).as("the handler's write").isTrue();
      assertThat(
              store.settleIn(
                  tx,
                  sub.id(),
                  Settlement.move(p0, 1, 0, 3).parking(List.of(retry(2, records.get(1))))))
          .isEqualTo(CommitOutcome.COMMITTED);
      assertThat(tx.isClosed()).as("the caller's transaction stays open").isFalse();
      assertThat(position(0)).as("not before the caller commits").isZero();
      assertThat(store.inboxSeen(sub.id(), "m-1")).as("not before the caller commits").isFalse();
      tx.commit();
      tx.close();

      assertThat(position(0)).isEqualTo(3);
      assertThat(store.inboxSeen(sub.id(), "m-1")).isTrue();
      assertThat(store.parked(sub.id(), p0, false).blockedKeys()).containsExactly("k");
      assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 1, 0, 0));
    }

    @Test
    void aSettlementInATransactionWithAStaleEpochOrAMovedCursorIsRefusedAndWritesNothing()
        throws Exception {
      sequenced("k", "k");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of()))
          .isEqualTo(CommitOutcome.COMMITTED);

      try (Connection tx = store.openTransaction()) {
        assertThat(store.settleIn(tx, sub.id(), Settlement.move(p0, 1, 0, 2)))
            .as("the cursor is at 1, not where this consumer left it")
            .isEqualTo(CommitOutcome.CURSOR_MOVED);
        tx.rollback();
      }
      // Bounded: a refusal that kept the row locked would block the next owner's fence.
      assertThat(
              within(
                  () -> SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next")))
          .as("the refusal moved nothing")
          .containsExactly(1L);
      try (Connection tx = store.openTransaction()) {
        assertThat(store.inboxClaim(tx, sub.id(), "m-1")).isTrue();
        assertThat(store.settleIn(tx, sub.id(), Settlement.move(p0, 1, 1, 2)))
            .as("another consumer holds a newer epoch")
            .isEqualTo(CommitOutcome.FENCED);
        assertThat(store.settleIn(tx, sub.id(), Settlement.move(p0, 1, 0, 2)))
            .as("a consumer that lost the partition is fenced, not sent back to the cursor")
            .isEqualTo(CommitOutcome.FENCED);
        TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
        assertThat(
                store.settleIn(
                    tx, sub.id(), Settlement.move(PartitionKey.of(direct.id(), 0), 2, 0, 1)))
            .as("billing has no cursor on direct")
            .isEqualTo(CommitOutcome.FENCED);
        tx.rollback();
      }
      assertThat(store.inboxSeen(sub.id(), "m-1")).as("the handler's write rolled back").isFalse();
      assertThat(position(0)).isEqualTo(1);
      assertThat(within(() -> SuiteSupport.settle(store, sub.id(), p0, 1, 2, 2, List.of())))
          .as("the rolled-back transactions let go of the cursor")
          .isEqualTo(CommitOutcome.COMMITTED);
    }

    @Test
    void aSettledTransactionHoldsTheCursorSoANewOwnerWaitsAndStartsAfterItsCommit()
        throws Exception {
      sequenced("k", "k");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      Connection tx = store.openTransaction();
      assertThat(store.settleIn(tx, sub.id(), Settlement.move(p0, 1, 0, 2)))
          .isEqualTo(CommitOutcome.COMMITTED);

      FutureTask<long[]> takeOver =
          onAnotherThread(
              () -> SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next"));
      // This bounded wait must run out: the settled transaction holds the cursor row.
      assertThatThrownBy(() -> takeOver.get(300, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      tx.commit();
      tx.close();

      assertThat(takeOver.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
          .as("the new owner starts after what the handler committed")
          .containsExactly(2L);
      try (Connection next = store.openTransaction()) {
        assertThat(store.settleIn(next, sub.id(), Settlement.move(p0, 1, 2, 2)))
            .as("the old owner's next transaction")
            .isEqualTo(CommitOutcome.FENCED);
        next.rollback();
      }
    }

    @Test
    void finishingAParkedEventInATransactionRemovesItWithTheHandlersWrites() throws Exception {
      List<OutboxRecord> records = sequenced("k", "z");
      PartitionKey p0 = PartitionKey.of(orders.id(), 0);
      SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
      Park due =
          new Park(
              1,
              records.get(0).eventId(),
              "k",
              "order.placed",
              ParkState.RETRY,
              1,
              Instant.now().minusSeconds(1),
              "boom");
      assertThat(
              SuiteSupport.settle(
                  store, sub.id(), p0, 0, 2, 1, List.of(due, retry(2, records.get(1)))))
          .isEqualTo(CommitOutcome.COMMITTED);
      Settlement retried = Settlement.move(p0, 1, 2, 2).finishing(List.of(1L));

      try (Connection tx = store.openTransaction()) {
        assertThat(
                store.settleIn(tx, sub.id(), Settlement.move(p0, 0, 2, 2).finishing(List.of(1L))))
            .isEqualTo(CommitOutcome.FENCED);
        tx.rollback();
      }
      // A retry whose handler fails rolls back: the event stays parked.
      try (Connection tx = store.openTransaction()) {
        assertThat(store.inboxClaim(tx, sub.id(), "retry-1")).isTrue();
        assertThat(store.settleIn(tx, sub.id(), retried)).isEqualTo(CommitOutcome.COMMITTED);
        tx.rollback();
      }
      assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10))
          .extracting(e -> e.event().sequence())
          .containsExactly(1L);

      try (Connection tx = store.openTransaction()) {
        assertThat(store.inboxClaim(tx, sub.id(), "retry-1")).isTrue();
        assertThat(store.settleIn(tx, sub.id(), retried)).isEqualTo(CommitOutcome.COMMITTED);
        tx.commit();
      }
      assertThat(store.inboxSeen(sub.id(), "retry-1")).isTrue();
      assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10)).isEmpty();
      assertThat(store.parked(sub.id(), p0, false).blockedKeys())
          .as("only the handled event went")
          .containsExactly("z");
      assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 1, 0, 0));
      assertThat(position(0)).as("the cursor stays").isEqualTo(2);
    }
  }
}
