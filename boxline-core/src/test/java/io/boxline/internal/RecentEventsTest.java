package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.spi.PartitionKey;
import io.boxline.spi.StoredEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The hand-over tail: only wanted topics, contiguous runs, bounded per partition and in bytes. */
class RecentEventsTest {
  private static final PartitionKey P = PartitionKey.of(7, 0);

  @Test
  void keepsOnlyTopicsThatALocalConsumerReads() {
    RecentEvents recent = new RecentEvents();
    assertThat(recent.wanted()).isFalse();
    recent.add(Map.of(P, events(1, 3, 10)));
    assertThat(recent.after(P, 0, 100)).isNull();

    recent.register(Set.of(7L));
    assertThat(recent.wanted()).isTrue();
    recent.add(Map.of(P, events(1, 3, 10)));
    assertThat(sequences(recent.after(P, 0, 100))).containsExactly(1L, 2L, 3L);

    recent.unregister(Set.of(7L));
    assertThat(recent.wanted()).isFalse();
    assertThat(recent.after(P, 0, 100)).isNull();
  }

  @Test
  void handsOverOnlyARunThatStartsRightAfterTheCursor() {
    RecentEvents recent = new RecentEvents();
    recent.register(Set.of(7L));
    recent.add(Map.of(P, events(5, 8, 10)));
    assertThat(recent.after(P, 3, 100)).as("sequence 4 is not here").isNull();
    assertThat(sequences(recent.after(P, 4, 100))).containsExactly(5L, 6L, 7L, 8L);
    assertThat(sequences(recent.after(P, 6, 1))).containsExactly(7L);
    assertThat(recent.after(P, 8, 100)).as("nothing after the newest").isNull();

    recent.add(Map.of(P, events(12, 12, 10))); // not a continuation: the tail starts over
    assertThat(recent.after(P, 4, 100)).isNull();
    assertThat(sequences(recent.after(P, 11, 100))).containsExactly(12L);
    assertThat(recent.hits.get()).isEqualTo(3);
    assertThat(recent.misses.get()).isEqualTo(3);
  }

  @Test
  void keepsAtMostTheNewestPerPartitionAndDropsEverythingOverTheByteBudget() {
    RecentEvents recent = new RecentEvents();
    recent.register(Set.of(7L));
    recent.add(Map.of(P, events(1, RecentEvents.PER_PARTITION + 10, 10)));
    assertThat(recent.after(P, 9, 1)).as("the oldest ten were dropped").isNull();
    assertThat(sequences(recent.after(P, 10, 1))).containsExactly(11L);
    assertThat(sequences(recent.after(P, 10 + RecentEvents.PER_PARTITION - 1, 100)))
        .containsExactly(10L + RecentEvents.PER_PARTITION);

    int big = (int) (RecentEvents.MAX_BYTES / 4);
    recent.add(
        Map.of(P, events(RecentEvents.PER_PARTITION + 11, RecentEvents.PER_PARTITION + 15, big)));
    assertThat(recent.after(P, RecentEvents.PER_PARTITION + 10, 100))
        .as("over the byte budget everything is dropped")
        .isNull();
  }

  private static List<StoredEvent> events(long from, long to, int payloadBytes) {
    List<StoredEvent> out = new ArrayList<>();
    for (long s = from; s <= to; s++) {
      out.add(
          new StoredEvent(
              UUID.randomUUID(),
              s,
              "k",
              "t",
              "test",
              "application/octet-stream",
              new byte[payloadBytes],
              Map.of(),
              Instant.EPOCH,
              null));
    }
    return out;
  }

  private static List<Long> sequences(List<StoredEvent> events) {
    assertThat(events).isNotNull();
    return events.stream().map(StoredEvent::sequence).toList();
  }
}
