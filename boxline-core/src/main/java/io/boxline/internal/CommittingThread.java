package io.boxline.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Deliveries that consumers with {@code handleOnCommittingThread} leave to the thread that ran
 * {@code inTransaction}: claimed while it hands its committed events over, run once its connection
 * is closed (so a handler that needs a connection of the same pool cannot wait for this one).
 */
final class CommittingThread {
  /** A claimed partition's batch: run it, or, if the transaction did not finish, give it back. */
  interface Delivery {
    void run();

    void cancel();
  }

  private static final ThreadLocal<List<Delivery>> PENDING = new ThreadLocal<>();

  /** Marks a thread that is running deliveries: transactions its handlers run do not collect. */
  private static final List<Delivery> RUNNING = List.of();

  private CommittingThread() {}

  /**
   * Starts collecting on this thread; null when it already collects or runs deliveries (a
   * transaction inside a handler, or nested {@code inTransaction} calls): those go to workers.
   */
  static List<Delivery> open() {
    if (PENDING.get() != null) {
      return null;
    }
    List<Delivery> pending = new ArrayList<>(2);
    PENDING.set(pending);
    return pending;
  }

  /** Whether this thread collects deliveries now. */
  static boolean collecting() {
    List<Delivery> pending = PENDING.get();
    return pending != null && pending != RUNNING;
  }

  /** Leaves {@code delivery} to this thread, which must be {@link #collecting}. */
  static void defer(Delivery delivery) {
    if (!collecting()) {
      throw new IllegalStateException("this thread does not collect deliveries");
    }
    PENDING.get().add(delivery);
  }

  /** Runs every delivery {@link #open} collected and stops collecting. */
  static void run(List<Delivery> pending) {
    if (pending == null) {
      return;
    }
    PENDING.set(RUNNING);
    Throwable failed = null;
    try {
      for (Delivery delivery : pending) {
        try {
          delivery.run();
        } catch (RuntimeException | Error e) { // a handler's Error too
          failed = failed == null ? e : failed; // the others still run: each holds a partition
        }
      }
    } finally {
      PENDING.remove();
    }
    if (failed instanceof Error error) {
      throw error;
    }
    if (failed != null) {
      throw (RuntimeException) failed;
    }
  }

  /** Runs a worker's batches: transactions its handlers run do not collect either. */
  static void runAsWorker(Runnable batches) {
    PENDING.set(RUNNING);
    try {
      batches.run();
    } finally {
      PENDING.remove();
    }
  }

  /** Gives every collected delivery back (the transaction failed) and stops collecting. */
  static void cancel(List<Delivery> pending) {
    if (pending == null) {
      return;
    }
    PENDING.remove();
    for (Delivery delivery : pending) {
      delivery.cancel();
    }
  }
}
