package io.boxline.bench;

import static io.boxline.bench.Soak.mb;
import static io.boxline.bench.Stats.f;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.AbstractHistogram;

/** The soak's Markdown section: first tenth against last, sizes, deliveries, files. */
final class SoakReport {
  private SoakReport() {}

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
    double d = r.loadEnd() - r.loadStart();
    Soak.Sample start = r.loadStartMark();
    Soak.Sample end = r.loadEndMark();
    Soak.Sample firstEnd = end;
    for (Soak.Sample s : r.samples()) {
      if (s.t() > start.t() && s.t() >= r.loadStart() + d / 10) {
        firstEnd = s.t() < end.t() ? s : end;
        break;
      }
    }
    Soak.Sample lastStart = start;
    for (Soak.Sample s : r.samples()) {
      if (s.t() < end.t() && s.t() <= r.loadEnd() - d / 10 && s.t() > start.t()) {
        lastStart = s;
      }
    }
    return new Window[] {Window.between(start, firstEnd), Window.between(lastStart, end)};
  }

  /** The first sample at or past {@code fraction} of the events published. */
  static Soak.Sample at(Soak.Result r, double fraction) {
    for (Soak.Sample s : r.samples()) {
      if (s.published() >= Math.ceil(fraction * r.events()) && s.sizes().totalBytes() >= 0) {
        return s;
      }
    }
    return null;
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
            r.loadEnd() - r.loadStart(),
            r.drainedAt() - r.loadEnd(),
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

    // Sizes.
    Table s =
        new Table(
            "published",
            "t s",
            "phase",
            "log MB",
            "log indexes MB",
            "log segments",
            "outbox MB",
            "all tables MB",
            "all indexes MB",
            "log live / dead tuples",
            "autovacuums / vacuums",
            "retention deleted");
    double[] fractions = {0.25, 0.5, 0.75, 1.0};
    for (double fr : fractions) {
      Soak.Sample x = at(r, fr);
      if (x == null) {
        continue;
      }
      sizeRow(s, f("%.0f %%", fr * 100), x);
    }
    Soak.Sample last = r.samples().get(r.samples().size() - 1);
    sizeRow(s, "end (after the drain)", last);
    long maxLog = 0;
    long maxDead = 0;
    for (Soak.Sample x : r.samples()) {
      maxLog = Math.max(maxLog, x.sizes().logBytes());
      maxDead = Math.max(maxDead, x.sizes().logDead());
    }
    sb.append("Sizes as the run went on (first sample at or past each share of the events):\n\n")
        .append(s)
        .append('\n');
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

  private static void sizeRow(Table t, String what, Soak.Sample x) {
    SoakSizes.Reading z = x.sizes();
    t.row(
        what,
        f("%.0f", x.t()),
        x.phase(),
        mb(z.logBytes()),
        mb(z.logIndexBytes()),
        z.logPartitions() < 0 ? "?" : Long.toString(z.logPartitions()),
        mb(z.outboxBytes()),
        mb(z.totalBytes()),
        mb(z.totalIndexBytes()),
        f("%,d / %,d", z.logLive(), z.logDead()),
        z.autovacuums() < 0 ? "–" : z.autovacuums() + " / " + z.vacuums(),
        f("%,d", x.retentionDeleted()));
  }
}
