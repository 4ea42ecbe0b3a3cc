package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * What the producer side of a paced latency run (W2) records per event: when its commit returned
 * (System.nanoTime()), how long its transaction took, and how late after its due time its sender
 * started it.
 */
final class CommitTimes {
  final long[] committed;
  final long[] took;
  final long[] late;

  CommitTimes(int total) {
    committed = new long[total];
    took = new long[total];
    late = new long[total];
  }

  /**
   * Event {@code i}: its transaction started at {@code started}, its commit returned at {@code
   * committedAt}.
   */
  void record(int i, long started, long committedAt, long lateNanos) {
    committed[i] = committedAt;
    took[i] = committedAt - started;
    late[i] = lateNanos;
  }

  /**
   * A {@link Pacer.Send} that publishes {@code event.apply(i)} in a transaction of its own ({@code
   * boxline.inTransaction}) and records it; the commit-return time is read from {@code
   * commitReturned} right after {@code inTransaction} returns.
   */
  Pacer.Send publishing(
      Boxline boxline, IntFunction<OutgoingEvent> event, LongSupplier commitReturned) {
    var publisher = boxline.publisher();
    return (i, lateNanos) -> {
      OutgoingEvent e = event.apply(i);
      long t0 = System.nanoTime();
      boxline.inTransaction(tx -> publisher.publish(tx, e));
      record(i, t0, commitReturned.getAsLong(), lateNanos);
    };
  }

  /** The transactions' durations of events {@code from} … {@code to - 1}, sorted. */
  long[] commitDurations(int from, int to) {
    return Stats.sorted(from, to, i -> took[i]);
  }

  /** How late events {@code from} … {@code to - 1} were sent, sorted. */
  long[] sendLags(int from, int to) {
    return Stats.sorted(from, to, i -> late[i]);
  }
}
