package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code ConsumerBuilder.executor(Executors.newVirtualThreadPerTaskExecutor())} on JDK 21+: every
 * handler call runs on a virtual thread, a partition's events stay in order, and closing the
 * consumer leaves the executor to the application. The build targets 17, so the JDK 21 API is
 * reached by reflection; this class runs in its own surefire execution on a JDK 21+ (see
 * boxline-core's pom) and fails on an older one.
 */
class VirtualThreadExecutorTest {
  private static final TopicName ORDERS = TopicName.of("acme/vt", "orders");

  @Test
  void handlersRunOnVirtualThreadsInPartitionOrder() throws Exception {
    assertThat(Runtime.version().feature())
        .as(
            "this test needs JDK 21+ (run by the virtual-threads execution with"
                + " -Dboxline.jdk21.java=/path/to/jdk21+/bin/java)")
        .isGreaterThanOrEqualTo(21);
    ExecutorService virtual =
        (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    Method isVirtual = Thread.class.getMethod("isVirtual");
    try (Boxline boxline =
        Boxline.builder().store(InMemoryStore.create()).instanceId("vt").build().start()) {
      boxline.admin().createNamespace(NamespacePath.of("acme/vt"));
      boxline.admin().createTopic(ORDERS, 4, io.boxline.Sequencing.SEQUENCER);
      boxline.admin().createSubscription(SubscriptionSpec.of("vt", ORDERS));
      for (int i = 0; i < 200; i++) {
        TextEvents.publish(boxline, ORDERS, "k" + (i % 10), String.valueOf(i));
      }
      AtomicInteger handled = new AtomicInteger();
      AtomicInteger onPlatformThreads = new AtomicInteger();
      Map<String, Integer> lastPerKey = new ConcurrentHashMap<>();
      AtomicInteger outOfOrder = new AtomicInteger();
      try (Consumer c =
          boxline
              .consumer("vt")
              .executor(virtual)
              .concurrency(4)
              .handler(
                  e -> {
                    try {
                      if (!(Boolean) isVirtual.invoke(Thread.currentThread())) {
                        onPlatformThreads.incrementAndGet();
                      }
                    } catch (ReflectiveOperationException x) {
                      throw new IllegalStateException(x);
                    }
                    int n = Integer.parseInt(new String(e.payload()));
                    Integer before = lastPerKey.put(e.key(), n);
                    if (before != null && before > n) {
                      outOfOrder.incrementAndGet();
                    }
                    handled.incrementAndGet();
                  })
              .start()) {
        Waits.until("200 events handled", () -> handled.get() >= 200);
      }
      assertThat(onPlatformThreads.get()).as("handler calls on platform threads").isZero();
      assertThat(outOfOrder.get()).as("events of a key out of order").isZero();
      assertThat(virtual.isShutdown()).as("the executor is the application's").isFalse();
    } finally {
      virtual.shutdownNow();
    }
  }
}
