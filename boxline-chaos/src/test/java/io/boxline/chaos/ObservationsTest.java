package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The checker's own arithmetic catches what it must: lost, invented, out of order, repeated. */
class ObservationsTest {
  private final EventIndex index = new EventIndex(4);
  private final UUID a = ChaosNames.eventId("order-1", 0);
  private final UUID b = ChaosNames.eventId("order-1", 1);
  private final UUID c = ChaosNames.eventId("order-2", 0);
  private final UUID poison = ChaosNames.eventId("order-3", 0);

  ObservationsTest() {
    index.add(a, "orders|k", 1, 1, 0, false);
    index.add(b, "orders|k", 1, 1, 1, false);
    index.add(c, "orders|k", 2, 1, 0, false);
    index.add(poison, "orders|j", 1, 2, 0, true);
    index.logged(index.indexOf(a), 0, 1);
    index.logged(index.indexOf(b), 0, 2);
    index.logged(index.indexOf(c), 0, 3);
    index.logged(index.indexOf(poison), 1, 1);
  }

  @Test
  void inOrderOnceEachIsClean() {
    Observations o = new Observations("s", index, false);
    o.observe(a, 1);
    o.observe(poison, 2);
    o.observe(b, 3);
    o.observe(c, 4);
    assertThat(new long[] {o.missing(), o.unknown(), o.duplicates(), o.orderViolations()})
        .containsExactly(0, 0, 0, 0);
    assertThat(index.logOrderViolations()).isZero();
  }

  @Test
  void aRedeliveryAfterLaterEventsIsADuplicateNotAnOrderViolation() {
    Observations o = new Observations("s", index, false);
    o.observe(a, 1);
    o.observe(b, 2);
    o.observe(a, 3);
    o.observe(b, 4);
    o.observe(c, 5);
    assertThat(o.duplicates()).isEqualTo(2);
    assertThat(o.orderViolations()).isZero();
    assertThat(o.missing()).isEqualTo(1); // the poison event never came
  }

  @Test
  void aKeysEventFirstSeenBeforeItsPredecessorIsAViolation() {
    Observations o = new Observations("s", index, false);
    o.observe(b, 1);
    o.observe(a, 2);
    o.observe(c, 3);
    o.observe(UUID.randomUUID(), 4);
    assertThat(o.orderViolations()).isEqualTo(1);
    assertThat(o.unknown()).isEqualTo(1);
  }

  @Test
  void retriedPoisonAttemptsAreNotDuplicatesWhereTheyAreRetried() {
    Observations retried = new Observations("deliveries", index, true);
    Observations plain = new Observations("effects", index, false);
    for (Observations o : new Observations[] {retried, plain}) {
      o.observe(poison, 1);
      o.observe(poison, 2);
    }
    assertThat(retried.duplicates()).isZero();
    assertThat(plain.duplicates()).isEqualTo(1);
  }

  @Test
  void aLogOutOfPublishOrderIsCaught() {
    EventIndex swapped = new EventIndex(2);
    swapped.add(a, "orders|k", 1, 1, 0, false);
    swapped.add(b, "orders|k", 1, 2, 0, false);
    swapped.logged(swapped.indexOf(a), 0, 2);
    swapped.logged(swapped.indexOf(b), 0, 1);
    assertThat(swapped.logOrderViolations()).isEqualTo(1);
  }
}
