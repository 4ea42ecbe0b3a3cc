package io.boxline.testkit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Coordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.PartitionKey;
import io.boxline.testkit.suite.SimulatedGroup;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The checks of {@link SimulatedGroup} (behind {@code GroupScaleBehaviour}) catch a store that
 * breaks the contract: a small group on the in-memory store with one call broken.
 */
class SimulatedGroupTest {
  private static final Duration TTL = Duration.ofMinutes(1);

  /** The in-memory store, with {@code acquire} replaced. */
  private interface Acquire {
    List<OptionalLong> acquire(
        CoordinationStore real, String group, List<PartitionKey> partitions, String member);
  }

  private static final int THREADS = 4;

  /**
   * The in-memory store with {@code acquire} replaced. The first {@link #THREADS} check-ins wait
   * for each other after reading the group, so that the members of the first turns all see it empty
   * and reach for the same partitions.
   */
  private static CoordinationStore withAcquire(Acquire acquire) {
    CoordinationStore real = Coordination.inMemory();
    CyclicBarrier firstViews = new CyclicBarrier(THREADS);
    AtomicInteger checkIns = new AtomicInteger();
    return (CoordinationStore)
        Proxy.newProxyInstance(
            CoordinationStore.class.getClassLoader(),
            new Class<?>[] {CoordinationStore.class},
            (proxy, method, args) -> {
              if (method.getName().equals("acquire")) {
                @SuppressWarnings("unchecked")
                List<PartitionKey> ps = (List<PartitionKey>) args[1];
                return acquire.acquire(real, (String) args[0], ps, (String) args[2]);
              }
              Object result = call(real, method, args);
              if (method.getName().equals("checkIn") && checkIns.getAndIncrement() < THREADS) {
                firstViews.await(10, TimeUnit.SECONDS);
              }
              return result;
            });
  }

  private static Object call(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static List<String> violationsAfterRounds(CoordinationStore store, int rounds) {
    try (SimulatedGroup group = new SimulatedGroup(store, "g", 16, 64, THREADS, TTL)) {
      for (int i = 0; i < rounds; i++) {
        group.round();
      }
      return group.violations();
    }
  }

  @Test
  void aCorrectStoreSettlesWithoutViolations() {
    // The same race as below, on a store that compare-and-sets.
    CoordinationStore store = withAcquire(CoordinationStore::acquire);
    try (SimulatedGroup group = new SimulatedGroup(store, "g", 16, 64, THREADS, TTL)) {
      SimulatedGroup.Round r;
      int rounds = 0;
      do {
        r = group.round();
        rounds++;
      } while (r.moved() && rounds < 10);
      assertThat(r.moved()).isFalse();
      assertThat(group.violations()).isEmpty();
      assertThat(group.state().balanced()).isTrue();
      assertThat(group.calls()).containsKeys("checkIn", "acquire", "policy");
    }
  }

  @Test
  void anAcquireThatTakesHeldLeasesIsCaught() {
    CoordinationStore store =
        withAcquire(
            (real, group, ps, member) -> {
              real.forceRelease(group, ps); // no compare-and-set: whoever asks wins
              return real.acquire(group, ps, member);
            });
    // Racing members each "win" the partitions the others took a moment before.
    assertThat(violationsAfterRounds(store, 1))
        .anySatisfy(v -> assertThat(v).contains("which live").contains("holds"));
  }

  @Test
  void anAcquireThatReportsAnotherEpochThanItStoredIsCaught() {
    CoordinationStore store =
        withAcquire(
            (real, group, ps, member) ->
                real.acquire(group, ps, member).stream()
                    .map(e -> e.isPresent() ? OptionalLong.of(1) : e)
                    .toList());
    // The next check-in shows each member its own lease at an epoch it was not told.
    assertThat(violationsAfterRounds(store, 2))
        .anySatisfy(
            v -> assertThat(v).matches("round 2: (m\\d+) lost .* \\(epoch 1\\), now \\1 at \\d+"));
  }
}
