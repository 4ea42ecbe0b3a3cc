package io.boxline.bench;

import io.boxline.Consumer;
import io.boxline.Partitioner;
import io.boxline.TopicName;
import java.util.ArrayList;
import java.util.List;

/**
 * What the consumer-group workloads (G1–G3) share beyond {@link GfKit}: their topic, keys, and
 * closing consumers.
 */
final class GroupFixture {
  static final TopicName TOPIC = TopicName.of("bench", "events");

  private GroupFixture() {}

  /** Closes consumers in parallel (each close waits for its own in-flight batch). */
  static void closeAll(List<Consumer> consumers) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (Consumer c : consumers) {
      Thread t = new Thread(c::close, "close-" + c.id());
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
  }

  /** A key for every partition of the topic: keys[p] lands in partition p. */
  static String[] keysPerPartition(int partitions) {
    String[] keys = new String[partitions];
    Partitioner p = Partitioner.kafkaCompatible();
    int found = 0;
    for (int i = 0; found < partitions; i++) {
      String k = "key-" + i;
      int part = p.partition(k, partitions);
      if (keys[part] == null) {
        keys[part] = k;
        found++;
      }
    }
    return keys;
  }
}
