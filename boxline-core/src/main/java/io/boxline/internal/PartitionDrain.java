package io.boxline.internal;

import io.boxline.Event;
import io.boxline.spi.StoredEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a worker does with the one partition it claimed: reads after the cursor (from the recent
 * events handed over, else from the log), hands each batch to the consumer's {@link Delivery},
 * gives due parked events a {@link RetryPass}, and backs off when the store fails. Which partition
 * runs when, and on which thread, is the consumer's business.
 */
final class PartitionDrain {
  private static final long READ_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long MAX_READ_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
  private static final int BATCHES_PER_TURN = 4;

  /**
   * Catch-up: while a partition is more than this many batches behind, one read fetches this many
   * batches (at most {@link #CATCH_UP_MAX_EVENTS} events): one statement instead of ten. They are
   * still handed over and committed one batch at a time, so a crash repeats at most a batch.
   */
  static final int CATCH_UP_BATCHES = 10;

  static final int CATCH_UP_MAX_EVENTS = 5_000;

  private final ConsumerContext ctx;
  private final ConsumerSettings s;
  private final Delivery delivery;
  private final RetryPass retries;
  private final GroupMembership membership;

  /** Batches delivered on the thread that committed them ({@code handleOnCommittingThread}). */
  final AtomicLong committingThreadBatches = new AtomicLong();

  PartitionDrain(
      ConsumerContext ctx, Delivery delivery, RetryPass retries, GroupMembership membership) {
    this.ctx = ctx;
    this.s = ctx.s;
    this.delivery = delivery;
    this.retries = retries;
    this.membership = membership;
  }

  /** Whether {@code p} has new events, parked events due, or parked events not looked at yet. */
  boolean hasWork(LeasedPartition p) {
    return p.knownLast.get() > p.position
        || p.retryDue
        || !p.parkedLoaded
        || s.clock().millis() >= p.nextRetryAtMillis;
  }

  /**
   * Delivers what {@code p} has after its cursor; the caller holds its draining flag, which is
   * given back here. On a worker: a few batches. On the thread that committed the events ({@code
   * committingThread}): one batch of new events, and nothing that waits (parked events, retry
   * passes and back-offs after errors are left to the workers). {@code started} (may be null) is
   * the move the group commit expects since the partition was handed to this worker; the first
   * delivery takes it over.
   */
  void run(LeasedPartition p, boolean committingThread, CursorCommitter.Expected started) {
    long backoff = READ_BACKOFF_NANOS;
    int turns = 0;
    int maxBatches = committingThread ? 1 : BATCHES_PER_TURN;
    try {
      if (committingThread
          && (!p.parkedLoaded || p.retryDue || s.clock().millis() >= p.nextRetryAtMillis)) {
        return;
      }
      // A few batches per turn, then back to the end of the queue, so a busy partition cannot keep
      // a worker from the other partitions this consumer holds.
      turn:
      while (!ctx.stopping() && p.state == LeasedPartition.State.ACTIVE && turns++ < maxBatches) {
        try {
          if (!p.parkedLoaded) {
            retries.loadParked(p);
          }
          // While new events wait, retry passes are spaced out so poisoned keys retrying fast
          // cannot take the partition's time from its healthy keys.
          if ((p.retryDue || s.clock().millis() >= p.nextRetryAtMillis)
              && (p.knownLast.get() <= p.position
                  || System.nanoTime() - p.lastRetryPassNanos >= RetryPass.SPACING_NANOS)) {
            retries.run(p);
          }
        } catch (RuntimeException e) {
          ctx.workerError("could not work through the parked events of " + p.ref(), e);
          if (committingThread || ctx.waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
          continue;
        }
        if (p.state != LeasedPartition.State.ACTIVE || p.knownLast.get() <= p.position) {
          return;
        }
        long expected = p.knownLast.get();
        int batchSize = membership.policy().batchSizeFor(s.batchSize());
        int readSize = readSize(batchSize, p);
        List<StoredEvent> rows = null;
        boolean handedOver = false;
        try {
          if (ctx.recent != null && readSize == batchSize) {
            rows = ctx.recent.after(p.key, p.position, batchSize);
            handedOver = rows != null;
          }
          if (rows == null) {
            rows = ctx.store.read(p.key.topicId(), p.key.partition(), p.position, readSize);
          }
        } catch (RuntimeException e) {
          ctx.workerError("could not read " + p.ref(), e);
          if (committingThread || ctx.waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
          continue;
        }
        if (rows.isEmpty()) {
          p.knownLast.compareAndSet(
              expected, p.position); // caught up (unless a head arrived meanwhile)
          return;
        }
        p.lastActiveNanos = System.nanoTime();
        List<Event> events = new ArrayList<>(rows.size());
        for (StoredEvent r : rows) {
          events.add(ctx.toEvent(p, r));
        }
        long last = events.get(events.size() - 1).sequence();
        p.knownLast.accumulateAndGet(last, Math::max);
        for (int from = 0; from < events.size(); from += batchSize) {
          List<Event> batch = events.subList(from, Math.min(events.size(), from + batchSize));
          if (committingThread) {
            committingThreadBatches.incrementAndGet();
          }
          if (from > 0 && (ctx.stopping() || p.state != LeasedPartition.State.ACTIVE)) {
            return;
          }
          boolean delivered;
          try {
            delivered = deliver(p, batch, handedOver, started);
          } catch (RuntimeException e) {
            if (committingThread) {
              throw e; // the committing thread reports it to the transaction that ran it
            }
            // The database failed under the batch (its cursor commit, say, on a lost
            // connection): nothing moved in memory, so the events come again from the cursor.
            ctx.workerError(
                "could not finish a batch of " + p.ref() + "; its events come again", e);
            if (ctx.waitForStop(backoff)) {
              return;
            }
            backoff = Math.min(backoff * 2, MAX_READ_BACKOFF_NANOS);
            continue turn;
          }
          if (!delivered) {
            return;
          }
        }
        backoff = READ_BACKOFF_NANOS;
        if (rows.size() < readSize && p.knownLast.get() <= p.position) {
          return;
        }
      }
    } finally {
      p.lastActiveNanos = System.nanoTime();
      membership.stopDraining(p);
      // Whoever ran this turn wakes the dispatcher if a head arrived while the partition was busy
      // (DefaultConsumer: the worker after freeing its slot, the committing thread always).
    }
  }

  /** The batch size, or a catch-up read's when the partition is far behind. */
  private int readSize(int batchSize, LeasedPartition p) {
    long behind = p.knownLast.get() - p.position;
    if (behind <= (long) CATCH_UP_BATCHES * batchSize) {
      return batchSize;
    }
    return Math.max(batchSize, Math.min(CATCH_UP_BATCHES * batchSize, CATCH_UP_MAX_EVENTS));
  }

  private boolean deliver(
      LeasedPartition p, List<Event> batch, boolean handedOver, CursorCommitter.Expected started) {
    return delivery.deliver(p, batch, handedOver, started);
  }
}
