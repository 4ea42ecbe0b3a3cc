package io.boxline.bench;

import io.boxline.Event;
import io.boxline.EventHandler;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The benchmark's handler: does no work, but checks every delivery and can record when each event
 * arrived. Fails the run (see {@link #verify}) on an unknown event, a duplicate, a sequence gap or
 * out-of-order event in a partition, an event of a key that overtakes an earlier one of the same
 * producer, or a missing event.
 */
final class DeliveryCheck implements EventHandler {
  /** What the handler records on entry, per event index. */
  enum Clock {
    NONE,
    NANO_TIME,
    EPOCH_NANOS
  }

  private final int expected;
  private final Clock clock;
  private final long[] arrival;
  private final AtomicIntegerArray seen;
  private final AtomicLongArray lastSequence;
  private final AtomicLongArray lastIndexOfKey;
  private final AtomicLong handled = new AtomicLong();
  private final AtomicReference<String> error = new AtomicReference<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long doneNanos;

  /**
   * @param keys number of keys "customer-0" .. "customer-(keys-1)" whose order is checked, or 0
   */
  DeliveryCheck(int expected, int partitions, int keys, Clock clock) {
    this.expected = expected;
    this.clock = clock;
    this.arrival = clock == Clock.NONE ? null : new long[expected];
    this.seen = new AtomicIntegerArray(expected);
    this.lastSequence = new AtomicLongArray(partitions);
    this.lastIndexOfKey = new AtomicLongArray(Math.max(keys, 1));
    for (int i = 0; i < lastIndexOfKey.length(); i++) {
      lastIndexOfKey.set(i, -1);
    }
  }

  static long epochNanos() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  @Override
  public void handle(Event e) {
    long t =
        clock == Clock.NANO_TIME
            ? System.nanoTime()
            : clock == Clock.EPOCH_NANOS ? epochNanos() : 0;
    // Events published through SQL publish() get a database-made id; they carry their index in a
    // header instead.
    String carried = e.headers().get(Payloads.INDEX_HEADER);
    long idx = carried != null ? Long.parseLong(carried) : Payloads.index(e.id());
    if (idx < 0 || idx >= expected) {
      fail("unknown event " + e);
      return;
    }
    if (seen.getAndIncrement((int) idx) != 0) {
      fail("event " + idx + " delivered twice: " + e);
      return;
    }
    if (arrival != null) {
      arrival[(int) idx] = t;
    }
    long prev = lastSequence.getAndSet(e.partition(), e.sequence());
    if (e.sequence() != prev + 1) {
      fail("partition " + e.partition() + ": sequence " + e.sequence() + " after " + prev);
    }
    if (lastIndexOfKey.length() > 1 && e.key() != null) {
      int key = Integer.parseInt(e.key(), "customer-".length(), e.key().length(), 10);
      long before = lastIndexOfKey.getAndSet(key, idx);
      if (idx <= before) {
        fail("key " + e.key() + ": event " + idx + " delivered after event " + before);
      }
    }
    long n = handled.incrementAndGet();
    if (n == expected) {
      doneNanos = System.nanoTime();
      done.countDown();
    } else if (n > expected) {
      fail("more events than published: " + n);
    }
  }

  private void fail(String message) {
    error.compareAndSet(null, message);
    done.countDown();
  }

  long handled() {
    return handled.get();
  }

  /** System.nanoTime() when the last expected event was handled. */
  long doneNanos() {
    return doneNanos;
  }

  long[] arrival() {
    return arrival;
  }

  /** Waits until every event was handled (or a check failed). */
  void await(long timeoutSeconds, String what) throws InterruptedException {
    if (!done.await(timeoutSeconds, TimeUnit.SECONDS)) {
      throw new BenchFailure(
          Stats.f(
              "%s: %d of %d events handled after %d s",
              what, handled.get(), expected, timeoutSeconds));
    }
    String err = error.get();
    if (err != null) {
      throw new BenchFailure(what + ": " + err);
    }
  }

  /** Re-checks after a quiet period, so late duplicates are caught too. */
  void verify(String what, long consumerHandledCount) {
    String err = error.get();
    if (err != null) {
      throw new BenchFailure(what + ": " + err);
    }
    if (handled.get() != expected) {
      throw new BenchFailure(what + ": handled " + handled.get() + " events, expected " + expected);
    }
    for (int i = 0; i < expected; i++) {
      if (seen.get(i) != 1) {
        throw new BenchFailure(what + ": event " + i + " delivered " + seen.get(i) + " times");
      }
    }
    if (consumerHandledCount != expected) {
      throw new BenchFailure(
          what + ": Consumer.handledCount() = " + consumerHandledCount + ", expected " + expected);
    }
  }
}
