package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.EventPosition;
import io.boxline.FailureCounts;
import io.boxline.PartitionLag;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.spi.StoreStats;
import io.boxline.spi.WakeupListener;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * The {@link Store} SPI methods that {@link StoreContractBehaviour} leaves out, each on its own
 * with no engine on top: settling in the caller's transaction ({@code settleIn}), settlements of
 * handed-over events ({@code settle} with held events), {@code discardDeadLetters}, the wake-ups
 * ({@code announce}, {@code announceIn}, {@code notifyOutbox}, {@code listen}) and {@code stats}.
 * Every refusal the javadoc names is checked to write nothing.
 */
public abstract class StoreFencingContractBehaviour extends StoreFixture {
  private static final Duration WAIT = SuiteSupport.WAIT;

  /** Heads announced to find out that a listener hears; each one new. */
  private long markers;

  /**
   * Another store on the test's data, as a second process opens it: its listener hears what this
   * test's store sends. A store without a database overrides this.
   */
  protected Store anotherStore() {
    return db.store();
  }

  /** Whether the store under test vacuums the outbox as it sequences, and counts it in stats. */
  protected boolean countsOutboxVacuums() {
    return false;
  }

  // ------------------------------------------------------------------ settling in a transaction

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
            within(() -> SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next")))
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
  void aSettledTransactionHoldsTheCursorSoANewOwnerWaitsAndStartsAfterItsCommit() throws Exception {
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
      assertThat(store.settleIn(tx, sub.id(), Settlement.move(p0, 0, 2, 2).finishing(List.of(1L))))
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

  @Test
  void aSettlementOutsideATransactionFinishesParkedEventsToo() {
    List<OutboxRecord> records = sequenced("k", "z");
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of(retry(1, records.get(0)))))
        .isEqualTo(CommitOutcome.COMMITTED);
    assertThat(store.settle(sub.id(), List.of(Settlement.move(p0, 1, 1, 2).finishing(List.of(1L)))))
        .containsExactly(CommitOutcome.COMMITTED);
    assertThat(store.parked(sub.id(), p0, false).blockedKeys()).isEmpty();
    assertThat(position(0)).isEqualTo(2);
  }

  // ------------------------------------------------------------------ handed-over events

  @Test
  void aHandedOverBatchCommitsOnlyWhileTheLogHoldsItsEventsAtTheirSequences() {
    List<OutboxRecord> records = sequenced("k", "k", "z");
    UUID[] ids = records.stream().map(OutboxRecord::eventId).toArray(UUID[]::new);
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    List<Park> parks = List.of(retry(2, records.get(1)));

    // What the log can hold after a crash lost a handed-over batch: other events at its sequences,
    // or none past its head.
    assertThat(
            SuiteSupport.settleHeld(
                store,
                sub.id(),
                p0,
                0,
                2,
                1,
                parks,
                new long[] {1, 2},
                new UUID[] {ids[0], UUID.randomUUID()}))
        .as("another event at sequence 2")
        .isEqualTo(CommitOutcome.LOG_CHANGED);
    assertThat(
            SuiteSupport.settleHeld(
                store,
                sub.id(),
                p0,
                0,
                2,
                1,
                parks,
                new long[] {1, 2},
                new UUID[] {ids[1], ids[0]}))
        .as("the same events at other sequences")
        .isEqualTo(CommitOutcome.LOG_CHANGED);
    assertThat(
            SuiteSupport.settleHeld(
                store,
                sub.id(),
                p0,
                0,
                4,
                1,
                List.of(),
                new long[] {3, 4},
                new UUID[] {ids[2], UUID.randomUUID()}))
        .as("sequence 4 is past the head")
        .isEqualTo(CommitOutcome.LOG_CHANGED);
    assertThat(
            SuiteSupport.settleHeld(
                store,
                sub.id(),
                p0,
                0,
                2,
                0,
                parks,
                new long[] {1, 2},
                new UUID[] {UUID.randomUUID(), ids[1]}))
        .as("the log is checked first, before the epoch")
        .isEqualTo(CommitOutcome.LOG_CHANGED);
    assertThat(position(0)).isZero();
    assertThat(store.failureCounts()).as("no park written").isEmpty();

    assertThat(
            SuiteSupport.settleHeld(
                store,
                sub.id(),
                p0,
                0,
                2,
                1,
                parks,
                new long[] {1, 2},
                new UUID[] {ids[0], ids[1]}))
        .isEqualTo(CommitOutcome.COMMITTED);
    assertThat(position(0)).isEqualTo(2);
    assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 1, 0, 0));
    assertThat(
            SuiteSupport.settleHeld(
                store, sub.id(), p0, 2, 3, 1, List.of(), new long[] {3}, new UUID[] {ids[2]}))
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
    UUID[] ids = {records.get(1).eventId()};

    assertThat(SuiteSupport.settleHeld(store, sub.id(), p0, 0, 2, 1, dead, seqs, ids))
        .as("the cursor is at 1")
        .isEqualTo(CommitOutcome.CURSOR_MOVED);
    assertThat(SuiteSupport.settleHeld(store, sub.id(), p0, 0, 2, 1, List.of(), seqs, ids))
        .as("the cursor is at 1, without parks")
        .isEqualTo(CommitOutcome.CURSOR_MOVED);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {2}, "next");
    assertThat(SuiteSupport.settleHeld(store, sub.id(), p0, 1, 2, 1, dead, seqs, ids))
        .as("another consumer holds epoch 2")
        .isEqualTo(CommitOutcome.FENCED);
    assertThat(SuiteSupport.settleHeld(store, sub.id(), p0, 1, 2, 1, List.of(), seqs, ids))
        .as("another consumer holds epoch 2, without parks")
        .isEqualTo(CommitOutcome.FENCED);
    assertThat(position(0)).isEqualTo(1);
    assertThat(store.failureCounts()).as("no park written").isEmpty();

    assertThat(SuiteSupport.settleHeld(store, sub.id(), p0, 1, 2, 2, dead, seqs, ids))
        .isEqualTo(CommitOutcome.COMMITTED);
    assertThat(store.failureCounts()).containsExactly(new FailureCounts("billing", 0, 0, 1));
  }

  // ------------------------------------------------------------------ dead letters

  @Test
  void discardingDeadLettersTakesExactlyWhatEachFilterAndTheLimitSelect() {
    SubscriptionInfo both = store.createSubscription(SubscriptionSpec.of("both", ORDERS, DIRECT));
    TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
    List<OutboxRecord> o0 =
        List.of(
            record(orders, 0, "k1", null),
            record(orders, 0, "k2", null, "order.cancelled"),
            record(orders, 0, "k1", null),
            record(orders, 0, "k3", null),
            record(orders, 0, "k4", null),
            record(orders, 0, "k5", null));
    List<OutboxRecord> o1 =
        List.of(
            record(orders, 1, "k6", null),
            record(orders, 1, "k7", null),
            record(orders, 1, "k8", null));
    List<OutboxRecord> all = new ArrayList<>(o0);
    all.addAll(o1);
    appendAndSequence(all);
    OutboxRecord d0 = record(direct, 0, "k1", null);
    inTransaction(tx -> store.appendToLog(tx, List.of(d0)));

    parkAll(
        both,
        PartitionKey.of(orders.id(), 0),
        6,
        dead(1, o0.get(0), "boom: Timeout"),
        dead(2, o0.get(1), "boom"),
        dead(3, o0.get(2), "boom"),
        dead(4, o0.get(3), "boom"),
        dead(5, o0.get(4), "boom"),
        retry(6, o0.get(5)));
    parkAll(
        both,
        PartitionKey.of(orders.id(), 1),
        3,
        dead(1, o1.get(0), "boom"),
        dead(2, o1.get(1), "boom"),
        dead(3, o1.get(2), "boom"));
    parkAll(both, PartitionKey.of(direct.id(), 0), 1, dead(1, d0, "boom"));
    // The same dead letter for another subscription: no discard of "both" may touch it.
    parkAll(sub, PartitionKey.of(orders.id(), 0), 1, dead(1, o0.get(0), "boom: Timeout"));

    DeadLetterQuery q = DeadLetterQuery.of("both");
    discards(both, q.type("order.none"));
    discards(both, q.type("order.cancelled"), at(0, 2));
    discards(both, q.key("k1").topic(DIRECT), new EventPosition(DIRECT, 0, 1));
    discards(both, q.errorContains("Timeout"), at(0, 1));
    discards(both, q.eventId(o0.get(2).eventId()), at(0, 3));
    UUID fourth = o0.get(3).eventId();
    Instant deadAt = store.deadLetters(both.id(), q.eventId(fourth)).get(0).deadAt();
    discards(both, q.eventId(fourth).deadBefore(deadAt.minusSeconds(1)));
    discards(both, q.eventId(fourth).deadAfter(deadAt.plusSeconds(1)));
    discards(
        both,
        q.eventId(fourth).deadAfter(deadAt.minusSeconds(1)).deadBefore(deadAt.plusSeconds(1)),
        at(0, 4));
    discards(both, q.after(at(1, 1)), at(1, 2), at(1, 3));
    discards(both, q.limit(1), at(0, 5));
    discards(both, q, at(1, 1));

    assertThat(store.retrying(both.id(), "both", null, 10))
        .as("a retry is no dead letter")
        .extracting(r -> r.event().sequence())
        .containsExactly(6L);
    assertThat(deadLetters(sub)).containsExactly(at(0, 1));
  }

  // ------------------------------------------------------------------ wake-ups

  @Test
  void announcedHeadsWakeTheListenerOfAnotherStore() {
    Heard heard = new Heard(() -> -1);
    try (Store other = anotherStore()) {
      assertThat(other.listen(heard)).as("every store here has cross-process wake-ups").isTrue();
      PartitionHead head = new PartitionHead(orders.id(), 1, 7);
      // Until the listener is connected, announcements are lost by design: announce until heard.
      Await.until(
          WAIT,
          "the other store's listener hears " + head,
          () -> {
            store.announce(List.of(head));
            return !heard.covering(0, head).isEmpty();
          });
      assertThat(heard.outboxWakeups()).as("announcing is no outbox wake-up").isZero();
    }
  }

  @Test
  void headsAnnouncedInATransactionAreSentWhenItCommitsAndNeverWhenItRollsBack() throws Exception {
    TopicInfo direct = store.findTopic(DIRECT).orElseThrow();
    PartitionKey d0 = PartitionKey.of(direct.id(), 0);
    // At each wake-up the listener notes the head it can see then.
    Heard heard = new Heard(() -> store.heads(List.of(d0)).get(0).lastSequence());
    try (Store other = anotherStore()) {
      assertThat(other.listen(heard)).isTrue();
      awaitListening(heard);
      int mark = heard.size();

      PartitionHead rolledBack = new PartitionHead(direct.id(), 0, 2);
      try (Connection tx = store.openTransaction()) {
        store.appendToLog(tx, List.of(record(direct, 0, "a", null), record(direct, 0, "b", null)));
        store.announceIn(tx, List.of(rolledBack));
        tx.rollback();
      }
      PartitionHead committed = new PartitionHead(direct.id(), 0, 1);
      boolean inTransaction =
          inTransaction(
              tx -> {
                store.appendToLog(tx, List.of(record(direct, 0, "c", null)));
                return store.announceIn(tx, List.of(committed));
              });
      if (!inTransaction) {
        store.announce(List.of(committed)); // the store cannot: the caller announces after commit
      }

      Await.until(
          WAIT,
          "the listener hears " + committed + " when it can read the event",
          () -> heard.covering(mark, committed).stream().anyMatch(w -> w.visible() == 1));
      assertThat(heard.covering(mark, committed))
          .filteredOn(w -> w.heads() != null)
          .as("a wake-up that names the head comes only after the commit")
          .allSatisfy(w -> assertThat(w.visible()).isEqualTo(1));
      assertThat(heard.heads()).as("a rolled-back announcement").doesNotContain(rolledBack);
    }
  }

  @Test
  void anOutboxWakeupInATransactionIsSentWhenItCommitsAndNeverWhenItRollsBack() throws Exception {
    Heard heard = new Heard(() -> -1);
    try (Store other = anotherStore()) {
      assertThat(other.listen(heard)).isTrue();
      awaitListening(heard);

      try (Connection tx = store.openTransaction()) {
        store.append(tx, List.of(record(orders, 0, "k", null)));
        store.notifyOutbox(tx);
        tx.rollback();
      }
      // What is sent after the rollback is heard after anything the rollback could have sent.
      awaitListening(heard);
      assertThat(heard.outboxWakeups()).as("a rolled-back outbox wake-up").isZero();

      inTransaction(
          tx -> {
            store.append(tx, List.of(record(orders, 0, "k", null)));
            store.notifyOutbox(tx);
            return null;
          });
      Await.until(
          WAIT, "the other store's listener hears of the outbox", heard::outboxWakeups, n -> n > 0);
    }
  }

  // ------------------------------------------------------------------ stats

  @Test
  void statsCountOnlyTheStoresOwnBackgroundWork() {
    assertThat(store.stats()).as("before any work").isEqualTo(StoreStats.NONE);
    appendAndSequence(List.of(record(orders, 0, "k", null), record(orders, 1, "k", null)));
    if (countsOutboxVacuums()) {
      Await.until(WAIT, "an outbox vacuum is counted", store::stats, s -> s.outboxVacuums() > 0);
      assertThat(store.stats().outboxVacuumFailures()).isZero();
    } else {
      assertThat(store.stats())
          .as("a store with no background work of its own counts none")
          .isEqualTo(StoreStats.NONE);
    }
  }

  // ------------------------------------------------------------------ helpers

  /** Events with these keys on orders' partition 0, sequenced 1, 2, ... in this order. */
  private List<OutboxRecord> sequenced(String... keys) {
    List<OutboxRecord> records = Arrays.stream(keys).map(k -> record(orders, 0, k, null)).toList();
    assertThat(appendAndSequence(records).events()).isEqualTo(keys.length);
    return records;
  }

  /** Billing's cursor on orders' {@code partition}. */
  private long position(int partition) {
    return store.lag(sub.id()).stream()
        .filter(l -> l.partition() == partition)
        .map(PartitionLag::position)
        .findFirst()
        .orElseThrow();
  }

  private static Park retry(long seq, OutboxRecord r) {
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

  private static Park dead(long seq, OutboxRecord r, String error) {
    return new Park(seq, r.eventId(), r.key(), r.type(), ParkState.DEAD, 3, Instant.now(), error);
  }

  /** Moves {@code s}'s cursor on {@code p} from 0 to {@code position}, parking {@code parks}. */
  private void parkAll(SubscriptionInfo s, PartitionKey p, long position, Park... parks) {
    SuiteSupport.fence(store, s.id(), List.of(p), new long[] {1}, "me");
    assertThat(SuiteSupport.settle(store, s.id(), p, 0, position, 1, List.of(parks)))
        .isEqualTo(CommitOutcome.COMMITTED);
  }

  private static EventPosition at(int partition, long sequence) {
    return new EventPosition(ORDERS, partition, sequence);
  }

  private List<EventPosition> deadLetters(SubscriptionInfo s) {
    return store.deadLetters(s.id(), DeadLetterQuery.of(s.name())).stream()
        .map(DeadLetter::event)
        .map(EventPosition::of)
        .toList();
  }

  /** Discards what {@code q} selects and checks that exactly {@code expected} went. */
  private void discards(SubscriptionInfo s, DeadLetterQuery q, EventPosition... expected) {
    List<EventPosition> left = new ArrayList<>(deadLetters(s));
    left.removeAll(List.of(expected));
    assertThat(store.discardDeadLetters(s.id(), q))
        .as("discarded by %s", q)
        .isEqualTo(expected.length);
    assertThat(deadLetters(s)).as("left after %s", q).containsExactlyElementsOf(left);
  }

  /**
   * Announces a new head until {@code heard} hears it: from then on the listener is connected, and
   * hears what is sent later after it.
   */
  private void awaitListening(Heard heard) {
    int mark = heard.size();
    PartitionHead marker = new PartitionHead(orders.id(), 1, ++markers);
    Await.until(
        WAIT,
        "the other store's listener hears " + marker,
        () -> {
          store.announce(List.of(marker));
          return !heard.covering(mark, marker).isEmpty();
        });
  }

  /** Runs {@code work} on a thread of its own, so that a test can bound how long it waits. */
  private static <T> FutureTask<T> onAnotherThread(Callable<T> work) {
    FutureTask<T> task = new FutureTask<>(work);
    Thread t = new Thread(task, "contract-other-consumer");
    t.setDaemon(true);
    t.start();
    return task;
  }

  /** {@code work}, failing the test after {@link #WAIT} instead of hanging on a lock left held. */
  private static <T> T within(Callable<T> work) throws Exception {
    return onAnotherThread(work).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** What a listener heard, in order; its methods run on the listening store's thread. */
  private static final class Heard implements WakeupListener {
    /**
     * One wake-up: of the outbox, or of the log with its heads (null: look at every partition) and
     * what {@code visible} returned when it came.
     */
    record Wake(boolean outbox, List<PartitionHead> heads, long visible) {}

    private final List<Wake> wakes = new CopyOnWriteArrayList<>();
    private final LongSupplier visible;

    Heard(LongSupplier visible) {
      this.visible = visible;
    }

    @Override
    public void outboxChanged() {
      wakes.add(new Wake(true, List.of(), -1));
    }

    @Override
    public void logAppended(List<PartitionHead> heads) {
      wakes.add(new Wake(false, heads, visible.getAsLong()));
    }

    /** A (re)connection asks for a re-check; it announces nothing. */
    @Override
    public void resynchronize() {}

    int size() {
      return wakes.size();
    }

    long outboxWakeups() {
      return wakes.stream().filter(Wake::outbox).count();
    }

    /** The log wake-ups after the first {@code mark} that name {@code head} or every partition. */
    List<Wake> covering(int mark, PartitionHead head) {
      return wakes.stream()
          .skip(mark)
          .filter(w -> !w.outbox() && (w.heads() == null || w.heads().contains(head)))
          .toList();
    }

    List<PartitionHead> heads() {
      return wakes.stream()
          .filter(w -> w.heads() != null)
          .flatMap(w -> w.heads().stream())
          .toList();
    }
  }
}
