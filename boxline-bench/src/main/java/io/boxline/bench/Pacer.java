package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Open-loop pacing: event i is due at start + i / rate, whatever happened to earlier ones. Several
 * sender threads take the next due event, so one slow commit does not delay the events after it.
 */
final class Pacer {
  @FunctionalInterface
  interface Send {
    /**
     * @param lateNanos how long after its due time the event is being sent
     */
    void send(int index, long lateNanos) throws Exception;
  }

  private Pacer() {}

  /** Sends {@code total} events at {@code rate}/s; returns the nanoTime of the first due time. */
  static long run(int total, double rate, int threads, Send send) throws Exception {
    long start = System.nanoTime() + 50_000_000L;
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> list = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  for (int i; (i = next.getAndIncrement()) < total && failure.get() == null; ) {
                    long due = start + (long) (i * 1e9 / rate);
                    for (long wait; (wait = due - System.nanoTime()) > 0; ) {
                      LockSupport.parkNanos(wait);
                    }
                    send.send(i, System.nanoTime() - due);
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      list.add(w);
      w.start();
    }
    for (Thread w : list) {
      w.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("producer failed: " + failure.get(), failure.get());
    }
    return start;
  }
}
