package io.boxline.demo;

import io.boxline.BoxlineStats;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/** The demo's "Results" section: throughput, commit-to-handler latency, the sequencer's work. */
final class Results {
  private Results() {}

  /**
   * Prints the section. {@code commitNanos}: System.nanoTime() right after each commit, by event
   * id; times run from {@code startNanos}, publishing ended at {@code producersDone}.
   */
  static void print(
      PrintStream out,
      BoxlineStats stats,
      long committed,
      long rolledBack,
      Collection<Deliveries> deliveries,
      Map<UUID, Long> commitNanos,
      long startNanos,
      long producersDone) {
    long lastHandled = Long.MIN_VALUE;
    for (Deliveries d : deliveries) {
      lastHandled = Math.max(lastHandled, d.lastNanos());
    }
    double publishSeconds = (producersDone - startNanos) / 1e9;
    double endToEndSeconds = (lastHandled - startNanos) / 1e9;
    out.println();
    out.println("Results");
    out.printf(
        Locale.ROOT,
        "  events published (committed)   %8d in %5.1f s  (%.0f transactions/s)%n",
        committed,
        publishSeconds,
        committed / publishSeconds);
    out.printf(
        Locale.ROOT,
        "  transactions rolled back       %8d  (their order rows and events must not exist)%n",
        rolledBack);
    for (Deliveries d : deliveries) {
      long[] latencies = latenciesNanos(d, commitNanos);
      long again = d.count() - d.distinctCount();
      out.printf(
          Locale.ROOT,
          "  events consumed by %-11s %8d  commit-to-handler latency p50 %6.1f ms, p99 %6.1f ms,"
              + " max %6.1f ms%s%n",
          d.subscription(),
          d.distinctCount(),
          percentile(latencies, 50) / 1e6,
          percentile(latencies, 99) / 1e6,
          percentile(latencies, 100) / 1e6,
          again == 0 ? "" : String.format(Locale.ROOT, " (and %d of them again)", again));
    }
    out.printf(
        Locale.ROOT,
        "  end to end                     %8d events through both subscriptions in %.1f s ="
            + " %.0f events/s%n",
        committed,
        endToEndSeconds,
        committed / endToEndSeconds);
    out.printf(
        Locale.ROOT,
        "  sequencer                      %8d events in %d batches (%s)%n",
        stats.eventsSequenced(),
        stats.sequencerBatches(),
        stats.sequencerErrors() == 0 ? "no errors" : stats.sequencerErrors() + " errors");
  }

  private static long[] latenciesNanos(Deliveries d, Map<UUID, Long> commitNanos) {
    List<Deliveries.Delivery> all = d.snapshot();
    long[] values = new long[all.size()];
    int n = 0;
    for (Deliveries.Delivery x : all) {
      Long committedAt = commitNanos.get(x.id());
      if (committedAt != null) {
        // The handler can only run after the commit; a sliver below zero is the producer
        // thread reading the clock after the commit returned, so count it as zero.
        values[n++] = Math.max(0, x.enteredNanos() - committedAt);
      }
    }
    values = Arrays.copyOf(values, n);
    Arrays.sort(values);
    return values;
  }

  /** The {@code p}th percentile (nearest rank) of sorted values; 0 when there are none. */
  static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }
}
