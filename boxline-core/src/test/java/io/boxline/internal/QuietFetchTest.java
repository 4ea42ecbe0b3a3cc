package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Batch;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.Store;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A remote member whose fetch found nothing to deliver and nothing parked reads nothing on its next
 * fetches, until a log of its topics grows, a settlement or a redrive: waiting costs no statement.
 * Counted at the store's interface, every call.
 */
class QuietFetchTest {
  private static final TopicName ORDERS = TopicName.parse("acme/quiet/orders");

  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  private Boxline boxline;
  private RemoteConsumers members;
  private SubscriptionInfo sub;

  @BeforeEach
  void setUp() {
    start(true);
  }

  /**
   * A Boxline on a memory store whose every call is counted; {@code storeHears}: whether the store
   * tells it of other processes' appends (false: {@code listen} answers that it cannot).
   */
  private void start(boolean storeHears) {
    Store real = InMemoryStore.create();
    Store counted =
        (Store)
            Proxy.newProxyInstance(
                Store.class.getClassLoader(),
                new Class<?>[] {Store.class},
                (proxy, method, args) -> {
                  calls
                      .computeIfAbsent(method.getName(), k -> new AtomicInteger())
                      .incrementAndGet();
                  if (!storeHears && method.getName().equals("listen")) {
                    return false;
                  }
                  try {
                    return method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    boxline = Boxline.builder().store(counted).instanceId("quiet").build().start();
    boxline.admin().createNamespace(NamespacePath.of("acme/quiet"));
    boxline.admin().createTopic(ORDERS, 2, Sequencing.SEQUENCER);
    sub = boxline.admin().createSubscription(SubscriptionSpec.of("quiet", ORDERS));
    members = boxline.remoteConsumers();
  }

  @AfterEach
  void tearDown() {
    boxline.close();
  }

  /** The store calls made by {@code fetches} fetches of member m (background loops excluded). */
  private Map<String, Integer> callsOf(int fetches) {
    Map<String, Integer> before = snapshot();
    for (int i = 0; i < fetches; i++) {
      members.fetch(sub, "m", 1, 10);
    }
    Map<String, Integer> after = snapshot();
    after.replaceAll((k, v) -> v - before.getOrDefault(k, 0));
    after.values().removeIf(v -> v == 0);
    // The sequencer and the coordination's own loops run meanwhile; the fetch's reads are these.
    after
        .keySet()
        .retainAll(List.of("lag", "retrying", "backlogged", "read", "readEach", "parked"));
    return after;
  }

  private Map<String, Integer> snapshot() {
    Map<String, Integer> out = new ConcurrentHashMap<>();
    calls.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  private void publish(String key) {
    TextEvents.publish(boxline, ORDERS, key, "x");
  }

  /** Fetches until an event comes (the sequencer places it a moment after the commit). */
  private Batch fetchUntilDelivered() {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < until) {
      Batch b = members.fetch(sub, "m", 1, 10);
      if (!b.deliveries().isEmpty()) {
        return b;
      }
      boxline.remoteConsumers().awaitAppend(ORDERS, Duration.ofMillis(100)).join();
    }
    throw new AssertionError("no event delivered within 10 s");
  }

  @Test
  void aFetchAfterOneThatFoundNothingReadsNothingUntilTheLogGrows() {
    members.fetch(sub, "m", 1, 10);
    assertThat(callsOf(5)).as("five fetches of a member with nothing to take").isEmpty();

    publish("k1");
    Batch got = fetchUntilDelivered();
    assertThat(got.deliveries()).hasSize(1);
    assertThat(callsOf(1)).as("a fetch with an event unsettled reads").isNotEmpty();

    members.settle(sub, "m", List.of(Settlement.done(got.deliveries().get(0).ackId())));
    assertThat(callsOf(1)).as("the first fetch after a settle reads").isNotEmpty();
    // The sequencer's notice of the append may reach the member after it read the event; that
    // notice costs one more read. Then it is quiet again.
    for (int i = 0; i < 3 && !callsOf(1).isEmpty(); i++) {}
    assertThat(callsOf(5)).as("caught up again, holding a partition").isEmpty();
    assertThat(members.fetch(sub, "m", 1, 10).partitions())
        .as("the quiet answer names the partition held")
        .isEqualTo(got.partitions())
        .isNotEmpty();
  }

  @Test
  void aRetrySettledFallsDueAndIsDeliveredThoughTheFetchesBeforeFoundNothing() {
    members.fetch(sub, "m", 1, 10);
    publish("k1");
    Batch got = fetchUntilDelivered();
    members.settle(
        sub,
        "m",
        List.of(
            new Settlement(
                got.deliveries().get(0).ackId(),
                RemoteConsumers.Outcome.RETRY,
                Duration.ofMillis(200),
                "not yet")));
    Batch retried = fetchUntilDelivered();
    assertThat(retried.deliveries().get(0).attempt()).isEqualTo(2);
  }

  /**
   * Without the store's wake-ups an append of another process would go unheard: every fetch reads,
   * as docs/architecture.md says.
   */
  @Test
  void withoutTheStoresWakeUpsEveryFetchReads() {
    boxline.close();
    start(false);
    assertThat(members.hearsEveryAppend()).isFalse();
    members.fetch(sub, "m", 1, 10);
    assertThat(callsOf(3)).as("three fetches of a member with nothing to take").isNotEmpty();
  }

  @Test
  void aLeaveEndsTheQuietAnswers() {
    members.fetch(sub, "m", 1, 10);
    assertThat(callsOf(2)).isEmpty();
    members.leave(sub.name(), "m");
    assertThat(callsOf(1)).as("after a leave the fetch checks in and reads").isNotEmpty();
  }
}
