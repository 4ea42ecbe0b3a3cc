package io.boxline.bench;

import io.boxline.BoxlineObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Splits same-JVM W2 latencies into their stages, to see which one makes the tail: <b>wake</b>
 * (commit returned → the sequencer statement that carried the event started), <b>sequence</b> (that
 * statement, one round trip) and <b>deliver</b> (statement returned → handler entered: hand-over,
 * the worker's wake-up, its start). Batches are recorded through {@link BoxlineObserver#sequenced},
 * which the sequencer calls right after its statement returns; an event belongs to the first batch
 * that ended after its commit returned and before its handler ran. At 200/s nearly every batch
 * holds one event, so the match is exact there.
 */
final class Stages implements BoxlineObserver {
  private final long[] ends;
  private final long[] tooks;
  private final AtomicInteger count = new AtomicInteger();

  Stages(int capacity) {
    ends = new long[capacity];
    tooks = new long[capacity];
  }

  @Override
  public void sequenced(int events, Duration took) {
    long now = System.nanoTime();
    int i = count.getAndIncrement();
    if (i < ends.length) {
      ends[i] = now;
      tooks[i] = took.toNanos();
    }
  }

  /** Stage times (ns) of events {@code from..to-1}; events no batch matches are left out. */
  Split split(long[] committed, long[] arrival, int from, int to) {
    int n = Math.min(count.get(), ends.length);
    long[] end = Arrays.copyOf(ends, n);
    long[] took = Arrays.copyOf(tooks, n);
    // The sequencer is one thread: its batch ends are already in order.
    List<long[]> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      int b = firstAtOrAfter(end, committed[i]);
      if (b >= n || end[b] > arrival[i]) {
        continue;
      }
      long start = end[b] - took[b];
      rows.add(
          new long[] {
            arrival[i] - committed[i],
            Math.max(0, start - committed[i]),
            took[b],
            arrival[i] - end[b]
          });
    }
    return new Split(rows.toArray(new long[0][]));
  }

  private static int firstAtOrAfter(long[] sorted, long t) {
    int i = Arrays.binarySearch(sorted, t);
    return i >= 0 ? i : -i - 1;
  }

  /** Per event: total, wake, sequence, deliver (ns). */
  record Split(long[][] rows) {
    private long[] column(int c, boolean slowestOnly) {
      long[][] r = rows.clone();
      if (slowestOnly) {
        Arrays.sort(r, (a, b) -> Long.compare(b[0], a[0]));
        r = Arrays.copyOf(r, Math.max(1, r.length / 100));
      }
      long[] v = new long[r.length];
      for (int i = 0; i < r.length; i++) {
        v[i] = r[i][c];
      }
      Arrays.sort(v);
      return v;
    }

    /** "wake p50 …, sequence …, deliver …; slowest 1 %: …" in ms. */
    String describe() {
      if (rows.length == 0) {
        return "no event matched a sequencer batch";
      }
      String[] names = {"wake", "sequence", "deliver"};
      StringBuilder sb = new StringBuilder();
      sb.append(Stats.f("%d events matched; p50 / p99 ms: ", rows.length));
      for (int c = 1; c <= 3; c++) {
        long[] v = column(c, false);
        sb.append(c > 1 ? ", " : "")
            .append(names[c - 1])
            .append(' ')
            .append(Stats.ms(Stats.percentile(v, 50)))
            .append(" / ")
            .append(Stats.ms(Stats.percentile(v, 99)));
      }
      sb.append(
          Stats.f("; the slowest 1 %% (%d events), mean ms: ", Math.max(1, rows.length / 100)));
      for (int c = 0; c <= 3; c++) {
        long[] v = column(c, true);
        long sum = 0;
        for (long x : v) {
          sum += x;
        }
        sb.append(c > 0 ? ", " : "")
            .append(c == 0 ? "total" : names[c - 1])
            .append(' ')
            .append(Stats.ms(sum / v.length));
      }
      return sb.toString();
    }
  }
}
