package io.boxline.testkit.sim;

import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * The seeded source of every fault: a call lost before it reached the store, a call whose answer
 * was lost after the store ran it, an actor that stalls, crashes, or the clock jumping. Off during
 * the drain.
 */
final class Faults {
  /** How a store call goes. */
  enum Call {
    NORMAL,
    /** The call never reached the store; the caller sees an error. */
    LOST_BEFORE,
    /** The store ran the call; the answer never came back; the caller sees an error. */
    LOST_AFTER
  }

  /** The error a caller sees for a lost call. */
  static final class LostCall extends RuntimeException {
    final boolean ran;

    LostCall(boolean ran) {
      super(
          ran ? "answer lost after the store ran the call" : "call lost before the store",
          null,
          false,
          false);
      this.ran = ran;
    }
  }

  private final Random random;
  private final double rate;
  private final Map<String, Integer> counts = new TreeMap<>();
  private boolean on = true;

  Faults(Random random, double rate) {
    this.random = random;
    this.rate = rate;
  }

  void off() {
    on = false;
  }

  boolean on() {
    return on;
  }

  /** Whether a fault of {@code kind} happens now (counted when it does). */
  boolean hit(String kind) {
    if (!on || random.nextDouble() >= rate) {
      return false;
    }
    counts.merge(kind, 1, Integer::sum);
    return true;
  }

  Call call(String what) {
    if (hit("lost call: " + what)) {
      return random.nextBoolean() ? Call.LOST_BEFORE : Call.LOST_AFTER;
    }
    return Call.NORMAL;
  }

  /** Runs {@code call} through a fault decision: it may not run, or its answer may be lost. */
  <T> T through(String what, java.util.function.Supplier<T> call) {
    Call c = call(what);
    if (c == Call.LOST_BEFORE) {
      throw new LostCall(false);
    }
    T out = call.get();
    if (c == Call.LOST_AFTER) {
      throw new LostCall(true);
    }
    return out;
  }

  int total() {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }

  Map<String, Integer> counts() {
    return new TreeMap<>(counts);
  }
}
