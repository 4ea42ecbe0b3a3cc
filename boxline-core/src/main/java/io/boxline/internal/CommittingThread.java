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

  /**
   * This thread's part in the protocol; the two parts change independently of each other.
   *
   * @param collecting the deliveries claimed while this thread hands a committed transaction's
   *     events over; null otherwise
   * @param handling whether this thread runs batches: transactions its handlers run collect nothing
   */
  private record Role(List<Delivery> collecting, boolean handling) {
    static final Role NONE = new Role(null, false);
  }

  /** Unset while the thread has no part (most threads, most of the time). */
  private static final ThreadLocal<Role> ROLE = new ThreadLocal<>();

  private CommittingThread() {}

  private static Role role() {
    Role r = ROLE.get();
    return r == null ? Role.NONE : r;
  }

  private static void setCollecting(List<Delivery> claimed) {
    become(new Role(claimed, role().handling()));
  }

  private static void setHandling(boolean handling) {
    become(new Role(role().collecting(), handling));
  }

  private static void become(Role r) {
    if (r.collecting() == null && !r.handling()) {
      ROLE.remove(); // nothing left behind on pooled threads
    } else {
      ROLE.set(r);
    }
  }

  /**
   * Runs {@code handOver} (the committed transaction's events going to the consumers) and returns
   * the deliveries consumers claimed for this thread meanwhile; none when this thread is running a
   * handler (handlers never nest: those events go to workers). If {@code handOver} fails, the
   * claims are given back.
   */
  static List<Delivery> collect(Runnable handOver) {
    if (role().handling()) {
      handOver.run();
      return List.of();
    }
    List<Delivery> claimed = new ArrayList<>(2);
    setCollecting(claimed);
    boolean done = false;
    try {
      handOver.run();
      done = true;
    } finally {
      setCollecting(null);
      if (!done) {
        claimed.forEach(Delivery::cancel);
      }
    }
    return claimed;
  }

  /** Whether this thread is collecting deliveries now. */
  static boolean collecting() {
    return role().collecting() != null;
  }

  /** Leaves {@code delivery} to this thread, which must be {@link #collecting}. */
  static void defer(Delivery delivery) {
    List<Delivery> claimed = role().collecting();
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
    setHandling(true);
    try {
      for (Delivery delivery : claimed) {
        try {
          delivery.run();
        } catch (RuntimeException | Error e) {
          failed = failed == null ? e : failed;
        }
      }
    } finally {
      setHandling(false);
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
    setHandling(true);
    try {
      batches.run();
    } finally {
      setHandling(false);
    }
  }
}
