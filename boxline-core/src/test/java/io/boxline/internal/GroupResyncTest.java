package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.Store;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A member's full check-in that fails (here: its read of the backlog) is followed by a full one,
 * not by ordinary check-ins that leave the backlog unread until the periodic resync.
 */
class GroupResyncTest {
  private static final TopicName ORDERS = TopicName.parse("acme/resync/orders");
  private static final String M1_THREAD = "boxline-group-m1";

  private final AtomicInteger failNext = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final AtomicInteger m1Reads = new AtomicInteger();
  private Boxline boxline;

  @AfterEach
  void tearDown() {
    if (boxline != null) {
      boxline.close();
    }
  }

  /** The memory store, with member m1's reads of the backlog counted, and failed on demand. */
  private Store store() {
    Store real = InMemoryStore.create();
    return (Store)
        Proxy.newProxyInstance(
            Store.class.getClassLoader(),
            new Class<?>[] {Store.class},
            (proxy, method, args) -> {
              if (method.getName().equals("backlogged")
                  && Thread.currentThread().getName().equals(M1_THREAD)) {
                if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                  failed.incrementAndGet();
                  throw new IllegalStateException("injected: the database did not answer");
                }
                m1Reads.incrementAndGet();
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private static void await(String what, long seconds, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + seconds + " s: " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void aFullCheckInThatFailedIsMadeAgainAtOnce() throws Exception {
    boxline = Boxline.builder().store(store()).instanceId("resync").build().start();
    boxline.admin().createNamespace(NamespacePath.of("acme/resync"));
    boxline.admin().createTopic(ORDERS, 2, io.boxline.Sequencing.SEQUENCER);
    boxline.admin().createSubscription(SubscriptionSpec.of("resync", ORDERS));
    try (Consumer m1 = boxline.consumer("resync").id("m1").handler(e -> {}).start()) {
      await("m1's first check-in to read the backlog", 30, () -> m1Reads.get() > 0);
      failNext.set(1);
      // A second member changes the group's shape: m1's next check-in is a full one, and fails.
      try (Consumer m2 = boxline.consumer("resync").id("m2").handler(e -> {}).start()) {
        await("m1's full check-in to fail", 30, () -> failed.get() == 1);
        int before = m1Reads.get();
        // Check-ins are at least 2 s apart and the periodic resync comes every tenth: 10 s is
        // far less than that, and far more than the 0.1 s back-off after a failure.
        await("m1 to read the backlog again", 10, () -> m1Reads.get() > before);
      }
    }
  }
}
