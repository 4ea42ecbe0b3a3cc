package io.boxline.chaos;

import java.util.ArrayList;
import java.util.List;

/** The checker's verdicts, one row per check, printable as a table. */
final class CheckReport {
  /** {@code limit} says what passes, e.g. {@code = 0}, {@code ≤ 1200}, or is empty for a figure. */
  record Row(String check, String observed, String limit, boolean ok) {}

  private final List<Row> rows = new ArrayList<>();
  private final List<String> details = new ArrayList<>();

  /** A figure for the table that passes by definition. */
  void figure(String check, long value) {
    rows.add(new Row(check, String.format("%,d", value), "", true));
  }

  void equal(String check, long observed, long expected) {
    rows.add(
        new Row(
            check,
            String.format("%,d", observed),
            String.format("= %,d", expected),
            observed == expected));
  }

  void zero(String check, long observed) {
    equal(check, observed, 0);
  }

  void atMost(String check, long observed, long bound) {
    rows.add(
        new Row(
            check,
            String.format("%,d", observed),
            String.format("≤ %,d", bound),
            observed <= bound));
  }

  /** Explains a failed row (samples of offending ids and such). */
  void detail(String line) {
    details.add(line);
  }

  boolean passed() {
    return rows.stream().allMatch(Row::ok);
  }

  List<Row> rows() {
    return List.copyOf(rows);
  }

  long violations() {
    return rows.stream().filter(r -> !r.ok()).count();
  }

  String table() {
    int w = rows.stream().mapToInt(r -> r.check().length()).max().orElse(10);
    int v = rows.stream().mapToInt(r -> r.observed().length()).max().orElse(5);
    StringBuilder sb = new StringBuilder();
    String format = "%-" + w + "s  %" + v + "s  %-12s %s%n";
    sb.append(String.format(format, "check", "observed", "must be", ""));
    for (Row r : rows) {
      sb.append(
          String.format(format, r.check(), r.observed(), r.limit(), r.ok() ? "ok" : "VIOLATED"));
    }
    for (String d : details) {
      sb.append("  ").append(d).append('\n');
    }
    sb.append(passed() ? "CHECK PASSED" : "CHECK FAILED: " + violations() + " violated");
    sb.append('\n');
    return sb.toString();
  }
}
