package io.boxline.bench;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A lock-free histogram of latencies in microseconds for runs too long to keep every value (the
 * soak): log-linear buckets, 64 per power of two (exact below 64 µs, within 1/64 ≈ 1.6 % above), up
 * to 2^40 µs (about 12 days). Handlers {@link #record} from any thread; {@link #snapshot} copies
 * the cumulative counts, and the difference of two snapshots is the histogram of the window between
 * them ({@link #percentile} reads such an array).
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 6;
  private static final int SUB = 1 << SUB_BITS;
  private static final int MAX_EXPONENT = 40;

  /** Number of buckets: values 0 … 63 exactly, then 64 per power of two up to 2^40. */
  static final int BUCKETS = (MAX_EXPONENT - SUB_BITS + 2) * SUB;

  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

  /** Records one latency given in nanoseconds (negative values count as 0). */
  void recordNanos(long nanos) {
    counts.incrementAndGet(bucket(Math.max(0, nanos) / 1000));
  }

  /** The bucket of a value in microseconds. */
  static int bucket(long micros) {
    if (micros < SUB) {
      return (int) Math.max(0, micros);
    }
    int e = 63 - Long.numberOfLeadingZeros(micros);
    if (e > MAX_EXPONENT) {
      return BUCKETS - 1;
    }
    long top = micros >>> (e - SUB_BITS); // 64 … 127
    return (e - SUB_BITS + 1) * SUB + (int) (top - SUB);
  }

  /** The smallest value (µs) of a bucket. */
  static long lower(int bucket) {
    int block = bucket / SUB;
    if (block == 0) {
      return bucket;
    }
    long top = bucket % SUB + SUB;
    return top << (block - 1);
  }

  /** The width (µs) of a bucket. */
  static long width(int bucket) {
    int block = bucket / SUB;
    return block == 0 ? 1 : 1L << (block - 1);
  }

  /** The cumulative counts so far. */
  long[] snapshot() {
    long[] out = new long[BUCKETS];
    for (int i = 0; i < BUCKETS; i++) {
      out[i] = counts.get(i);
    }
    return out;
  }

  /** {@code later - earlier}, bucket by bucket: the window between two snapshots. */
  static long[] minus(long[] later, long[] earlier) {
    long[] out = new long[BUCKETS];
    for (int i = 0; i < BUCKETS; i++) {
      out[i] = later[i] - (earlier == null ? 0 : earlier[i]);
    }
    return out;
  }

  static long count(long[] window) {
    long n = 0;
    for (long c : window) {
      n += c;
    }
    return n;
  }

  /**
   * The nearest-rank percentile (p in (0, 100]) of a window, in milliseconds: the middle of the
   * bucket the ranked value fell in; NaN when the window is empty.
   */
  static double percentileMillis(long[] window, double p) {
    long n = count(window);
    if (n == 0) {
      return Double.NaN;
    }
    long rank = Math.max(1, (long) Math.ceil(p / 100.0 * n));
    long seen = 0;
    for (int i = 0; i < window.length; i++) {
      seen += window[i];
      if (seen >= rank) {
        return (lower(i) + (width(i) - 1) / 2.0) / 1000.0;
      }
    }
    return Double.NaN;
  }
}
