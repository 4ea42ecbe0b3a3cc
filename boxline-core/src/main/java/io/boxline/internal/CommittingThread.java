package io.boxline.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Deliveries that consumers with {@code handleOnCommittingThread} leave to the thread that ran
 * {@code inTransaction}: claimed while it hands its committed events over ({@link #collect}), run
 * once its connection is closed ({@link #run}), so a handler that needs a connection of the same
 * pool cannot wait for this one.
 */
final class CommittingThread {
  /** A claimed partition's batch: run it, or, if the hand-over did not finish, give it back. */
  interface Delivery {
    void run();

    void cancel();
  }

  /** Set only while this thread hands a committed transaction's events over. */
  private static final ThreadLocal<List<Delivery>> COLLECTING = new ThreadLocal<>();

  /** Set while this thread runs batches: transactions its handlers run collect nothing. */
  private static final ThreadLocal<Boolean> HANDLING = new ThreadLocal<>();

  private CommittingThread() {}

  /**
   * Runs {@code handOver} (the committed transaction's events going to the consumers) and returns
   * the deliveries consumers claimed for this thread meanwhile; none when this thread is running a
   * handler (handlers never nest: those events go to workers). If {@code handOver} fails, the
   * claims are given back.
   */
  static List<Delivery> collect(Runnable handOver) {
    if (HANDLING.get() != null) {
      handOver.run();
      return List.of();
    }
    List<Delivery> claimed = new ArrayList<>(2);
    COLLECTING.set(claimed);
    boolean done = false;
    try {
      handOver.run();
      done = true;
    } finally {
      COLLECTING.remove();
      if (!done) {
        claimed.forEach(Delivery::cancel);
      }
    }
    return claimed;
  }

  /** Whether this thread is collecting deliveries now. */
  static boolean collecting() {
    return COLLECTING.get() != null;
  }

  /** Leaves {@code delivery} to this thread, which must be {@link #collecting}. */
  static void defer(Delivery delivery) {
    List<Delivery> claimed = COLLECTING.get();
    if (claimed == null) {
      throw new IllegalStateException("this thread does not collect deliveries");
    }
    claimed.add(delivery);
  }

  /**
   * Runs every collected delivery, each even if one before it failed (each holds a partition), and
   * then rethrows the first failure (a handler's Error, say).
   */
  static void run(List<Delivery> claimed) {
    if (claimed.isEmpty()) {
      return;
    }
    Throwable failed = null;
    HANDLING.set(Boolean.TRUE);
    try {
      for (Delivery delivery : claimed) {
        try {
          delivery.run();
        } catch (RuntimeException | Error e) {
          failed = failed == null ? e : failed;
        }
      }
    } finally {
      HANDLING.remove();
    }
    if (failed instanceof Error error) {
      throw error;
    }
    if (failed != null) {
      throw (RuntimeException) failed;
    }
  }

  /** Runs a worker's batches: transactions its handlers run collect nothing either. */
  static void runAsWorker(Runnable batches) {
    HANDLING.set(Boolean.TRUE);
    try {
      batches.run();
    } finally {
      HANDLING.remove();
    }
  }
}
