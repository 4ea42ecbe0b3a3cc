package io.boxline.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Partitioner;
import io.boxline.demo.Deliveries.Delivery;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The verification on made-up deliveries: what a crash may explain passes, anything else fails. One
 * customer per partition of four, so each partition's events are one customer's orders.
 */
class SubscriptionCheckTest {
  private static final int PARTITIONS = 4;
  private static final int EVENTS_PER_PARTITION = 10;
  private static final SubscriptionCheck.Crash CRASH =
      new SubscriptionCheck.Crash("a", "b", Set.of(0, 1), 2, 3); // bound 2 x 3 = 6

  /** events.get(p).get(i): the event with sequence i + 1 on partition p. */
  private final Map<Integer, List<Delivery>> events = new HashMap<>();

  private final Map<UUID, OrderPlaced> committed = new LinkedHashMap<>();
  private final Map<String, Long> lastSeq = new HashMap<>();
  private final Map<String, Integer> partitionOf = new HashMap<>();
  private String text = "";
  private long duplicates;

  SubscriptionCheckTest() {
    for (int c = 0; events.size() < PARTITIONS; c++) {
      String customer = "customer-" + c;
      int p = Partitioner.kafkaCompatible().partition(customer, PARTITIONS);
      if (events.containsKey(p)) {
        continue;
      }
      List<Delivery> list = new ArrayList<>();
      for (long seq = 1; seq <= EVENTS_PER_PARTITION; seq++) {
        OrderPlaced o = new OrderPlaced("o-" + c + "-" + seq, customer, seq, 100);
        UUID id = UUID.randomUUID();
        committed.put(id, o);
        list.add(new Delivery(id, p, seq, customer, o, 0, "?"));
      }
      events.put(p, list);
      lastSeq.put(customer, (long) EVENTS_PER_PARTITION);
      partitionOf.put(customer, p);
    }
  }

  @Test
  void exactlyOnceWithoutACrash() {
    assertThat(failures(null)).as(text).isZero();
    assertThat(failures(null, by("a", 2, 1, 10), by("b", 2, 5, 5)))
        .as("one event again, with no crash to explain it")
        .isPositive();
    assertThat(text).contains("1 duplicated");
  }

  @Test
  void survivorRedeliversWhatTheKilledMemberHadInFlight() {
    // a handled 1..7 of partition 0 and committed up to 4 when it was killed; b resumes at 5.
    assertThat(failures(CRASH, by("a", 0, 1, 7), by("b", 0, 5, 10))).as(text).isZero();
    assertThat(duplicates).isEqualTo(3);
    assertThat(text).contains("3 delivered twice", "3 on partition 0", "[0] went back once");
  }

  @Test
  void aGapFailsEvenAfterACrash() {
    assertThat(failures(CRASH, by("a", 0, 1, 4), by("b", 0, 6, 10))).isPositive();
    assertThat(text).contains("[FAIL]", "1 missing", "partition 0 delivered 6 after 4");
  }

  @Test
  void redeliveriesTheCrashCannotExplainFail() {
    assertThat(failures(CRASH, by("a", 0, 1, 10), by("b", 0, 8, 10)))
        .as("within the bound: %s", text)
        .isZero();
    assertThat(failures(CRASH, by("a", 0, 1, 10), by("a", 0, 8, 10)))
        .as("again by the killed member")
        .isPositive();
    assertThat(failures(CRASH, by("a", 2, 1, 10), by("b", 2, 8, 10)))
        .as("on a partition it did not hold")
        .isPositive();
    assertThat(failures(CRASH, by("a", 0, 1, 10), by("b", 0, 9, 10), by("b", 0, 10, 10)))
        .as("a third time")
        .isPositive();
    assertThat(failures(CRASH, by("a", 0, 1, 10), by("b", 0, 7, 10)))
        .as("4 on one partition, more than a batch of 3")
        .isPositive();
  }

  /**
   * How many checks fail for {@code parts} in this order, after every other partition's events once
   * by "b"; sets {@link #text} and {@link #duplicates}.
   */
  @SafeVarargs
  private int failures(SubscriptionCheck.Crash crash, List<Delivery>... parts) {
    Set<Integer> covered = new HashSet<>();
    List<Delivery> all = new ArrayList<>();
    for (List<Delivery> part : parts) {
      part.forEach(d -> covered.add(d.partition()));
    }
    for (int p = 0; p < PARTITIONS; p++) {
      if (!covered.contains(p)) {
        all.addAll(by("b", p, 1, EVENTS_PER_PARTITION));
      }
    }
    for (List<Delivery> part : parts) {
      all.addAll(part);
    }
    Map<Integer, Long> last = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      last.put(p, (long) EVENTS_PER_PARTITION);
    }
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    Verdicts verdicts = new Verdicts(new PrintStream(printed, true, StandardCharsets.UTF_8));
    SubscriptionCheck check =
        new SubscriptionCheck(
            new SubscriptionCheck.Ledger(committed, Set.of(), lastSeq, partitionOf, PARTITIONS),
            verdicts);
    duplicates = check.verify("billing", all, last, crash);
    text = printed.toString(StandardCharsets.UTF_8);
    return verdicts.failures().size();
  }

  /** Sequences {@code from} to {@code to} of partition {@code p}, handled by {@code member}. */
  private List<Delivery> by(String member, int p, long from, long to) {
    List<Delivery> out = new ArrayList<>();
    for (long seq = from; seq <= to; seq++) {
      Delivery d = events.get(p).get((int) seq - 1);
      out.add(new Delivery(d.id(), p, seq, d.key(), d.order(), 0, member));
    }
    return out;
  }
}
