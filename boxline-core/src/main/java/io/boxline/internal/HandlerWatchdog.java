package io.boxline.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Watches handler calls on a consumer's workers ({@code boxline-watchdog-<consumer>}): a call still
 * running {@code timeout} after it started is interrupted (the attempt then fails with {@link
 * io.boxline.HandlerTimeoutException}); one still running another {@code timeout} later ignores
 * interrupts, so its partition is given up ({@code giveUp}), the group moves on, and the worker's
 * slot is freed for the consumer's other partitions while the stuck thread is left behind.
 */
final class HandlerWatchdog {
  private static final System.Logger LOG = System.getLogger(HandlerWatchdog.class.getName());

  /** One handler call in progress. */
  static final class Call {
    final Thread thread;
    final LeasedPartition partition;
    final long startNanos;

    /** Whether the thread holds one of the consumer's worker slots (a key thread does not). */
    final boolean holdsSlot;

    volatile boolean interrupted;
    volatile boolean givenUp;

    Call(Thread thread, LeasedPartition partition, long startNanos, boolean holdsSlot) {
      this.thread = thread;
      this.partition = partition;
      this.startNanos = startNanos;
      this.holdsSlot = holdsSlot;
    }
  }

  /** Set on a worker whose slot the watchdog freed while its call hung (see {@link #exit}). */
  private static final ThreadLocal<Boolean> SLOT_GIVEN_UP = new ThreadLocal<>();

  private final String consumer;
  private final long timeoutNanos;
  private final BiConsumer<Call, String> giveUp;
  private final Map<Thread, Call> calls = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  final AtomicLong interrupts = new AtomicLong();
  final AtomicLong givenUp = new AtomicLong();
  private volatile boolean running;
  private Thread thread;

  /**
   * @param giveUp gives up the call's partition and the worker slot its thread holds (why as text)
   */
  HandlerWatchdog(String consumer, Duration timeout, BiConsumer<Call, String> giveUp) {
    this.consumer = consumer;
    this.timeoutNanos = timeout.toNanos();
    this.giveUp = giveUp;
  }

  void start() {
    running = true;
    thread = new Thread(this::watch, "boxline-watchdog-" + consumer);
    thread.setDaemon(true);
    thread.start();
  }

  /** Bounded: the watchdog only sleeps and interrupts. */
  void stop() {
    running = false;
    Thread t = thread;
    if (t != null) {
      synchronized (lock) {
        lock.notifyAll();
      }
      try {
        t.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A handler call starts on this thread. */
  Call enter(LeasedPartition p, boolean holdsSlot) {
    Call c = new Call(Thread.currentThread(), p, System.nanoTime(), holdsSlot);
    calls.put(c.thread, c);
    return c;
  }

  /**
   * The call is over; clears an interrupt the watchdog sent, so the worker's next statement does
   * not fail on it.
   */
  void exit(Call c) {
    synchronized (c) {
      calls.remove(c.thread, c);
      if (c.givenUp && c.holdsSlot) {
        SLOT_GIVEN_UP.set(Boolean.TRUE);
      }
      if (c.interrupted) {
        Thread.interrupted();
      }
    }
  }

  /**
   * Whether the watchdog gave this worker's slot to another thread while its call hung (then the
   * worker must not give the slot back again); clears the mark.
   */
  static boolean takeSlotGivenUp() {
    boolean given = Boolean.TRUE.equals(SLOT_GIVEN_UP.get());
    SLOT_GIVEN_UP.remove();
    return given;
  }

  private void watch() {
    long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(5), timeoutNanos / 10);
    while (running) {
      long now = System.nanoTime();
      for (Call c : calls.values()) {
        long ran = now - c.startNanos;
        if (!c.interrupted && ran >= timeoutNanos) {
          synchronized (c) {
            if (calls.get(c.thread) == c) {
              c.interrupted = true;
              interrupts.incrementAndGet();
              c.thread.interrupt();
            }
          }
        } else if (c.interrupted && !c.givenUp && ran >= 2 * timeoutNanos) {
          synchronized (c) {
            if (calls.get(c.thread) != c || c.givenUp) {
              continue; // it ended meanwhile
            }
            c.givenUp = true;
          }
          givenUp.incrementAndGet();
          String why =
              "its handler has run for "
                  + Duration.ofNanos(ran)
                  + " and ignored the interrupt sent at the handler timeout; the partition is"
                  + " given up so that the group moves on, and thread "
                  + c.thread.getName()
                  + " is left behind";
          try {
            giveUp.accept(c, why);
          } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "watchdog of " + consumer + " failed", e);
          }
        }
      }
      synchronized (lock) {
        if (!running) {
          return;
        }
        try {
          lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(tick)));
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }
}
