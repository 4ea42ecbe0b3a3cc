package io.boxline.bench;

import java.util.concurrent.atomic.AtomicInteger;
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

  /** Between warm-up and measurement, so that the warm-up's backlog cannot spill into it. */
  static final long WARM_PAUSE_NANOS = 1_000_000_000L;

  private Pacer() {}

  /** Sends {@code total} events at {@code rate}/s; returns the nanoTime of the first due time. */
  static long run(int total, double rate, int threads, Send send) throws Exception {
    return run(total, 0, rate, rate, threads, send);
  }

  /**
   * Sends the first {@code warm} events at {@code warmRate}/s, pauses {@link #WARM_PAUSE_NANOS},
   * then the rest at {@code rate}/s. A warm-up faster than a low measured rate lets the JIT compile
   * the hot paths before measuring; at 200/s it would still be compiling them minutes later.
   * Returns the nanoTime at which the first measured event was due.
   */
  static long run(int total, int warm, double warmRate, double rate, int threads, Send send)
      throws Exception {
    long start = System.nanoTime() + 50_000_000L;
    long measuredStart =
        warm == 0 ? start : start + (long) (warm * 1e9 / warmRate) + WARM_PAUSE_NANOS;
    AtomicInteger next = new AtomicInteger();
    Workers workers = new Workers();
    workers
        .start(
            threads,
            t -> {
              for (int i; (i = next.getAndIncrement()) < total && !workers.failed(); ) {
                long due =
                    i < warm
                        ? start + (long) (i * 1e9 / warmRate)
                        : measuredStart + (long) ((i - warm) * 1e9 / rate);
                for (long wait; (wait = due - System.nanoTime()) > 0; ) {
                  LockSupport.parkNanos(wait);
                }
                send.send(i, System.nanoTime() - due);
              }
            })
        .join();
    return measuredStart;
  }
}
