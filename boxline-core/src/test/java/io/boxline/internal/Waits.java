package io.boxline.internal;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded waits on conditions: tests never sleep to synchronise. */
final class Waits {
  static final Duration MAX = Duration.ofSeconds(5);

  private Waits() {}

  /**
   * Polls {@code condition} every millisecond or so; fails naming {@code what} after {@link #MAX}.
   */
  static void until(String what, BooleanSupplier condition) {
    until(what, () -> condition.getAsBoolean(), b -> b);
  }

  /** Like {@link #until(String, BooleanSupplier)}, with the last value seen in the failure. */
  static <T> T until(String what, Supplier<T> observe, java.util.function.Predicate<T> done) {
    long deadline = System.nanoTime() + MAX.toNanos();
    T last = observe.get();
    while (!done.test(last)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + MAX + " waiting for " + what + "; last: " + last);
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(1); // a poll interval, not a synchronisation: the condition decides
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
      last = observe.get();
    }
    return last;
  }
}
