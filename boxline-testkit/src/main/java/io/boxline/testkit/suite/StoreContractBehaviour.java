package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The {@link Store} SPI method by method, with no engine on top (in the style of River's driver
 * tests): what each data operation writes and returns, on every dialect. The behaviour suites prove
 * the guarantees through the engine; this suite pins down the contract a store implements, so that
 * a change inside one dialect, or a new store, is checked where it breaks.
 */
public abstract class StoreContractBehaviour extends StoreFixture {
  @Test
  void theCatalogFindsWhatWasCreated() {
    assertThat(store.findTopic(ORDERS)).contains(orders);
    assertThat(store.findTopic(orders.id())).contains(orders);
    assertThat(store.findTopic(TopicName.of("acme/contract", "none"))).isEmpty();
    assertThat(store.topics())
        .extracting(TopicInfo::name)
        .containsExactlyInAnyOrder(ORDERS, DIRECT);
    assertThat(store.findTopic(DIRECT).orElseThrow().sequencing())
        .isEqualTo(Sequencing.IN_TRANSACTION);
    assertThat(store.findSubscription("billing")).contains(sub);
    assertThat(store.findSubscription("nobody")).isEmpty();
    assertThat(store.lag(sub.id()))
        .extracting(PartitionLag::partition, PartitionLag::position, PartitionLag::lastSequence)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(0, 0L, 0L),
            org.assertj.core.groups.Tuple.tuple(1, 0L, 0L));
  }

  @Test
  void appendedRowsAreSequencedGapFreeInPublishOrderAndReadBackExactly() {
    List<OutboxRecord> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      records.add(record(orders, i % 2, "k" + i, null));
    }
    assertThat(store.acquireSequencerLease("me", TTL)).isNotEqualTo(LeaseStatus.NOT_HELD);
    SequencedBatch batch = appendAndSequence(records);
    assertThat(batch.leaseHeld()).isTrue();
    assertThat(batch.events()).isEqualTo(5);
    assertThat(store.sequence("me", TTL, 1000, (t, k) -> 0).events()).isZero();
    List<StoredEvent> p0 = store.read(orders.id(), 0, 0, 100);
    assertThat(p0).extracting(StoredEvent::sequence).containsExactly(1L, 2L, 3L);
    assertThat(p0).extracting(StoredEvent::key).containsExactly("k0", "k2", "k4");
    StoredEvent first = p0.get(0);
    OutboxRecord sent = records.get(0);
    assertThat(first.id()).isEqualTo(sent.eventId());
    assertThat(first.type()).isEqualTo(sent.type());
    assertThat(first.source()).isEqualTo(sent.source());
    assertThat(first.contentType()).isEqualTo(sent.contentType());
    assertThat(first.payload()).isEqualTo(sent.payload());
    assertThat(first.headers()).isEqualTo(sent.headers());
    assertThat(first.malformed()).isNull();
    assertThat(store.read(orders.id(), 0, 1, 1))
        .extracting(StoredEvent::sequence)
        .containsExactly(2L);
    assertThat(store.read(orders.id(), 1, 0, 100))
        .extracting(StoredEvent::key)
        .containsExactly("k1", "k3");
    assertThat(store.lag(sub.id()))
        .extracting(PartitionLag::lastSequence)
        .containsExactlyInAnyOrder(3L, 2L);
  }

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

  @Test
  void claimingIdempotencyKeysNamesEarlierOwnersAndWritesNoEvent() {
    OutboxRecord stored = record(orders, 0, "k", "claimed-once");
    inTransaction(tx -> store.append(tx, List.of(stored)));
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

  @Test
  void theSequencerLeaseHasOneHolderUntilReleased() {
    assertThat(store.acquireSequencerLease("a", TTL).held()).isTrue();
    assertThat(store.acquireSequencerLease("b", TTL)).isEqualTo(LeaseStatus.NOT_HELD);
    assertThat(store.sequence("b", TTL, 10, (t, k) -> 0).leaseHeld()).isFalse();
    store.releaseSequencerLease("a");
    assertThat(store.acquireSequencerLease("b", TTL).held()).isTrue();
    assertThat(store.acquireSequencerLease("a", TTL)).isEqualTo(LeaseStatus.NOT_HELD);
  }

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
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(1L, "a"),
            org.assertj.core.groups.Tuple.tuple(2L, "b"));
  }

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
    assertThat(
            store.lag(sub.id()).stream()
                .filter(l -> l.partition() == 0)
                .findFirst()
                .orElseThrow()
                .position())
        .isEqualTo(1);
  }

  @Test
  void headsBacklogAndLagReportTheLogAndGroupCommitsAndRewindsMoveCursors() {
    List<OutboxRecord> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      records.add(record(orders, i % 2, "k" + i, null));
    }
    appendAndSequence(records);
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    PartitionKey p1 = PartitionKey.of(orders.id(), 1);
    Map<Integer, Long> heads = new java.util.HashMap<>();
    store.heads(List.of(p0, p1)).forEach(h -> heads.put(h.partition(), h.lastSequence()));
    assertThat(heads).containsExactlyInAnyOrderEntriesOf(Map.of(0, 3L, 1, 2L));
    assertThat(store.backlogged(sub.id()))
        .extracting(io.boxline.spi.Backlog::partition)
        .containsExactlyInAnyOrder(0, 1);
    assertThat(store.lagWithAge(sub.id()))
        .hasSize(2)
        .allSatisfy(l -> assertThat(l.oldestUnhandledAt()).isNotNull());
    assertThat(store.lagBySubscription().get("billing"))
        .extracting(PartitionLag::backlog)
        .containsExactlyInAnyOrder(3L, 2L);

    SuiteSupport.fence(store, sub.id(), List.of(p0, p1), new long[] {1, 1}, "me");
    assertThat(
            store.settle(
                sub.id(), List.of(Settlement.move(p0, 1, 0, 3), Settlement.move(p1, 0, 0, 2))))
        .as("each move stands on its own: the second carries a stale epoch")
        .containsExactly(CommitOutcome.COMMITTED, CommitOutcome.FENCED);
    assertThat(store.backlogged(sub.id()))
        .extracting(io.boxline.spi.Backlog::partition)
        .containsExactly(1);

    assertThat(store.rewindCursors(sub.id(), io.boxline.StartPosition.latest())).isEqualTo(2);
    assertThat(store.backlogged(sub.id())).isEmpty();
    assertThat(store.rewindCursors(sub.id(), io.boxline.StartPosition.earliest())).isEqualTo(2);
    assertThat(store.lag(sub.id())).extracting(PartitionLag::position).containsOnly(0L);
  }

  @Test
  void parkedEventsBlockTheirKeyAreDueInOrderAndResolve() {
    List<OutboxRecord> records =
        List.of(
            record(orders, 0, "k", null),
            record(orders, 0, "k", null),
            record(orders, 0, "z", null));
    appendAndSequence(records);
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    Instant past = Instant.now().minusSeconds(5);
    List<Park> parks =
        List.of(
            new Park(
                1, records.get(0).eventId(), "k", "order.placed", ParkState.RETRY, 1, past, "boom"),
            new Park(
                2,
                records.get(1).eventId(),
                "k",
                "order.placed",
                ParkState.WAITING,
                0,
                past,
                null));
    assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 3, 1, parks))
        .isEqualTo(CommitOutcome.COMMITTED);
    ParkedSummary summary = store.parked(sub.id(), p0, false);
    assertThat(summary.blockedKeys()).containsExactly("k");
    assertThat(summary.nextDue()).isNotNull();
    assertThat(store.dueParked(sub.id(), p0, false, past.minusSeconds(1), 10))
        .as("nothing is due before its next attempt, by the caller's clock")
        .isEmpty();
    List<ParkedEvent> due = store.dueParked(sub.id(), p0, false, Instant.now(), 10);
    assertThat(due).extracting(pe -> pe.event().sequence()).containsExactly(1L);
    assertThat(due.get(0).attempts()).isEqualTo(1);
    assertThat(store.resolveParked(sub.id(), p0, 1, 0, Resolution.done()))
        .as("a stale epoch records nothing")
        .isFalse();
    assertThat(store.resolveParked(sub.id(), p0, 1, 1, Resolution.done())).isTrue();
    assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10))
        .as("the next of the key is due once the one before it is done")
        .extracting(pe -> pe.event().sequence())
        .containsExactly(2L);
    assertThat(
            store.resolveParked(
                sub.id(),
                p0,
                2,
                1,
                new Resolution(Resolution.Kind.DEAD, 3, Instant.now(), "gave up")))
        .isTrue();
    assertThat(store.parked(sub.id(), p0, false).blockedKeys()).isEmpty();
    assertThat(store.parked(sub.id(), p0, true).blockedKeys())
        .as("a dead letter blocks its key when dead letters block")
        .containsExactly("k");
    assertThat(store.deadLetters(sub.id(), DeadLetterQuery.of("billing")))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.event().id()).isEqualTo(records.get(1).eventId());
              assertThat(d.lastError()).isEqualTo("gave up");
              assertThat(d.attempts()).isEqualTo(3);
            });
    assertThat(store.redriveDeadLetters(sub.id(), DeadLetterQuery.of("billing"))).isEqualTo(1);
    assertThat(store.deadLetters(sub.id(), DeadLetterQuery.of("billing"))).isEmpty();
    assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10))
        .extracting(pe -> pe.event().sequence())
        .containsExactly(2L);
  }

  @Test
  void theInboxRemembersKeys() throws Exception {
    assertThat(store.inboxSeen(sub.id(), "m-1")).isFalse();
    store.inboxRecord(sub.id(), "m-1");
    assertThat(store.inboxSeen(sub.id(), "m-1")).isTrue();
    assertThat((boolean) inTransaction(tx -> store.inboxClaim(tx, sub.id(), "m-2"))).isTrue();
    assertThat((boolean) inTransaction(tx -> store.inboxClaim(tx, sub.id(), "m-2"))).isFalse();
    try (Connection tx = store.openTransaction()) {
      assertThat(store.inboxClaim(tx, sub.id(), "m-3")).isTrue();
      tx.rollback();
    }
    assertThat(store.inboxSeen(sub.id(), "m-3")).as("a rolled-back claim is forgotten").isFalse();
  }

  @Test
  void rowsNamingNoPartitionThatExistsAreSetAside() {
    assertThat(store.setAsideUnplaceable()).isZero();
    OutboxRecord good = record(orders, 1, "k", null);
    OutboxRecord lost = record(orders, 7, "k", null); // the topic has partitions 0 and 1
    inTransaction(tx -> store.append(tx, List.of(good, lost)));
    assertThat(store.setAsideUnplaceable()).isEqualTo(1);
    assertThat(store.setAsideUnplaceable()).isZero();
    assertThat(appendAndSequence(List.of()).events()).isEqualTo(1);
    assertThat(store.read(orders.id(), 1, 0, 10))
        .extracting(StoredEvent::id)
        .containsExactly(good.eventId());
  }

  @Test
  void aTopicsRetentionReadsBackAsSet() {
    assertThat(store.retention(orders.id())).isEqualTo(io.boxline.RetentionPolicy.forever());
    io.boxline.RetentionPolicy p =
        io.boxline.RetentionPolicy.byAge(Duration.ofDays(7)).maxEventsPerPartition(1_000);
    store.setRetention(orders.id(), p);
    assertThat(store.retention(orders.id())).isEqualTo(p);
    io.boxline.RetentionPolicy size = io.boxline.RetentionPolicy.bySize(50);
    store.setRetention(orders.id(), size);
    assertThat(store.retention(orders.id())).isEqualTo(size);
  }

  @Test
  void aSubscriptionMarkedActiveHoldsRetentionBackAndAnAbandonedOneNoLonger() {
    List<OutboxRecord> records = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      records.add(record(orders, 0, "k" + i, null));
    }
    appendAndSequence(records);
    assertThat(sub.start()).isEqualTo(io.boxline.StartPosition.earliest());
    assertThat(sub.lastActive()).isEqualTo(sub.createdAt());
    store.markActive(List.of(sub.id()));
    SubscriptionInfo stamped = store.subscriptions().get(0);
    assertThat(stamped.lastActive()).isAfterOrEqualTo(sub.createdAt());
    // Keep one event per partition; billing's cursor (at 0) holds the other two while it counts as
    // active (abandonAfter 7 days by default) ...
    store.setRetention(orders.id(), io.boxline.RetentionPolicy.bySize(1));
    assertThat(
            store.purge(Duration.ofDays(1), Duration.ofDays(1), Duration.ofDays(1), 100).events())
        .isZero();
    assertThat(store.read(orders.id(), 0, 0, 100)).hasSize(3);
    // ... and not once it has had no live consumer for longer than abandonAfter.
    store.setRetention(
        orders.id(), io.boxline.RetentionPolicy.bySize(1).abandonAfter(Duration.ofMillis(200)));
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "billing abandoned and its unread events purged",
        () -> {
          store.purge(Duration.ofDays(1), Duration.ofDays(1), Duration.ofDays(1), 100);
          return store.read(orders.id(), 0, 0, 100).size() == 1;
        });
    assertThat(store.read(orders.id(), 0, 0, 100))
        .extracting(StoredEvent::sequence)
        .containsExactly(3L);
  }

  @Test
  void namespacesAndSubscriptionsAreListed() {
    store.createNamespace(NamespacePath.of("acme/contract/deeper"));
    store.createSubscription(SubscriptionSpec.of("audit", ORDERS, DIRECT));
    assertThat(store.namespaces())
        .extracting(NamespacePath::toString)
        .contains("acme", "acme/contract", "acme/contract/deeper");
    assertThat(store.subscriptions())
        .extracting(SubscriptionInfo::name)
        .containsExactly("audit", "billing");
    assertThat(store.subscriptions().get(0).topics()).containsExactlyInAnyOrder(ORDERS, DIRECT);
    assertThat(store.subscriptions().get(1)).isEqualTo(sub);
  }

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

  @Test
  void failureCountsAndTheInboxSizeAreReported() {
    List<OutboxRecord> records =
        List.of(
            record(orders, 0, "k", null),
            record(orders, 0, "k", null),
            record(orders, 0, "z", null));
    appendAndSequence(records);
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    Instant later = Instant.now().plusSeconds(60);
    List<Park> parks =
        List.of(
            new Park(1, records.get(0).eventId(), "k", "t", ParkState.RETRY, 1, later, "boom"),
            new Park(2, records.get(1).eventId(), "k", "t", ParkState.WAITING, 0, later, null),
            new Park(3, records.get(2).eventId(), "z", "t", ParkState.DEAD, 3, later, "gave up"));
    assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 3, 1, parks))
        .isEqualTo(CommitOutcome.COMMITTED);
    store.inboxRecord(sub.id(), "m-1");
    store.inboxRecord(sub.id(), "m-2");
    assertThat(store.failureCounts())
        .containsExactly(new io.boxline.FailureCounts("billing", 1, 1, 1));
    assertThat(store.retrying(sub.id(), "billing", null, 10))
        .extracting(
            r -> r.event().sequence(),
            io.boxline.RetryingEvent::behindItsKey,
            io.boxline.RetryingEvent::attempts,
            io.boxline.RetryingEvent::lastError)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(1L, false, 1, "boom"),
            org.assertj.core.groups.Tuple.tuple(2L, true, 0, null));
    assertThat(store.retrying(sub.id(), "billing", null, 10).get(0).event().id())
        .isEqualTo(records.get(0).eventId());
    assertThat(store.retrying(sub.id(), "billing", null, 1)).hasSize(1);
    // Pages continue past the previous page's last position, in log order.
    io.boxline.EventPosition first =
        io.boxline.EventPosition.of(store.retrying(sub.id(), "billing", null, 1).get(0).event());
    assertThat(store.retrying(sub.id(), "billing", first, 10))
        .extracting(r -> r.event().sequence())
        .containsExactly(2L);
    assertThat(
            store.retrying(
                sub.id(), "billing", new io.boxline.EventPosition(orders.name(), 0, 2), 10))
        .isEmpty();
    assertThat(
            store.deadLetters(
                sub.id(),
                io.boxline.DeadLetterQuery.of("billing")
                    .after(new io.boxline.EventPosition(orders.name(), 0, 2))))
        .extracting(d -> d.event().sequence())
        .containsExactly(3L);
    assertThat(
            store.deadLetters(
                sub.id(),
                io.boxline.DeadLetterQuery.of("billing")
                    .after(new io.boxline.EventPosition(orders.name(), 0, 3))))
        .isEmpty();
    assertThat(store.inboxSize(sub.id())).isEqualTo(2);
    assertThat(store.inboxSizes()).isEqualTo(Map.of("billing", 2L));
  }

  @Test
  void deletingASubscriptionTakesEverythingItOwnsAndNothingElse() {
    SubscriptionInfo other = store.createSubscription(SubscriptionSpec.of("other", ORDERS));
    List<OutboxRecord> records = List.of(record(orders, 0, "k", null));
    appendAndSequence(records);
    PartitionKey p0 = PartitionKey.of(orders.id(), 0);
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    Park dead =
        new Park(1, records.get(0).eventId(), "k", "t", ParkState.DEAD, 3, Instant.now(), "x");
    assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 1, 1, List.of(dead)))
        .isEqualTo(CommitOutcome.COMMITTED);
    store.inboxRecord(sub.id(), "m-1");

    assertThat(store.deleteSubscription(sub)).isTrue();
    assertThat(store.findSubscription("billing")).isEmpty();
    assertThat(store.failureCounts()).isEmpty();
    assertThat(store.inboxSize(sub.id())).isZero();
    assertThat(store.lag(sub.id())).isEmpty();
    assertThat(store.deleteSubscription(sub)).as("deleting again changes nothing").isFalse();
    assertThat(store.lag(other.id())).hasSize(2);
    assertThat(store.readWhere(orders.id(), 0, 0, null, null, 10)).hasSize(1);
    SubscriptionInfo again = store.createSubscription(SubscriptionSpec.of("billing", ORDERS));
    assertThat(again.id()).as("the name can be used again").isNotEqualTo(sub.id());
    assertThat(store.lag(again.id())).extracting(PartitionLag::position).containsOnly(0L);
  }

  @Test
  void deletingATopicTakesItsEventsCursorsAndKeysAndLeavesOtherTopics() {
    SubscriptionInfo both = store.createSubscription(SubscriptionSpec.of("both", ORDERS, DIRECT));
    appendAndSequence(List.of(record(orders, 0, "k", "idem-1")));
    inTransaction(tx -> store.append(tx, List.of(record(orders, 1, "k", null))));

    assertThat(store.deleteTopic(orders.id())).isTrue();
    assertThat(store.findTopic(ORDERS)).isEmpty();
    assertThat(store.findSubscription("both").orElseThrow().topics()).containsExactly(DIRECT);
    assertThat(store.lag(both.id())).extracting(PartitionLag::topic).containsOnly(DIRECT);
    assertThat(store.outboxBacklog().events()).as("its unsequenced rows are gone").isZero();
    assertThat(store.deleteTopic(orders.id())).isFalse();

    TopicInfo recreated = store.createTopic(ORDERS, 2);
    assertThat(recreated.id()).isNotEqualTo(orders.id());
    List<UUID> owners =
        inTransaction(tx -> store.append(tx, List.of(record(recreated, 0, "k", "idem-1"))));
    assertThat(owners).as("its idempotency keys are gone").containsOnlyNulls();
    assertThat(store.readWhere(recreated.id(), 0, 0, null, null, 10)).isEmpty();
  }

  @Test
  void onlyAnEmptyNamespaceIsDeleted() {
    store.createNamespace(NamespacePath.of("acme/empty/leaf"));
    assertThatThrownBy(() -> store.deleteNamespace(NamespacePath.of("acme/empty")))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessageContaining("not empty")
        .hasMessageContaining("1 namespaces");
    assertThatThrownBy(() -> store.deleteNamespace(NamespacePath.of("acme/contract")))
        .isInstanceOf(io.boxline.ValidationException.class)
        .hasMessageContaining("2 topics");
    assertThat(store.deleteNamespace(NamespacePath.of("acme/empty/leaf"))).isTrue();
    assertThat(store.deleteNamespace(NamespacePath.of("acme/empty"))).isTrue();
    assertThat(store.deleteNamespace(NamespacePath.of("acme/empty"))).isFalse();
    assertThat(store.namespaces())
        .extracting(NamespacePath::toString)
        .doesNotContain("acme/empty", "acme/empty/leaf");
  }
}
