package io.boxline.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Bounded waits on conditions (tests never sleep to synchronise). */
public final class Await {
  private Await() {}

  /**
   * Polls {@code condition} every few milliseconds until true; fails with {@code what} after {@code
   * max}.
   */
  public static void until(Duration max, String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + max.toNanos();
    long pause = 1;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + max + " waiting for: " + what);
      }
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for: " + what);
      }
      pause = Math.min(pause * 2, 50);
    }
  }

  /** Like {@link #until} and reports the last observed value in the failure message. */
  public static <T> void until(
      Duration max, String what, Supplier<T> observe, java.util.function.Predicate<T> done) {
    Object[] last = new Object[1];
    try {
      until(
          max,
          what,
          () -> {
            T v = observe.get();
            last[0] = v;
            return done.test(v);
          });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + " (last seen: " + last[0] + ")");
    }
  }
}
