package io.boxline.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The soak's CSV (one row per sample, see {@link #HEADER}) and the charts drawn from it with
 * XChart: throughput in and out, commit → handler p50/p99, sizes, the log's tuples.
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
          + "autovacuums,vacuums,retention_runs,retention_deleted,jvm_cpu_ms_per_s";

  /** The charts, by file-name suffix. */
  static final List<String> CHARTS = List.of("throughput", "latency", "sizes", "tuples");

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

  /** Draws the charts of a soak CSV next to it ({@code <csv name>-<chart>.png}). */
  static List<Path> write(Path csvFile) throws IOException {
    Csv csv = Csv.read(csvFile);
    String base = csvFile.getFileName().toString().replaceFirst("\\.csv$", "");
    Path dir = csvFile.toAbsolutePath().getParent();
    List<Path> out = new ArrayList<>();
    String db = dbOf(csvFile);
    for (String chart : CHARTS) {
      XYChart c = chart(csv, chart, db);
      Path file = dir.resolve(base + "-" + chart + ".png");
      save(c, file);
      out.add(file);
    }
    return out;
  }

  /** One line of a chart: its legend, its CSV column and the factor that scales the column. */
  private record Line(String label, String column, double factor) {
    Line(String label, String column) {
      this(label, column, 1);
    }
  }

  static XYChart chart(Csv csv, String chart, String db) {
    // Soaks on MariaDB (at the tag bench-archive-2026-11) wrote soak-mariadb-*.csv.
    String on = db.isEmpty() ? "" : " (" + db + ")";
    double mb = 1 / 1048576.0;
    List<Line> lines = new ArrayList<>();
    String title;
    String unit;
    switch (chart) {
      case "throughput" -> {
        title = "Soak: events/s in and out";
        unit = "events/s";
        lines.add(new Line("in (published)", "in_per_s"));
        for (String s : Soak.SUBSCRIPTIONS) {
          lines.add(new Line("out, " + s, "out_" + shortName(s) + "_per_s"));
        }
      }
      case "latency" -> {
        title = "Soak: commit \u2192 handler latency per sample window";
        unit = "ms";
        lines.add(new Line("p50", "p50_ms"));
        lines.add(new Line("p99", "p99_ms"));
      }
      case "sizes" -> {
        title = "Soak: table sizes";
        unit = "MB";
        lines.add(new Line("log (table, TOAST, indexes)", "log_bytes", mb));
        lines.add(new Line("log indexes", "log_index_bytes", mb));
        lines.add(new Line("outbox", "outbox_bytes", mb));
        lines.add(new Line("all Boxline tables", "total_bytes", mb));
        lines.add(new Line("all Boxline indexes", "total_index_bytes", mb));
      }
      case "tuples" -> {
        title = "Soak: the log's live and dead tuples (pg_stat_user_tables)";
        unit = "tuples";
        lines.add(new Line("dead tuples", "log_dead_tuples"));
        lines.add(new Line("live tuples", "log_live_tuples"));
      }
      default -> throw new IllegalArgumentException("no chart " + chart);
    }
    XYChart c =
        new XYChartBuilder()
            .width(1000)
            .height(500)
            .title(title + on)
            .xAxisTitle("elapsed s")
            .yAxisTitle(unit)
            .build();
    c.getStyler()
        .setMarkerSize(0)
        .setLegendPosition(Styler.LegendPosition.OutsideS)
        .setLegendLayout(Styler.LegendLayout.Horizontal);
    boolean logY = chart.equals("latency");
    c.getStyler().setYAxisLogarithmic(logY);
    double[] t = csv.column("elapsed_s");
    double top = 0;
    for (Line l : lines) {
      // Empty cells (not measured) are left out; a log axis cannot show zero either.
      double[] y = csv.scaled(l.column(), l.factor());
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      for (int i = 0; i < y.length; i++) {
        if (!Double.isNaN(y[i]) && !Double.isNaN(t[i]) && (!logY || y[i] > 0)) {
          xs.add(t[i]);
          ys.add(y[i]);
          top = Math.max(top, y[i]);
        }
      }
      if (!xs.isEmpty()) {
        c.addSeries(l.label(), xs, ys);
      }
    }
    if (c.getSeriesMap().isEmpty()) {
      c.addSeries("no data", new double[] {0}, new double[] {logY ? 1 : 0});
    }
    // A marker where each phase starts.
    for (int i = 1; i < csv.rows(); i++) {
      if (!csv.phases.get(i).equals(csv.phases.get(i - 1))) {
        c.addAnnotation(new AnnotationLine(t[i - 1], true, false));
        c.addAnnotation(new AnnotationText(csv.phases.get(i), t[i - 1], top, false));
      }
    }
    return c;
  }

  private static void save(XYChart chart, Path file) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  /** postgresql or mariadb, from a CSV named soak-<db>-<time>.csv; empty otherwise. */
  static String dbOf(Path csvFile) {
    String base = csvFile.getFileName().toString();
    return base.startsWith("soak-") ? base.split("-")[1] : "";
  }
}
