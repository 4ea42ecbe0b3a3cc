package io.boxline.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.StoreException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SequencePlanTest {
  private static final PartitionAssigner BY_KEY_LENGTH = (topic, key) -> key.length() % 2;

  @Test
  void numbersRowsGapFreeInOutboxOrderPerPartition() {
    SequencePlan plan = new SequencePlan(BY_KEY_LENGTH);
    assertThat(plan.add(7, -1, "a")).isEqualTo(1); // assigned
    assertThat(plan.add(7, -1, "bb")).isEqualTo(0);
    assertThat(plan.add(7, 1, "ccc")).isEqualTo(1); // its own
    assertThat(plan.add(3, 0, null)).isEqualTo(0);
    assertThat(plan.add(7, -1, "d")).isEqualTo(1);

    assertThat(plan.partitions())
        .containsExactly(PartitionKey.of(3, 0), PartitionKey.of(7, 0), PartitionKey.of(7, 1));
    assertThat(plan.count(PartitionKey.of(7, 1))).isEqualTo(3);

    plan.numberAfter(
        Map.of(PartitionKey.of(3, 0), 0L, PartitionKey.of(7, 0), 41L, PartitionKey.of(7, 1), 9L));
    assertThat(new long[] {plan.sequence(0), plan.sequence(2), plan.sequence(4)})
        .containsExactly(10, 11, 12);
    assertThat(plan.sequence(1)).isEqualTo(42);
    assertThat(plan.sequence(3)).isEqualTo(1);
    assertThat(plan.heads())
        .containsExactly(
            new PartitionHead(3, 0, 1), new PartitionHead(7, 0, 42), new PartitionHead(7, 1, 12));
  }

  @Test
  void numbersFromTheLastSequencesAfterTheBatch() {
    SequencePlan plan = new SequencePlan(BY_KEY_LENGTH);
    plan.add(1, 0, "x");
    plan.add(1, 0, "y");
    plan.numberUpTo(Map.of(PartitionKey.of(1, 0), 20L));
    assertThat(new long[] {plan.sequence(0), plan.sequence(1)}).containsExactly(19, 20);
  }

  @Test
  void aPartitionTheStoreDoesNotKnowStopsTheBatch() {
    SequencePlan plan = new SequencePlan(BY_KEY_LENGTH);
    plan.add(1, 5, "x");
    assertThatThrownBy(() -> plan.numberAfter(Map.of()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("partition that does not exist")
        .hasMessageContaining("topicId=1");
    assertThatThrownBy(() -> plan.sequence(0)).isInstanceOf(IllegalStateException.class);
  }
}
