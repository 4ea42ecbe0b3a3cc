package io.boxline.bench;

import static io.boxline.bench.Stats.f;

import java.nio.file.Path;
import java.util.ArrayList;
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
 * every event reached every subscription, and PNG charts of the CSV ({@link SoakPlots}); the
 * Markdown section is {@link #markdown}.
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
          run -> markdown(soak(run)));

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
      Options o,
      int events,
      int rate,
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

  // ------------------------------------------------------------------ the report

  /** A stretch of the load between two samples: rates and latency percentiles over it. */
  record Window(double from, double to, double in, double out, double p50, double p99, long n) {
    static Window between(Soak.Sample a, Soak.Sample b) {
      double dt = b.t() - a.t();
      AbstractHistogram lat = Soak.window(b.latency(), a.latency());
      return new Window(
          a.t(),
          b.t(),
          (b.published() - a.published()) / dt,
          (b.handledMean() - a.handledMean()) / dt,
          Soak.percentileMillis(lat, 50),
          Soak.percentileMillis(lat, 99),
          lat.getTotalCount());
    }
  }

  /** The first and the last tenth of the load (each at least one sample interval long). */
  static Window[] tenths(Soak.Result r) {
    double d = r.loadEndMark().t() - r.loadStartMark().t();
    Soak.Sample start = r.loadStartMark();
    Soak.Sample end = r.loadEndMark();
    Soak.Sample firstEnd = end;
    for (Soak.Sample s : r.samples()) {
      if (s.t() > start.t() && s.t() >= r.loadStartMark().t() + d / 10) {
        firstEnd = s.t() < end.t() ? s : end;
        break;
      }
    }
    Soak.Sample lastStart = start;
    for (Soak.Sample s : r.samples()) {
      if (s.t() < end.t() && s.t() <= r.loadEndMark().t() - d / 10 && s.t() > start.t()) {
        lastStart = s;
      }
    }
    return new Window[] {Window.between(start, firstEnd), Window.between(lastStart, end)};
  }

  static String ratio(double last, double first) {
    return first > 0 && !Double.isNaN(last) ? f("%.2f", last / first) : "–";
  }

  static String within(double last, double first) {
    if (!(first > 0) || Double.isNaN(last)) {
      return "–";
    }
    return Math.abs(last / first - 1) <= 0.10 ? "yes" : "**no**";
  }

  static String markdown(Soak.Result r) {
    Options o = r.o();
    StringBuilder sb = new StringBuilder(f("## Soak — %,d events on PostgreSQL%n%n", r.events()));
    sb.append(
        f(
            "A topic of %d partitions with RetentionPolicy.byAge(%d s) and retentionInterval(%d"
                + " s); subscriptions %s, each with a consumer of concurrency %d except %s, a group"
                + " of %d consumers; handlers record the delivery and the commit → handler latency."
                + " %,d events of about 200 bytes, %d per transaction, from %d producer threads,"
                + " paced at %,d events/s. A sample every %.0f s. Load %.0f s, drain %.1f s."
                + " Server autovacuum = %s.%n%n",
            o.get(Soak.PARTITIONS),
            o.get(Soak.RETENTION),
            o.get(Soak.INTERVAL),
            String.join(", ", Soak.SUBSCRIPTIONS),
            o.get(Soak.CONCURRENCY),
            Soak.SUBSCRIPTIONS.get(Soak.SUBSCRIPTIONS.size() - 1),
            Soak.GROUP_MEMBERS,
            r.events(),
            o.get(Soak.TXN),
            o.get(Soak.PRODUCERS),
            r.rate(),
            o.get(Soak.SAMPLE),
            r.loadEndMark().t() - r.loadStartMark().t(),
            r.drainedAt() - r.loadEndMark().t(),
            r.autovacuum()));

    // Steady state.
    Window[] w = tenths(r);
    Window a = w[0];
    Window b = w[1];
    Table t =
        new Table(
            "",
            f("first tenth (t %.0f–%.0f s)", a.from(), a.to()),
            f("last tenth (t %.0f–%.0f s)", b.from(), b.to()),
            "last / first",
            "within 10 %");
    t.row(
        "events/s in",
        f("%,.0f", a.in()),
        f("%,.0f", b.in()),
        ratio(b.in(), a.in()),
        within(b.in(), a.in()));
    t.row(
        "events/s out (per subscription, mean of 3)",
        f("%,.0f", a.out()),
        f("%,.0f", b.out()),
        ratio(b.out(), a.out()),
        within(b.out(), a.out()));
    t.row(
        "commit → handler p50 ms",
        Soak.ms(a.p50()),
        Soak.ms(b.p50()),
        ratio(b.p50(), a.p50()),
        within(b.p50(), a.p50()));
    t.row(
        "commit → handler p99 ms",
        Soak.ms(a.p99()),
        Soak.ms(b.p99()),
        ratio(b.p99(), a.p99()),
        within(b.p99(), a.p99()));
    t.row("deliveries measured", f("%,d", a.n()), f("%,d", b.n()), "", "");
    sb.append("First tenth of the load against the last:\n\n").append(t).append('\n');

    // Sizes: the CSV and the charts have every sample.
    long maxLog = 0;
    long maxDead = 0;
    for (Soak.Sample x : r.samples()) {
      maxLog = Math.max(maxLog, x.sizes().logBytes());
      maxDead = Math.max(maxDead, x.sizes().logDead());
    }
    sb.append(f("Largest log: %s MB; most dead tuples in the log: %,d.", mb(maxLog), maxDead));
    // Plateau: once retention deletes, the log should stop growing. The largest log of the first
    // half of that stretch of the load against the largest of its second half (the largest, not
    // one sample: a log kept in time segments shrinks in steps, a sawtooth).
    List<Soak.Sample> steady = new ArrayList<>();
    for (Soak.Sample x : r.samples()) {
      if (x.phase().equals(Soak.LOAD) && x.retentionDeleted() > 0 && x.sizes().logBytes() >= 0) {
        steady.add(x);
      }
    }
    if (steady.size() >= 4) {
      double mid = (steady.get(0).t() + steady.get(steady.size() - 1).t()) / 2;
      long peak1 = 0;
      long peak2 = 0;
      for (Soak.Sample x : steady) {
        if (x.t() <= mid) {
          peak1 = Math.max(peak1, x.sizes().logBytes());
        } else {
          peak2 = Math.max(peak2, x.sizes().logBytes());
        }
      }
      double grown = (double) peak2 / peak1;
      sb.append(
          f(
              " From the first retention delete (t %.0f s) to the end of the load, the largest"
                  + " log in the second half / in the first half: %s MB / %s MB = ×%.2f (%s).",
              steady.get(0).t(),
              mb(peak2),
              mb(peak1),
              grown,
              grown <= 1.10 ? "plateau" : "**still growing**"));
    } else {
      sb.append(" Retention did not delete long enough during the load to judge a plateau.");
    }
    sb.append(
        f(
            " Retention deleted %,d of %,d events (%.0f %%).%n%n",
            r.retentionDeleted(), r.events(), 100.0 * r.retentionDeleted() / r.events()));

    // Deliveries.
    Table d = new Table("subscription", "deliveries", "distinct events", "repeated", "lost");
    for (Soak.Delivered x : r.delivered()) {
      d.row(
          x.subscription(),
          f("%,d", x.deliveries()),
          f("%,d", x.distinct()),
          f("%,d", x.duplicates()),
          f("%,d", r.events() - x.distinct()));
    }
    sb.append(
            f(
                "Every one of the %,d events reached every subscription (retention never deleted"
                    + " one a subscription had not consumed); the outbox was empty at the end;"
                    + " Boxline warnings logged: %d.%n%n",
                r.events(), r.warnings()))
        .append(d)
        .append('\n');

    sb.append("CSV: ").append(r.csv().toAbsolutePath().normalize()).append("  \nCharts:");
    for (Path p : r.charts()) {
      sb.append("\n- ").append(p.toAbsolutePath().normalize());
    }
    sb.append('\n');
    return sb.toString();
  }
}
