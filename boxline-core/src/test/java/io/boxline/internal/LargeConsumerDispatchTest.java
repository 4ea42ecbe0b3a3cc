package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer holding more than {@link DefaultConsumer#LARGE_CONSUMER_PARTITIONS} partitions, whose
 * dispatcher takes named partitions between full walks: every event is handled, each key in order,
 * a failed event is retried on time, events arriving after the first burst are taken too.
 */
class LargeConsumerDispatchTest {
  private static final TopicName T = TopicName.of("acme/large", "events");
  private static final int PARTITIONS = DefaultConsumer.LARGE_CONSUMER_PARTITIONS * 2;

  private final Boxline boxline =
      Boxline.builder().store(InMemoryStore.create()).instanceId("large").build().start();

  @AfterEach
  void close() {
    boxline.close();
  }

  @Test
  void everyEventOfManyPartitionsIsHandledInKeyOrderAndARetryComesOnTime() {
    boxline.admin().createNamespace(NamespacePath.of("acme/large"));
    boxline.admin().createTopic(T, PARTITIONS, io.boxline.Sequencing.SEQUENCER);
    boxline.admin().createSubscription(SubscriptionSpec.of("large", T));
    Map<String, List<Integer>> byKey = new ConcurrentHashMap<>();
    Map<String, Integer> failedOnce = new ConcurrentHashMap<>();
    List<Event> handled = new CopyOnWriteArrayList<>();
    try (Consumer c =
        boxline
            .consumer("large")
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(40))
                    .inPlaceAttempts(1)
                    .maxAttempts(5)
                    .jitter(0))
            .handler(
                e -> {
                  String body = new String(e.payload(), StandardCharsets.UTF_8);
                  int n = Integer.parseInt(body);
                  if (n % 997 == 0 && failedOnce.putIfAbsent(e.key(), n) == null) {
                    throw new IllegalStateException("first attempt of " + n + " fails");
                  }
                  byKey.computeIfAbsent(e.key(), k -> new CopyOnWriteArrayList<>()).add(n);
                  handled.add(e);
                })
            .start()) {
      publish(0, 3_000);
      Waits.until("3,000 events handled", () -> handled.size() >= 3_000);
      assertThat(c.assignedPartitions().size())
          .as("partitions held: more than a small consumer's")
          .isGreaterThan(DefaultConsumer.LARGE_CONSUMER_PARTITIONS);
      // After the burst, with every partition held and idle: a few events more are taken too.
      publish(3_000, 3_020);
      Waits.until("3,020 events handled", () -> handled.size() >= 3_020);
    }
    assertThat(handled).hasSize(3_020);
    for (Map.Entry<String, List<Integer>> e : byKey.entrySet()) {
      assertThat(e.getValue()).as("key " + e.getKey()).isSorted();
    }
    assertThat(failedOnce).as("keys whose event failed once, then came again").isNotEmpty();
  }

  private void publish(int from, int to) {
    List<Object> batch = new ArrayList<>();
    for (int i = from; i < to; i++) {
      batch.add(
          io.boxline.OutgoingEvent.builder(T)
              .type("t")
              .key("k" + (i % 2500))
              .payload(String.valueOf(i).getBytes(StandardCharsets.UTF_8))
              .build());
      if (batch.size() == 100 || i == to - 1) {
        List<Object> b = List.copyOf(batch);
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, b));
        batch.clear();
      }
    }
  }
}
