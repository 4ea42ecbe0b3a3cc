package io.boxline.bench;

import java.util.Arrays;
import java.util.Locale;

/** Percentiles (nearest rank) and medians. */
final class Stats {
  private Stats() {}

  /** Nearest-rank percentile of sorted values, p in (0, 100]. */
  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  /** f(from) … f(to - 1), sorted: the measured part of per-event times. */
  static long[] sorted(int from, int to, java.util.function.IntToLongFunction f) {
    long[] v = new long[to - from];
    for (int i = from; i < to; i++) {
      v[i - from] = f.applyAsLong(i);
    }
    Arrays.sort(v);
    return v;
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }

  static String ms(long nanos) {
    return String.format(Locale.ROOT, "%.2f", nanos / 1e6);
  }

  /** "p50 / p99" of sorted nanoseconds, in milliseconds. */
  static String p50p99(long[] sorted) {
    return ms(percentile(sorted, 50)) + " / " + ms(percentile(sorted, 99));
  }

  static String rate(double perSecond) {
    if (perSecond >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", perSecond);
    }
    return String.format(Locale.ROOT, "%.1f", perSecond);
  }

  static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
