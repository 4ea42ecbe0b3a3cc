package io.boxline.testkit.suite.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.DeadLetterReason;
import io.boxline.EventPosition;
import io.boxline.RetryingEvent;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.ParkingStore;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.testkit.suite.SuiteSupport;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link ParkingStore}, method by method: parked events and the keys they block, retries falling
 * due and resolved, the failure counts and the dead letters.
 */
public abstract class ParkingContract extends StoreContract {
  /** When {@link #parkTwoOfKeyK()}'s parked events were due; five seconds before the test. */
  private final Instant past = Instant.now().minusSeconds(5);

  private PartitionKey p0;

  @Nested
  class Parked {
    @Test
    void aParkedEventBlocksItsKey() {
      parkTwoOfKeyK();
      ParkedSummary summary = store.parked(sub.id(), p0, false);
      assertThat(summary.blockedKeys()).containsExactly("k");
      assertThat(summary.nextDue()).isNotNull();
    }
  }

  @Nested
  class DueParked {
    @Test
    void parkedEventsAreDueInOrderByTheCallersClock() {
      parkTwoOfKeyK();
      assertThat(store.dueParked(sub.id(), p0, false, past.minusSeconds(1), 10))
          .as("nothing is due before its next attempt, by the caller's clock")
          .isEmpty();
      List<ParkedEvent> due = store.dueParked(sub.id(), p0, false, Instant.now(), 10);
      assertThat(due).extracting(pe -> pe.event().sequence()).containsExactly(1L);
      assertThat(due.get(0).attempts()).isEqualTo(1);
    }
  }

  @Nested
  class ResolveParked {
    @Test
    void resolvesWithTheCurrentEpochOnlyAndTheNextOfTheKeyFallsDue() {
      parkTwoOfKeyK();
      assertThat(store.resolveParked(sub.id(), p0, 1, 0, Resolution.done()))
          .as("a stale epoch records nothing")
          .isFalse();
      assertThat(store.resolveParked(sub.id(), p0, 1, 1, Resolution.done())).isTrue();
      assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10))
          .as("the next of the key is due once the one before it is done")
          .extracting(pe -> pe.event().sequence())
          .containsExactly(2L);
      assertThat(store.resolveParked(sub.id(), p0, 2, 1, gaveUp())).isTrue();
      assertThat(store.parked(sub.id(), p0, false).blockedKeys()).isEmpty();
      assertThat(store.parked(sub.id(), p0, true).blockedKeys())
          .as("a dead letter blocks its key when dead letters block")
          .containsExactly("k");
    }
  }

  @Nested
  class DeadLetters {
    @Test
    void anEventResolvedDeadIsADeadLetter() {
      List<OutboxRecord> records = parkTwoOfKeyK();
      resolveFirstDoneSecondDead();
      assertThat(store.deadLetters(sub.id(), DeadLetterQuery.of("billing")))
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.event().id()).isEqualTo(records.get(1).eventId());
                assertThat(d.lastError()).isEqualTo("gave up");
                assertThat(d.attempts()).isEqualTo(3);
              });
    }

    @Test
    void pagesContinuePastAPosition() {
      parkRetryingWaitingAndDead();
      assertThat(
              store.deadLetters(
                  sub.id(),
                  DeadLetterQuery.of("billing").after(new EventPosition(orders.name(), 0, 2))))
          .extracting(d -> d.event().sequence())
          .containsExactly(3L);
      assertThat(
              store.deadLetters(
                  sub.id(),
                  DeadLetterQuery.of("billing").after(new EventPosition(orders.name(), 0, 3))))
          .isEmpty();
    }
  }

  @Nested
  class DeadLetterReasons {
    @Test
    void groupDeadLettersByTheirLastErrorLargestFirst() {
      List<OutboxRecord> records = sequenced("a", "b", "c");
      parkAll(
          sub,
          p0(),
          3,
          dead(1, records.get(0), "boom"),
          dead(2, records.get(1), "timeout"),
          dead(3, records.get(2), "boom"));
      assertThat(store.deadLetterReasons(sub.id(), 10))
          .extracting(DeadLetterReason::reason, DeadLetterReason::count)
          .containsExactly(tuple("boom", 2L), tuple("timeout", 1L));
      assertThat(store.deadLetterReasons(sub.id(), 1)).hasSize(1);
    }
  }

  @Nested
  class RedriveDeadLetters {
    @Test
    void aRedrivenDeadLetterIsDueAgain() {
      parkTwoOfKeyK();
      resolveFirstDoneSecondDead();
      assertThat(store.redriveDeadLetters(sub.id(), DeadLetterQuery.of("billing"))).isEqualTo(1);
      assertThat(store.deadLetters(sub.id(), DeadLetterQuery.of("billing"))).isEmpty();
      assertThat(store.dueParked(sub.id(), p0, false, Instant.now(), 10))
          .extracting(pe -> pe.event().sequence())
          .containsExactly(2L);
    }
  }

  @Nested
  class FailureCounts {
    @Test
    void countRetryingWaitingAndDeadEvents() {
      parkRetryingWaitingAndDead();
      assertThat(store.failureCounts())
          .containsExactly(new io.boxline.FailureCounts("billing", 1, 1, 1));
    }
  }

  @Nested
  class Retrying {
    @Test
    void listsRetryingAndWaitingEventsInLogOrderPageByPage() {
      List<OutboxRecord> records = parkRetryingWaitingAndDead();
      assertThat(store.retrying(sub.id(), "billing", null, 10))
          .extracting(
              r -> r.event().sequence(),
              RetryingEvent::behindItsKey,
              RetryingEvent::attempts,
              RetryingEvent::lastError)
          .containsExactly(tuple(1L, false, 1, "boom"), tuple(2L, true, 0, null));
      assertThat(store.retrying(sub.id(), "billing", null, 10).get(0).event().id())
          .isEqualTo(records.get(0).eventId());
      assertThat(store.retrying(sub.id(), "billing", null, 1)).hasSize(1);
      // Pages continue past the previous page's last position, in log order.
      EventPosition first =
          EventPosition.of(store.retrying(sub.id(), "billing", null, 1).get(0).event());
      assertThat(store.retrying(sub.id(), "billing", first, 10))
          .extracting(r -> r.event().sequence())
          .containsExactly(2L);
      assertThat(store.retrying(sub.id(), "billing", new EventPosition(orders.name(), 0, 2), 10))
          .isEmpty();
    }
  }

  @Nested
  class DiscardDeadLetters {
    @Test
    void discardsExactlyWhatEachFilterAndTheLimitSelect() {
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
  }

  // ------------------------------------------------------------------ helpers

  private PartitionKey p0() {
    return PartitionKey.of(orders.id(), 0);
  }

  /**
   * Events 1 and 2 of key "k" and 3 of key "z" on orders' partition 0, billing's cursor past them
   * with epoch 1: 1 parked to retry (attempted once, due since {@link #past}), 2 waiting behind it.
   */
  private List<OutboxRecord> parkTwoOfKeyK() {
    List<OutboxRecord> records = sequenced("k", "k", "z");
    p0 = p0();
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
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
    return records;
  }

  private static Resolution gaveUp() {
    return new Resolution(Resolution.Kind.DEAD, 3, Instant.now(), "gave up");
  }

  /** After {@link #parkTwoOfKeyK()}: 1 is done, 2 is dead. */
  private void resolveFirstDoneSecondDead() {
    assertThat(store.resolveParked(sub.id(), p0, 1, 1, Resolution.done())).isTrue();
    assertThat(store.resolveParked(sub.id(), p0, 2, 1, gaveUp())).isTrue();
  }

  /**
   * Events 1 and 2 of key "k" and 3 of key "z" on orders' partition 0, all parked a minute ahead: 1
   * to retry, 2 waiting behind it, 3 dead.
   */
  private List<OutboxRecord> parkRetryingWaitingAndDead() {
    List<OutboxRecord> records = sequenced("k", "k", "z");
    p0 = p0();
    SuiteSupport.fence(store, sub.id(), List.of(p0), new long[] {1}, "me");
    Instant later = Instant.now().plusSeconds(60);
    List<Park> parks =
        List.of(
            new Park(1, records.get(0).eventId(), "k", "t", ParkState.RETRY, 1, later, "boom"),
            new Park(2, records.get(1).eventId(), "k", "t", ParkState.WAITING, 0, later, null),
            new Park(3, records.get(2).eventId(), "z", "t", ParkState.DEAD, 3, later, "gave up"));
    assertThat(SuiteSupport.settle(store, sub.id(), p0, 0, 3, 1, parks))
        .isEqualTo(CommitOutcome.COMMITTED);
    return records;
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
}
