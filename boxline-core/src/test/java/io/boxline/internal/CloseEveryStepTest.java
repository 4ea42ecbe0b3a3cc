package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.internal.memory.InMemoryStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.Store;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link Boxline#close()} runs every step when one fails, and reports every failure. */
class CloseEveryStepTest {

  /** {@code real}, except that its close also fails (after doing its work) with {@code message}. */
  @SuppressWarnings("unchecked")
  private static <T> T failingClose(Class<T> type, T real, AtomicBoolean closed, String message) {
    return (T)
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (proxy, method, args) -> {
              try {
                Object result = method.invoke(real, args);
                if (method.getName().equals("close") && method.getParameterCount() == 0) {
                  closed.set(true);
                  throw new IllegalStateException(message);
                }
                return result;
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void aFailingStepDoesNotLeaveTheLaterOnesUndone() throws InterruptedException {
    Clock clock = Clock.systemUTC();
    InMemoryStore memory = InMemoryStore.create(clock);
    AtomicBoolean coordinationClosed = new AtomicBoolean();
    AtomicBoolean storeClosed = new AtomicBoolean();
    CoordinationStore coordination =
        failingClose(
            CoordinationStore.class,
            memory.coordination(),
            coordinationClosed,
            "the coordination store failed to close");
    Store store = failingClose(Store.class, memory, storeClosed, "the store failed to close");
    Boxline boxline = Boxline.builder().store(store).coordination(coordination).build().start();
    TopicName t = TopicName.of("acme/close", "orders");
    boxline.admin().createNamespace(NamespacePath.of("acme/close"));
    boxline.admin().createTopic(t, 2);
    boxline.admin().createSubscription(SubscriptionSpec.of("audit", t));
    Consumer consumer = boxline.consumer("audit").handler(e -> {}).start();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (memory.coordination().liveMembers("audit").isEmpty()) {
      assertThat(System.nanoTime()).as("the consumer joined its group").isLessThan(deadline);
      Thread.sleep(5);
    }

    assertThatThrownBy(boxline::close)
        .hasMessage("the coordination store failed to close")
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .extracting(Throwable::getMessage)
                    .containsExactly("the store failed to close"));
    assertThat(coordinationClosed).isTrue();
    assertThat(storeClosed).as("the store closed after the coordination failed").isTrue();
    assertThat(memory.coordination().liveMembers("audit"))
        .as("the consumer " + consumer.id() + " left its group")
        .isEmpty();
    boxline.close(); // a second close does nothing, and throws nothing
  }
}
