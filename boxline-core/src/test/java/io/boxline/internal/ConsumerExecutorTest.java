package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.internal.memory.InMemoryStore;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A consumer on the application's executor, and its two shutdown timeouts: the graceful one, then
 * the hard one for handlers it interrupted.
 */
class ConsumerExecutorTest {
  private static final TopicName ORDERS = TopicName.of("acme/exec", "orders");

  private Boxline boxline;
  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    boxline = Boxline.builder().store(InMemoryStore.create()).instanceId("exec").build().start();
    boxline.admin().createNamespace(NamespacePath.of("acme/exec"));
    boxline.admin().createTopic(ORDERS, 4, io.boxline.Sequencing.SEQUENCER);
    boxline.admin().createSubscription(SubscriptionSpec.of("exec", ORDERS));
    AtomicInteger n = new AtomicInteger();
    pool = Executors.newFixedThreadPool(3, r -> new Thread(r, "app-pool-" + n.incrementAndGet()));
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    boxline.close();
    pool.shutdownNow();
    assertThat(pool.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void handlersRunOnTheApplicationsExecutorWhichTheConsumerDoesNotShutDown() {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    AtomicInteger handled = new AtomicInteger();
    for (int i = 0; i < 40; i++) {
      TextEvents.publish(boxline, ORDERS, "k" + i, "e" + i);
    }
    try (Consumer c =
        boxline
            .consumer("exec")
            .executor(pool)
            .handler(
                e -> {
                  threads.add(Thread.currentThread().getName());
                  handled.incrementAndGet();
                })
            .start()) {
      Waits.until("40 events handled", () -> handled.get() >= 40);
    }
    assertThat(threads).isNotEmpty().allMatch(t -> t.startsWith("app-pool-"));
    assertThat(pool.isShutdown()).as("the executor is the application's").isFalse();
  }

  @Test
  void afterTheShutdownTimeoutHandlersAreInterruptedAndGetTheHardTimeout() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicInteger calls = new AtomicInteger();
    TextEvents.publish(boxline, ORDERS, "k", "slow");
    Consumer c =
        boxline
            .consumer("exec")
            .executor(pool)
            .shutdownTimeout(Duration.ofMillis(100))
            .hardShutdownTimeout(Duration.ofSeconds(30))
            .handler(
                e -> {
                  calls.incrementAndGet();
                  started.countDown();
                  try {
                    new CountDownLatch(1).await(); // until interrupted
                  } catch (InterruptedException stop) {
                    interrupted.set(true);
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted");
                  }
                })
            .start();
    assertThat(started.await(5, TimeUnit.SECONDS)).as("the handler started").isTrue();
    c.close();
    assertThat(interrupted).as("interrupted once the shutdown timeout passed").isTrue();

    // Abandoned, not settled: the event is delivered again to the next consumer.
    AtomicInteger again = new AtomicInteger();
    try (Consumer next = boxline.consumer("exec").handler(e -> again.incrementAndGet()).start()) {
      Waits.until("the abandoned event delivered again", () -> again.get() == 1);
    }
    assertThat(calls).hasValue(1);
  }

  @Test
  void settingsAreChecked() {
    assertThatThrownBy(() -> boxline.consumer("exec").executor(null))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("executor must not be null");
    assertThatThrownBy(() -> boxline.consumer("exec").hardShutdownTimeout(Duration.ofSeconds(-1)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("hardShutdownTimeout must be zero or positive");
  }
}
