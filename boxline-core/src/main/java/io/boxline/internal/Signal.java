package io.boxline.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A wake-up flag that is not lost when raised while nobody waits (a one-permit semaphore). */
final class Signal {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition raised = lock.newCondition();
  private boolean set;

  void raise() {
    lock.lock();
    try {
      set = true;
      raised.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Waits until raised or the timeout passes; clears the flag. Returns true when it was raised. */
  boolean await(long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (!set && left > 0) {
        left = raised.awaitNanos(left);
      }
      boolean was = set;
      set = false;
      return was;
    } finally {
      lock.unlock();
    }
  }

  boolean await(long amount, TimeUnit unit) throws InterruptedException {
    return await(unit.toNanos(amount));
  }

  /**
   * Raises this signal so that {@code loop} sees its stop flag, waits up to {@code timeout} for it
   * to end, and interrupts it if it has not; true when it ended in time.
   */
  boolean stopLoop(Thread loop, java.time.Duration timeout) {
    raise();
    try {
      loop.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (loop.isAlive()) {
      loop.interrupt();
      return false;
    }
    return true;
  }
}
