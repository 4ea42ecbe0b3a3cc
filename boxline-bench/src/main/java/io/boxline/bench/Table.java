package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;

/** A Markdown table, padded so that it also reads well on a terminal. */
final class Table {
  private final String[] header;
  private final List<String[]> rows = new ArrayList<>();

  Table(String... header) {
    this.header = header;
  }

  Table row(Object... cells) {
    String[] r = new String[header.length];
    for (int i = 0; i < r.length; i++) {
      r[i] = i < cells.length && cells[i] != null ? cells[i].toString() : "";
    }
    rows.add(r);
    return this;
  }

  @Override
  public String toString() {
    int[] w = new int[header.length];
    for (int i = 0; i < w.length; i++) {
      w[i] = Math.max(3, header[i].length());
      for (String[] r : rows) {
        w[i] = Math.max(w[i], r[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    line(sb, header, w);
    sb.append('|');
    for (int x : w) {
      sb.append('-').append("-".repeat(x)).append("-|");
    }
    sb.append('\n');
    for (String[] r : rows) {
      line(sb, r, w);
    }
    return sb.toString();
  }

  private static void line(StringBuilder sb, String[] cells, int[] w) {
    sb.append('|');
    for (int i = 0; i < cells.length; i++) {
      sb.append(' ').append(cells[i]).append(" ".repeat(w[i] - cells[i].length())).append(" |");
    }
    sb.append('\n');
  }
}
