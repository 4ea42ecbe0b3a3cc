package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Formats workload results as Markdown. */
final class Report {
  private Report() {}

  static String w1(Options o, List<W1Throughput.Trial> trials) {
    StringBuilder sb =
        section(
            o,
            "## W1 throughput%n%n%d producer threads, %,d events per run, %d partitions, consumer"
                + " concurrency %d, batch %d, %d runs per configuration (baseline and Boxline"
                + " alternating).%n%n",
            W1Throughput.THREADS,
            W1Throughput.EVENTS,
            Bench.PARTITIONS,
            W1Throughput.CONCURRENCY,
            W1Throughput.BATCH,
            W1Throughput.RUNS);
    Table summary =
        new Table(
            "Events/txn",
            "Raw inserts, events/s: median (min–max)",
            "Boxline end to end, events/s: median (min–max)",
            "Ratio (medians)",
            "Ratio per pair (min–max)",
            "Boxline producers only, events/s (median)",
            "Target ≥ 0.9×");
    Table raw =
        new Table(
            "Events/txn",
            "Run",
            "System",
            "Seconds",
            "Events/s",
            "Producers done (s)",
            "Machine during the run");
    for (int txn : o.get(W1Throughput.TXN)) {
      List<Double> base = new ArrayList<>();
      List<Double> box = new ArrayList<>();
      List<Double> boxProduce = new ArrayList<>();
      List<Double> pairs = new ArrayList<>();
      Double pendingBase = null;
      for (W1Throughput.Trial t : trials) {
        if (t.txnSize() != txn) {
          continue;
        }
        raw.row(
            txn,
            t.run(),
            t.system(),
            Stats.f("%.2f", t.seconds()),
            Stats.rate(t.eventsPerSecond()),
            Stats.f("%.2f", t.produceSeconds()),
            t.noise());
        if (!t.system().equals("boxline")) {
          base.add(t.eventsPerSecond());
          pendingBase = t.eventsPerSecond();
        } else {
          box.add(t.eventsPerSecond());
          boxProduce.add(t.events() / t.produceSeconds());
          if (pendingBase != null) {
            pairs.add(t.eventsPerSecond() / pendingBase);
          }
        }
      }
      double[] b = unbox(base);
      double[] x = unbox(box);
      double[] p = unbox(pairs);
      double ratio = Stats.median(x) / Stats.median(b);
      summary.row(
          txn,
          Stats.f(
              "%s (%s–%s)",
              Stats.rate(Stats.median(b)), Stats.rate(Stats.min(b)), Stats.rate(Stats.max(b))),
          Stats.f(
              "%s (%s–%s)",
              Stats.rate(Stats.median(x)), Stats.rate(Stats.min(x)), Stats.rate(Stats.max(x))),
          Stats.f("%.2f×", ratio),
          Stats.f("%.2f–%.2f", Stats.min(p), Stats.max(p)),
          Stats.rate(Stats.median(unbox(boxProduce))),
          ratio >= 0.9 ? "pass" : "FAIL");
    }
    sb.append(summary).append('\n').append("Every run:\n\n").append(raw).append('\n');
    return sb.toString();
  }

  static String w2(Options o, List<W2Latency.Result> results) {
    StringBuilder sb =
        section(
            o,
            "## W2 latency (commit returned → handler entered)%n%n1 event per transaction, paced"
                + " open-loop by %d sender threads, %.0f s warm-up at max(rate, %d/s) so the JIT has"
                + " compiled the hot paths, a 1 s pause, then %.0f s measured at the rate; %d"
                + " partitions, consumer concurrency %d.%n%n",
            W2Latency.THREADS,
            W2Latency.WARMUP,
            W2Latency.WARMUP_RATE,
            W2Latency.SECONDS,
            Bench.PARTITIONS,
            W2Latency.CONCURRENCY);
    Table t =
        new Table(
            "Producer",
            "Rate/s",
            "Events",
            "Achieved/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "Producer commit p50 / p99 ms",
            "Send lag p99 ms",
            "Target",
            "Machine during the run");
    for (W2Latency.Result r : results) {
      String target = "";
      long p99 = Stats.percentile(r.latency(), 99);
      if (r.where().equals("same JVM") && r.rate() == 200) {
        target = (p99 <= 1_000_000 ? "pass" : "FAIL") + " (p99 ≤ 1 ms)";
      } else if (r.where().equals("other JVM") && r.rate() == 1000) {
        target = (p99 <= 10_000_000 ? "pass" : "FAIL") + " (p99 ≤ 10 ms)";
      }
      t.row(
          r.where(),
          r.rate(),
          r.measured(),
          Stats.f("%.0f", r.achievedRate()),
          Stats.ms(Stats.percentile(r.latency(), 50)),
          Stats.ms(Stats.percentile(r.latency(), 90)),
          Stats.ms(p99),
          Stats.ms(Stats.percentile(r.latency(), 100)),
          Stats.p50p99(r.commit()),
          Stats.ms(Stats.percentile(r.late(), 99)),
          target,
          r.noise());
    }
    sb.append(t).append('\n');
    return sb.toString();
  }

  static String w3(Options o, List<W3Idle.Result> results) {
    StringBuilder sb =
        section(
            o,
            "## W3 idle cost%n%nOne Boxline with default settings (sequencer leader, wake-up"
                + " listener) and N consumers, each on a subscription of its own over one"
                + " %d-partition topic; nothing published; %d s settle, then %d s counted. Statements"
                + " counted on the client under the pool (every execute, COMMIT/ROLLBACK sent, and"
                + " pool validation ping).%n%n",
            Bench.PARTITIONS,
            W3Idle.SETTLE,
            W3Idle.SECONDS);
    Table t =
        new Table(
            "Idle consumers",
            "Statements/s (client-side, exact)",
            "of which pool validation pings/s",
            "Statements/s without pings",
            "Statements/s per consumer (total / N)",
            "Added per consumer vs 0 consumers",
            "Server xacts/s (shared database)",
            "Target ≤ 1/s per consumer",
            "Machine during the run");
    double zero = Double.NaN;
    for (W3Idle.Result r : results) {
      if (r.consumers() == 0) {
        zero = r.perSecond();
      }
    }
    for (W3Idle.Result r : results) {
      double per = r.consumers() == 0 ? Double.NaN : r.perSecond() / r.consumers();
      double added =
          r.consumers() == 0 || Double.isNaN(zero)
              ? Double.NaN
              : (r.perSecond() - zero) / r.consumers();
      String target =
          r.consumers() == 0
              ? "n/a"
              : (per <= 1.0 ? "pass" : "FAIL")
                  + " total/N; "
                  + (Double.isNaN(added) ? "?" : (added <= 1.0 ? "pass" : "FAIL"))
                  + " added";
      t.row(
          r.consumers(),
          Stats.f("%.2f", r.perSecond()),
          Stats.f("%.2f", r.pings() / r.seconds()),
          Stats.f("%.2f", (r.statements() - r.pings()) / r.seconds()),
          Double.isNaN(per) ? "–" : Stats.f("%.2f", per),
          Double.isNaN(added) ? "–" : Stats.f("%.2f", added),
          Stats.f("%.1f", r.serverXactsPerSecond()),
          target,
          r.noise());
    }
    sb.append(t).append('\n');
    for (W3Idle.Result r : results) {
      sb.append(Stats.f("Statements with %d idle consumer(s), per second:%n%n", r.consumers()));
      Table b = new Table("Thread | statement", "Count", "Per second");
      for (Map.Entry<String, Long> e : r.breakdown().entrySet()) {
        long n = e.getValue();
        b.row(e.getKey(), n, Stats.f("%.2f", n / r.seconds()));
      }
      sb.append(b).append('\n');
    }
    return sb.toString();
  }

  /** A section's heading and opening paragraph: {@code format} filled with the options' values. */
  private static StringBuilder section(Options o, String format, Opt<?>... options) {
    Object[] values = new Object[options.length];
    for (int i = 0; i < options.length; i++) {
      values[i] = o.get(options[i]);
    }
    return new StringBuilder(Stats.f(format, values));
  }

  private static double[] unbox(List<Double> list) {
    double[] v = new double[list.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = list.get(i);
    }
    return v;
  }
}
