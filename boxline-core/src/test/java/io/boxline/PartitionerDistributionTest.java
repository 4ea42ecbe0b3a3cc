package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What {@link Partitioner#kafkaCompatible()} promises for every partition count a topic is likely
 * to have (1 to 100): each partition gets keys, the spread over 100,000 keys is even within a
 * stated bound, and a key lands on the partition Kafka's default partitioner picks for it.
 */
class PartitionerDistributionTest {
  private static final int KEYS = 100_000;

  /**
   * Largest share by which a partition's key count may differ from the mean: 20 %. For 100
   * partitions (mean 1,000 keys) that is over six standard deviations of a uniform spread.
   */
  private static final double BOUND = 0.20;

  /**
   * Kafka's own murmur2 vectors (org.apache.kafka.common.utils.UtilsTest), written down here so the
   * expected partitions do not come from Boxline's hash.
   */
  private static final Map<String, Integer> KAFKA_HASHES =
      Map.of(
          "21", -973932308,
          "foobar", -790332482,
          "a-little-bit-long-string", -985981536,
          "a-little-bit-longer-string", -1486304829,
          "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971,
          "abc", 479470107);

  static java.util.stream.IntStream partitionCounts() {
    return java.util.stream.IntStream.rangeClosed(1, 100);
  }

  @ParameterizedTest(name = "{0} partitions")
  @MethodSource("partitionCounts")
  void everyPartitionGetsKeysAndTheSpreadIsEven(int partitions) {
    Partitioner p = Partitioner.kafkaCompatible();
    int[] counts = new int[partitions];
    for (int i = 0; i < KEYS; i++) {
      int at = p.partition("customer-" + i, partitions);
      assertThat(at).isBetween(0, partitions - 1);
      counts[at]++;
    }
    double mean = (double) KEYS / partitions;
    for (int q = 0; q < partitions; q++) {
      assertThat(counts[q])
          .as("keys on partition %d of %d (mean %.1f)", q, partitions, mean)
          .isPositive()
          .isBetween((int) Math.floor(mean * (1 - BOUND)), (int) Math.ceil(mean * (1 + BOUND)));
    }
  }

  @ParameterizedTest(name = "{0} partitions")
  @MethodSource("partitionCounts")
  void knownKeysLandWhereKafkaPutsThem(int partitions) {
    Partitioner p = Partitioner.kafkaCompatible();
    KAFKA_HASHES.forEach(
        (key, hash) ->
            assertThat(p.partition(key, partitions))
                .as("%s over %d partitions", key, partitions)
                // Kafka: Utils.toPositive(Utils.murmur2(keyBytes)) % numPartitions
                .isEqualTo((hash & 0x7fffffff) % partitions));
  }

  @ParameterizedTest(name = "{0} partitions")
  @MethodSource("partitionCounts")
  void theSameKeyAlwaysLandsOnTheSamePartition(int partitions) {
    Partitioner first = Partitioner.kafkaCompatible();
    Partitioner second = Partitioner.kafkaCompatible();
    for (int i = 0; i < 1_000; i++) {
      String key = "order-" + i;
      assertThat(second.partition(key, partitions)).isEqualTo(first.partition(key, partitions));
    }
  }
}
