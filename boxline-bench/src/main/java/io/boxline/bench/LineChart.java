package io.boxline.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Shape;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * A small line chart drawn with plain java.awt into a PNG (headless; no dependency): a title, axes
 * with "nice" ticks (1, 2, 5 × 10^n; powers of ten on a logarithmic y axis), axis labels, a grid,
 * dashed vertical markers with a label, and a legend. Values that are NaN (or not positive on a
 * logarithmic axis) leave a gap in their line.
 *
 * <pre>{@code
 * new LineChart("Throughput", "elapsed s", "events/s")
 *     .series("in", xs, in)
 *     .series("out", xs, out)
 *     .marker(120, "load ends")
 *     .write(Path.of("throughput.png"));
 * }</pre>
 */
final class LineChart {
  /** The colours given to series in turn (colour-blind friendly, Okabe–Ito). */
  static final Color[] PALETTE = {
    new Color(0x0072B2),
    new Color(0xD55E00),
    new Color(0x009E73),
    new Color(0xCC79A7),
    new Color(0xE69F00),
    new Color(0x56B4E9),
    new Color(0x000000),
  };

  private record Series(String name, double[] x, double[] y, Color color, boolean dashed) {}

  private record Marker(double x, String label) {}

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final List<Series> series = new ArrayList<>();
  private final List<Marker> markers = new ArrayList<>();
  private int width = 1000;
  private int height = 520;
  private boolean logY;
  private boolean yFromZero = true;

  LineChart(String title, String xLabel, String yLabel) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
  }

  LineChart size(int width, int height) {
    this.width = width;
    this.height = height;
    return this;
  }

  /** A logarithmic y axis (values at or below zero are left out). */
  LineChart logY(boolean log) {
    this.logY = log;
    return this;
  }

  /** Whether a linear y axis starts at zero (default) or at the smallest value. */
  LineChart yFromZero(boolean fromZero) {
    this.yFromZero = fromZero;
    return this;
  }

  LineChart series(String name, double[] x, double[] y) {
    return series(name, x, y, PALETTE[series.size() % PALETTE.length], false);
  }

  LineChart series(String name, double[] x, double[] y, Color color, boolean dashed) {
    if (x.length != y.length) {
      throw new IllegalArgumentException(name + ": " + x.length + " x values, " + y.length + " y");
    }
    series.add(new Series(name, x.clone(), y.clone(), color, dashed));
    return this;
  }

  /** A dashed vertical line at {@code x}, labelled at the top. */
  LineChart marker(double x, String label) {
    markers.add(new Marker(x, label));
    return this;
  }

  /** Writes the chart as a PNG (creating the directory). */
  void write(Path file) throws IOException {
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    if (!ImageIO.write(render(), "png", file.toFile())) {
      throw new IOException("no PNG writer");
    }
  }

  BufferedImage render() {
    System.setProperty("java.awt.headless", "true");
    BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    try {
      draw(g);
    } finally {
      g.dispose();
    }
    return img;
  }

  private boolean usable(double y) {
    return !Double.isNaN(y) && !Double.isInfinite(y) && (!logY || y > 0);
  }

  private void draw(Graphics2D g) {
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(
        RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    Font base = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    Font bold = base.deriveFont(Font.BOLD, 15f);

    // Data ranges.
    double x0 = Double.POSITIVE_INFINITY;
    double x1 = Double.NEGATIVE_INFINITY;
    double y0 = Double.POSITIVE_INFINITY;
    double y1 = Double.NEGATIVE_INFINITY;
    for (Series s : series) {
      for (int i = 0; i < s.x.length; i++) {
        if (Double.isNaN(s.x[i])) {
          continue;
        }
        x0 = Math.min(x0, s.x[i]);
        x1 = Math.max(x1, s.x[i]);
        if (usable(s.y[i])) {
          y0 = Math.min(y0, s.y[i]);
          y1 = Math.max(y1, s.y[i]);
        }
      }
    }
    if (x0 > x1) {
      x0 = 0;
      x1 = 1;
    }
    if (x0 == x1) {
      x1 = x0 + 1;
    }
    if (y0 > y1) {
      y0 = logY ? 1 : 0;
      y1 = logY ? 10 : 1;
    }
    double[] yTicks;
    if (logY) {
      double lo = Math.pow(10, Math.floor(Math.log10(y0)));
      double hi = Math.pow(10, Math.ceil(Math.log10(y1)));
      if (hi <= lo) {
        hi = lo * 10;
      }
      y0 = lo;
      y1 = hi;
      yTicks = logTicks(lo, hi);
    } else {
      if (yFromZero) {
        y0 = Math.min(0, y0);
      }
      if (y0 == y1) {
        y1 = y0 + 1;
      }
      double step = niceStep((y1 - y0) / 6);
      y0 = Math.floor(y0 / step) * step;
      y1 = Math.ceil(y1 / step) * step;
      yTicks = ticks(y0, y1, step);
    }
    double xStep = niceStep((x1 - x0) / 8);
    double[] xTicks = ticks(Math.ceil(x0 / xStep) * xStep, x1, xStep);

    // Plot area: room for the y tick labels at the left, the legend below the title.
    g.setFont(base);
    FontMetrics fm = g.getFontMetrics();
    int yLabelWidth = 0;
    for (double t : yTicks) {
      yLabelWidth = Math.max(yLabelWidth, fm.stringWidth(yLabel(t, yTicks)));
    }
    int left = 30 + yLabelWidth + 12;
    int right = width - 25;
    int top = 44 + legendHeight(fm);
    int bottom = height - 52;

    // Title.
    g.setFont(bold);
    g.setColor(Color.BLACK);
    g.drawString(title, (width - g.getFontMetrics().stringWidth(title)) / 2, 26);
    g.setFont(base);

    // Grid and ticks.
    Stroke grid = new Stroke(new Color(0xE3E3E3), 1f, false);
    for (double t : yTicks) {
      int py = py(t, y0, y1, top, bottom);
      grid.apply(g);
      g.drawLine(left, py, right, py);
      g.setColor(Color.DARK_GRAY);
      String l = yLabel(t, yTicks);
      g.drawString(l, left - 8 - fm.stringWidth(l), py + fm.getAscent() / 2 - 1);
    }
    for (double t : xTicks) {
      int px = px(t, x0, x1, left, right);
      grid.apply(g);
      g.drawLine(px, top, px, bottom);
      g.setColor(Color.DARK_GRAY);
      String l = label(t, xTicks);
      g.drawString(l, px - fm.stringWidth(l) / 2, bottom + fm.getAscent() + 6);
    }

    // Axes.
    g.setColor(Color.BLACK);
    g.setStroke(new BasicStroke(1.2f));
    g.drawLine(left, bottom, right, bottom);
    g.drawLine(left, top, left, bottom);
    g.drawString(xLabel, (left + right - fm.stringWidth(xLabel)) / 2, height - 14);
    Graphics2D rotated = (Graphics2D) g.create();
    rotated.rotate(-Math.PI / 2);
    String yl = yLabel + (logY ? " (log scale)" : "");
    rotated.drawString(yl, -(top + bottom + fm.stringWidth(yl)) / 2, 18);
    rotated.dispose();

    // Markers.
    for (Marker m : markers) {
      if (m.x < x0 || m.x > x1) {
        continue;
      }
      int px = px(m.x, x0, x1, left, right);
      new Stroke(new Color(0x777777), 1f, true).apply(g);
      g.drawLine(px, top, px, bottom);
      g.setColor(new Color(0x555555));
      g.drawString(m.label, px + 4, top + fm.getAscent() + 2);
    }

    // Lines.
    Shape clip = g.getClip();
    g.clipRect(left, top - 1, right - left + 1, bottom - top + 2);
    for (Series s : series) {
      new Stroke(s.color, 2f, s.dashed).apply(g);
      Path2D.Double path = new Path2D.Double();
      boolean drawing = false;
      int points = 0;
      double lastX = 0;
      double lastY = 0;
      for (int i = 0; i < s.x.length; i++) {
        if (Double.isNaN(s.x[i]) || !usable(s.y[i])) {
          drawing = false;
          continue;
        }
        double px = pxd(s.x[i], x0, x1, left, right);
        double py = pyd(s.y[i], y0, y1, top, bottom);
        if (drawing) {
          path.lineTo(px, py);
        } else {
          path.moveTo(px, py);
          drawing = true;
        }
        points++;
        lastX = px;
        lastY = py;
      }
      g.draw(path);
      if (points == 1) {
        g.fillOval((int) lastX - 3, (int) lastY - 3, 6, 6);
      }
    }
    g.setClip(clip);

    // Legend: one row under the title, wrapping when long.
    int lx = left;
    int ly = 44;
    for (Series s : series) {
      int w = 28 + fm.stringWidth(s.name) + 18;
      if (lx + w > right && lx > left) {
        lx = left;
        ly += fm.getHeight() + 4;
      }
      new Stroke(s.color, 3f, s.dashed).apply(g);
      g.drawLine(lx, ly + fm.getAscent() / 2, lx + 22, ly + fm.getAscent() / 2);
      g.setColor(Color.BLACK);
      g.drawString(s.name, lx + 28, ly + fm.getAscent());
      lx += w;
    }
  }

  private int legendHeight(FontMetrics fm) {
    int rows = 1;
    int lx = 0;
    int room = width - 120;
    for (Series s : series) {
      int w = 28 + fm.stringWidth(s.name) + 18;
      if (lx + w > room && lx > 0) {
        rows++;
        lx = 0;
      }
      lx += w;
    }
    return rows * (fm.getHeight() + 4) + 6;
  }

  private double pyd(double y, double y0, double y1, int top, int bottom) {
    double f =
        logY
            ? (Math.log10(y) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))
            : (y - y0) / (y1 - y0);
    return bottom - f * (bottom - top);
  }

  private int py(double y, double y0, double y1, int top, int bottom) {
    return (int) Math.round(pyd(y, y0, y1, top, bottom));
  }

  private static double pxd(double x, double x0, double x1, int left, int right) {
    return left + (x - x0) / (x1 - x0) * (right - left);
  }

  private static int px(double x, double x0, double x1, int left, int right) {
    return (int) Math.round(pxd(x, x0, x1, left, right));
  }

  /** 1, 2 or 5 × 10^n, the smallest at least {@code raw}. */
  static double niceStep(double raw) {
    if (raw <= 0 || Double.isNaN(raw)) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double f = raw / magnitude;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nice * magnitude;
  }

  static double[] ticks(double from, double to, double step) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; ; i++) {
      double t = from + i * step;
      if (t > to + step * 1e-9) {
        break;
      }
      out.add(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  /** Powers of ten from lo to hi, with 2 and 5 between them when there are few decades. */
  static double[] logTicks(double lo, double hi) {
    int decades = (int) Math.round(Math.log10(hi / lo));
    List<Double> out = new ArrayList<>();
    for (double d = lo; d <= hi * 1.0001; d *= 10) {
      out.add(d);
      if (decades <= 3 && d * 10 <= hi * 1.0001) {
        out.add(d * 2);
        out.add(d * 5);
      }
    }
    return out.stream().mapToDouble(Double::doubleValue).sorted().toArray();
  }

  /** A y tick label: on a logarithmic axis each with the decimals it needs itself. */
  private String yLabel(double v, double[] all) {
    return logY ? label(v, new double[] {v}) : label(v, all);
  }

  /** A tick label: thousands as k, millions as M; decimals only as many as the ticks need. */
  static String label(double v, double[] all) {
    if (v == 0) {
      return "0";
    }
    double max = 0;
    for (double t : all) {
      max = Math.max(max, Math.abs(t));
    }
    double scale = 1;
    String suffix = "";
    if (max >= 10_000_000) {
      scale = 1e6;
      suffix = "M";
    } else if (max >= 10_000) {
      scale = 1e3;
      suffix = "k";
    }
    double s = v / scale;
    int decimals = 0;
    while (decimals < 4) {
      boolean exact = true;
      for (double t : all) {
        double x = t / scale * Math.pow(10, decimals);
        if (Math.abs(x - Math.rint(x)) > 1e-6) {
          exact = false;
          break;
        }
      }
      if (exact) {
        break;
      }
      decimals++;
    }
    return String.format(Locale.ROOT, "%,." + decimals + "f", s) + suffix;
  }

  /** A colour, width and dash, set on a Graphics2D. */
  private record Stroke(Color color, float width, boolean dashed) {
    void apply(Graphics2D g) {
      g.setColor(color);
      g.setStroke(
          dashed
              ? new BasicStroke(
                  width,
                  BasicStroke.CAP_BUTT,
                  BasicStroke.JOIN_ROUND,
                  10f,
                  new float[] {6f, 4f},
                  0f)
              : new BasicStroke(width, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
    }
  }
}
