package io.boxline.bench;

import static io.boxline.bench.Stats.f;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.AbstractHistogram;

/**
 * The soak (issue 20): millions of events through a topic of 64 partitions read by three
 * subscriptions (two single consumers and a group of three), with retention by age deleting as fast
 * as producers write, in a database made for the run. Every few seconds a sample goes to a CSV
 * (throughput in and out, commit → handler p50/p99 of the window, sizes of the log, its indexes,
 * the outbox and all Boxline tables, the log's live and dead tuples, autovacuum runs, JVM CPU). At
 * the end: the first tenth of the load against the last, sizes at 25/50/75/100 %, a check that
 * every event reached every subscription, and PNG charts of the CSV ({@link SoakPlots}).
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench compile exec:java -Dexec.args="soak --soak.events=20000000"
 * </pre>
 */
final class Soak {
  private Soak() {}

  private static final Workload.Definition DEF = Workload.define("soak", Bench.Suite.SOAK);

  static final Opt<Integer> EVENTS = DEF.integer("events", 2_000_000, "events published in all");
  static final Opt<Integer> RATE = DEF.integer("rate", 5_000, "events/s, paced open-loop");
  static final Opt<Integer> PARTITIONS = DEF.integer("partitions", 64, "topic partitions");
  static final Opt<Integer> PRODUCERS = DEF.integer("producers", 4, "producer threads");
  static final Opt<Integer> TXN = DEF.integer("txn", 10, "events per transaction");
  static final Opt<Integer> CONCURRENCY = DEF.integer("concurrency", 4, "consumer concurrency");
  static final Opt<Integer> POOL = DEF.integer("pool", 32, "pool size");
  static final Opt<Integer> RETENTION =
      DEF.integer("retention", 120, "the topic's retention by age, s (RetentionPolicy.byAge)");
  static final Opt<Integer> INTERVAL =
      DEF.integer("interval", 5, "retention interval, s (Boxline.builder().retentionInterval)");
  static final Opt<Double> SAMPLE = DEF.decimal("sample", 5, "s between samples");
  static final Opt<Integer> DRAIN =
      DEF.integer("drain-timeout", 600, "s the subscriptions get to catch up after the load");

  static final Workload WORKLOAD =
      DEF.runs(
          "millions of events through 64 partitions, 3 subscriptions (one a group of 3),"
              + " retention deleting as fast as producers write; CSV, charts, first vs last tenth",
          run -> SoakReport.markdown(soak(run)));

  /** The subscriptions: two with a consumer each, one with a group of three. */
  static final List<String> SUBSCRIPTIONS = List.of("soak-a", "soak-b", "soak-group");

  static final int GROUP_MEMBERS = 3;
  static final int KEYS = 10_000;

  /** The phases of a run, as written in the CSV. */
  static final String LOAD = "load";

  static final String DRAIN_PHASE = "drain";

  /**
   * One sample. Counters are cumulative (published, handled per subscription, latency histogram,
   * JVM CPU, retention); rates and percentiles are over the window since the previous sample.
   */
  record Sample(
      double t,
      String phase,
      long published,
      long[] handled,
      AbstractHistogram latency,
      SoakSizes.Reading sizes,
      long cpuNanos,
      long retentionRuns,
      long retentionDeleted,
      double inRate,
      double[] outRate,
      double p50,
      double p99,
      long latencies,
      double cpuMsPerSecond) {
    /** Events handled per subscription, on average. */
    double handledMean() {
      double s = 0;
      for (long h : handled) {
        s += h;
      }
      return s / handled.length;
    }
  }

  /** Per subscription: events delivered (handler calls), distinct, and repeated. */
  record Delivered(String subscription, long deliveries, long distinct, long duplicates) {}

  record Result(
      String db,
      Options o,
      int events,
      int rate,
      double loadStart,
      double loadEnd,
      double drainedAt,
      List<Sample> samples,
      Sample loadStartMark,
      Sample loadEndMark,
      String autovacuum,
      List<Delivered> delivered,
      long unknown,
      long outboxLeft,
      long retentionDeleted,
      long warnings,
      Path csv,
      List<Path> charts) {}

  /** The events one subscription saw: a bit per event index. */
  static final class Tracker {
    private final AtomicLongArray bits;
    private final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong distinct = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();

    Tracker(int events) {
      bits = new AtomicLongArray((events + 63) / 64);
    }

    void mark(long index) {
      deliveries.incrementAndGet();
      int word = (int) (index >>> 6);
      long bit = 1L << (index & 63);
      long before = bits.getAndAccumulate(word, bit, (a, b) -> a | b);
      if ((before & bit) == 0) {
        distinct.incrementAndGet();
      } else {
        duplicates.incrementAndGet();
      }
    }

    long distinct() {
      return distinct.get();
    }

    long deliveries() {
      return deliveries.get();
    }

    /** The first event index in {@code [0, events)} never delivered, or -1. */
    long firstMissing(int events) {
      for (int i = 0; i < events; i++) {
        if ((bits.get(i >>> 6) & (1L << (i & 63))) == 0) {
          return i;
        }
      }
      return -1;
    }
  }

  static Result soak(Run run) throws Exception {
    return new SoakRunner(run).run();
  }

  /**
   * The commit → handler latencies (µs) recorded between two cumulative snapshots of the soak's
   * histogram ({@code earlier} null: all of {@code later}).
   */
  static AbstractHistogram window(AbstractHistogram later, AbstractHistogram earlier) {
    AbstractHistogram w = later.copy();
    if (earlier != null) {
      w.subtract(earlier);
    }
    return w;
  }

  /** The percentile {@code p} of a window in ms, the middle of its bucket; NaN when empty. */
  static double percentileMillis(AbstractHistogram window, double p) {
    return window.getTotalCount() == 0
        ? Double.NaN
        : window.medianEquivalentValue(window.getValueAtPercentile(p)) / 1000.0;
  }

  static String ms(double millis) {
    return Double.isNaN(millis) ? "–" : f("%.1f", millis);
  }

  static String mb(long bytes) {
    return bytes < 0 ? "?" : f("%.1f", bytes / 1048576.0);
  }
}
