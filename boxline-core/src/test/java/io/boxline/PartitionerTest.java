package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.internal.Murmur2;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PartitionerTest {
  @Test
  void murmur2MatchesKafkasOwnTestVectors() {
    Map<String, Integer> vectors =
        Map.of(
            "21", -973932308,
            "foobar", -790332482,
            "a-little-bit-long-string", -985981536,
            "a-little-bit-longer-string", -1486304829,
            "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971,
            "abc", 479470107);
    vectors.forEach(
        (key, hash) ->
            assertThat(Murmur2.hash(key.getBytes(StandardCharsets.UTF_8))).as(key).isEqualTo(hash));
  }

  @Test
  void partitionIsKafkasToPositiveModuloCount() {
    Partitioner p = Partitioner.kafkaCompatible();
    assertThat(p.partition("21", 7)).isEqualTo((-973932308 & 0x7fffffff) % 7);
    for (int i = 0; i < 1000; i++) {
      assertThat(p.partition("key-" + i, 13)).isBetween(0, 12);
      assertThat(p.partition("key-" + i, 13)).isEqualTo(p.partition("key-" + i, 13));
    }
  }
}
