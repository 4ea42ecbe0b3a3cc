package io.boxline.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's CSV (one row per sample, see {@link #HEADER}) and the charts drawn from it with {@link
 * LineChart}: throughput in and out, commit → handler p50/p99, sizes, the log's tuples, JVM CPU.
 * The workload {@code soak-plot} draws them again from a CSV:
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench compile exec:java \
 *   -Dexec.args="soak-plot --csv=boxline-bench/target/soak-postgresql-....csv --to=docs/images/soak"
 * </pre>
 */
final class SoakPlots {
  private SoakPlots() {}

  /** The CSV's columns; sizes in bytes, rates per second, latencies in ms, empty = not measured. */
  static final String HEADER =
      "elapsed_s,phase,published,"
          + columns("handled_")
          + ",in_per_s,"
          + columns("out_", "_per_s")
          + ",p50_ms,p99_ms,latencies,log_bytes,log_index_bytes,log_partitions,log_live_tuples,"
          + "log_dead_tuples,log_autovacuums,outbox_bytes,total_bytes,total_index_bytes,"
          + "autovacuums,vacuums,retention_runs,retention_deleted,jvm_cpu_ms_per_s,heap_used_mb";

  /** The charts, by file-name suffix. */
  static final List<String> CHARTS = List.of("throughput", "latency", "sizes", "tuples", "cpu");

  private static String columns(String prefix) {
    return columns(prefix, "");
  }

  private static String columns(String prefix, String suffix) {
    List<String> out = new ArrayList<>();
    for (String s : Soak.SUBSCRIPTIONS) {
      out.add(prefix + shortName(s) + suffix);
    }
    return String.join(",", out);
  }

  private static String shortName(String subscription) {
    return subscription.replace("soak-", "");
  }

  /** One CSV row. */
  static String row(Soak.Sample s) {
    StringBuilder sb = new StringBuilder();
    sb.append(Stats.f("%.1f", s.t())).append(',').append(s.phase()).append(',');
    sb.append(s.published());
    for (long h : s.handled()) {
      sb.append(',').append(h);
    }
    sb.append(',').append(num(s.inRate(), 1));
    for (double r : s.outRate()) {
      sb.append(',').append(num(r, 1));
    }
    sb.append(',').append(num(s.p50(), 3));
    sb.append(',').append(num(s.p99(), 3));
    sb.append(',').append(s.latencies());
    SoakSizes.Reading r = s.sizes();
    for (long v :
        new long[] {
          r.logBytes(),
          r.logIndexBytes(),
          r.logPartitions(),
          r.logLive(),
          r.logDead(),
          r.logAutovacuums(),
          r.outboxBytes(),
          r.totalBytes(),
          r.totalIndexBytes(),
          r.autovacuums(),
          r.vacuums(),
          s.retentionRuns(),
          s.retentionDeleted()
        }) {
      sb.append(',').append(v < 0 ? "" : Long.toString(v));
    }
    sb.append(',').append(num(s.cpuMsPerSecond(), 1));
    sb.append(',').append(num(s.heapBytes() / 1048576.0, 1));
    return sb.toString();
  }

  private static String num(double v, int decimals) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "" : Stats.f("%." + decimals + "f", v);
  }

  /** boxline-bench/target, from the repository root or the module's directory. */
  static Path targetDir() throws IOException {
    Path dir =
        Files.isDirectory(Path.of("boxline-bench"))
            ? Path.of("boxline-bench", "target")
            : Path.of("target");
    Files.createDirectories(dir);
    return dir;
  }

  /** docs/images/soak of the repository, from its root or the module's directory. */
  static Path docsDir() {
    return Files.isDirectory(Path.of("boxline-bench"))
        ? Path.of("docs", "images", "soak")
        : Path.of("..", "docs", "images", "soak");
  }

  /** The CSV read back: a column per header name, NaN where a cell is empty. */
  static final class Csv {
    final List<String> phases = new ArrayList<>();
    private final Map<String, double[]> columns = new HashMap<>();

    static Csv read(Path file) throws IOException {
      List<String> lines = Files.readAllLines(file);
      if (lines.isEmpty()) {
        throw new IOException(file + " is empty");
      }
      String[] header = lines.get(0).split(",", -1);
      int n = lines.size() - 1;
      Csv csv = new Csv();
      double[][] values = new double[header.length][n];
      for (int i = 0; i < n; i++) {
        String[] cells = lines.get(i + 1).split(",", -1);
        for (int c = 0; c < header.length; c++) {
          String v = c < cells.length ? cells[c].trim() : "";
          if (header[c].equals("phase")) {
            csv.phases.add(v);
            values[c][i] = Double.NaN;
          } else {
            values[c][i] = v.isEmpty() ? Double.NaN : Double.parseDouble(v);
          }
        }
      }
      for (int c = 0; c < header.length; c++) {
        csv.columns.put(header[c], values[c]);
      }
      return csv;
    }

    int rows() {
      return phases.size();
    }

    double[] column(String name) {
      double[] v = columns.get(name);
      if (v == null) {
        throw new IllegalArgumentException("no column " + name);
      }
      return v;
    }

    /** A column multiplied by {@code factor}. */
    double[] scaled(String name, double factor) {
      double[] v = column(name).clone();
      for (int i = 0; i < v.length; i++) {
        v[i] *= factor;
      }
      return v;
    }
  }

  /**
   * Draws the charts of a soak CSV next to it ({@code <csv name>-<chart>.png}) and, when {@code
   * docs}, also to {@link #docsDir()} as {@code soak-<db>-<chart>.png}. Returns the files written.
   */
  static List<Path> write(Path csvFile, boolean docs) throws IOException {
    Csv csv = Csv.read(csvFile);
    String base = csvFile.getFileName().toString().replaceFirst("\\.csv$", "");
    Path dir = csvFile.toAbsolutePath().getParent();
    List<Path> out = new ArrayList<>();
    String db = dbOf(csvFile);
    for (String chart : CHARTS) {
      LineChart c = chart(csv, chart, db);
      Path file = dir.resolve(base + "-" + chart + ".png");
      c.write(file);
      out.add(file);
      if (docs) {
        Path d = docsDir().resolve("soak-" + (db.isEmpty() ? "" : db + "-") + chart + ".png");
        c.write(d);
        out.add(d);
      }
    }
    return out;
  }

  static LineChart chart(Csv csv, String chart, String db) {
    boolean mariaDb = db.equals("mariadb");
    String on = db.isEmpty() ? "" : " (" + (mariaDb ? "MariaDB" : "PostgreSQL") + ")";
    double[] t = csv.column("elapsed_s");
    LineChart c =
        switch (chart) {
          case "throughput" -> {
            LineChart l =
                new LineChart("Soak: events/s in and out" + on, "elapsed s", "events/s")
                    .series("in (published)", t, csv.column("in_per_s"));
            for (String s : Soak.SUBSCRIPTIONS) {
              l.series("out, " + s, t, csv.column("out_" + shortName(s) + "_per_s"));
            }
            yield l;
          }
          case "latency" ->
              new LineChart(
                      "Soak: commit \u2192 handler latency per sample window" + on,
                      "elapsed s",
                      "ms")
                  .logY(true)
                  .series("p50", t, csv.column("p50_ms"))
                  .series("p99", t, csv.column("p99_ms"));
          case "sizes" ->
              new LineChart("Soak: table sizes" + on, "elapsed s", "MB")
                  .series(
                      mariaDb ? "log (its file)" : "log (table, TOAST, indexes)",
                      t,
                      csv.scaled("log_bytes", 1 / 1048576.0))
                  .series(
                      mariaDb ? "log indexes (InnoDB statistics)" : "log indexes",
                      t,
                      csv.scaled("log_index_bytes", 1 / 1048576.0))
                  .series(
                      mariaDb ? "outbox (its file)" : "outbox",
                      t,
                      csv.scaled("outbox_bytes", 1 / 1048576.0))
                  .series(
                      mariaDb ? "all Boxline tables (their files)" : "all Boxline tables",
                      t,
                      csv.scaled("total_bytes", 1 / 1048576.0))
                  .series(
                      mariaDb ? "all Boxline indexes (InnoDB statistics)" : "all Boxline indexes",
                      t,
                      csv.scaled("total_index_bytes", 1 / 1048576.0));
          case "tuples" ->
              mariaDb
                  ? new LineChart(
                          "Soak: log rows (estimate) and InnoDB history list length" + on,
                          "elapsed s",
                          "rows")
                      .series("log rows (table_rows)", t, csv.column("log_live_tuples"))
                      .series(
                          "history list length (undo not purged, whole server)",
                          t,
                          csv.column("log_dead_tuples"))
                  : new LineChart(
                          "Soak: the log's live and dead tuples (pg_stat_user_tables)" + on,
                          "elapsed s",
                          "tuples")
                      .series("dead tuples", t, csv.column("log_dead_tuples"))
                      .series("live tuples", t, csv.column("log_live_tuples"));
          case "cpu" ->
              new LineChart(
                      "Soak: JVM CPU (producers, Boxline, consumers)" + on, "elapsed s", "CPU ms/s")
                  .series("JVM CPU", t, csv.column("jvm_cpu_ms_per_s"));
          default -> throw new IllegalArgumentException("no chart " + chart);
        };
    // A marker where each phase starts (labels joined where two would overlap).
    double span = t.length == 0 ? 0 : t[t.length - 1] - t[0];
    double at = Double.NaN;
    String label = "";
    for (int i = 1; i < csv.rows(); i++) {
      if (csv.phases.get(i).equals(csv.phases.get(i - 1))) {
        continue;
      }
      double x = t[i - 1];
      if (!Double.isNaN(at) && x - at < 0.04 * span) {
        label += ", " + csv.phases.get(i);
        continue;
      }
      if (!Double.isNaN(at)) {
        c.marker(at, label);
      }
      at = x;
      label = csv.phases.get(i);
    }
    if (!Double.isNaN(at)) {
      c.marker(at, label);
    }
    return c;
  }

  static final Opt<String> CSV =
      Opt.text("csv", null, "the soak CSV to draw (boxline-bench/target/soak-<db>-<time>.csv)");
  static final Opt<String> TO =
      Opt.text(
          "to",
          null,
          "also write soak-<db>-<chart>.png into this directory (docs/images/soak for the docs)");

  /** {@code soak-plot --csv=<file> [--to=<directory>]}: the charts of a soak CSV, drawn again. */
  static final Workload WORKLOAD =
      Workload.of(
          "soak-plot",
          Bench.Suite.TOOL,
          "draws the charts of a soak CSV again (no benchmark)",
          List.of(CSV, TO),
          run -> {
            String file = run.o().get(CSV);
            if (file == null) {
              throw new IllegalArgumentException("soak-plot needs --csv=<a soak CSV>");
            }
            Path csvFile = Path.of(file);
            List<Path> written = new ArrayList<>(write(csvFile, false));
            String to = run.o().get(TO);
            if (to != null) {
              Csv csv = Csv.read(csvFile);
              String db = dbOf(csvFile);
              for (String chart : CHARTS) {
                Path d =
                    Path.of(to).resolve("soak-" + (db.isEmpty() ? "" : db + "-") + chart + ".png");
                chart(csv, chart, db).write(d);
                written.add(d);
              }
            }
            StringBuilder sb = new StringBuilder();
            for (Path p : written) {
              sb.append("wrote ").append(p).append('\n');
            }
            return sb.toString();
          });

  /** postgresql or mariadb, from a CSV named soak-<db>-<time>.csv; empty otherwise. */
  static String dbOf(Path csvFile) {
    String base = csvFile.getFileName().toString();
    return base.startsWith("soak-") ? base.split("-")[1] : "";
  }
}
