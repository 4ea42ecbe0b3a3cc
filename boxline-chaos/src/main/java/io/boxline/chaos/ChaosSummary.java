package io.boxline.chaos;

import java.util.Map;
import java.util.TreeMap;

/** The result of a run as Markdown: the command, the faults by kind, the recoveries, the checks. */
final class ChaosSummary {
  private ChaosSummary() {}

  static String markdown(ChaosRun.Result r) {
    StringBuilder sb = new StringBuilder();
    sb.append("Run: `")
        .append(r.options().commandLine())
        .append("` on ")
        .append(r.database())
        .append('\n')
        .append('\n');
    sb.append(
        String.format(
            "Wall time %d s (setup %d s, chaos %d s, drain %d s, check %d s); children that exited on"
                + " their own: %d.%n%n",
            r.wall().toSeconds(),
            r.setup().toSeconds(),
            r.chaos().toSeconds(),
            r.drain().toSeconds(),
            r.check().toSeconds(),
            r.unexpectedExits()));
    sb.append(
        String.format(
            "Producers: %,d events committed as far as they know, %,d transactions rolled back on"
                + " purpose, %,d idempotency keys sent twice, %,d transactions failed by the faults.%n%n",
            r.producerCounters().get("events"),
            r.producerCounters().get("rolledBack"),
            r.producerCounters().get("resends"),
            r.producerCounters().get("failures")));

    Map<String, Integer> byKind = new TreeMap<>();
    for (FaultInjector.Injected i : r.faults()) {
      byKind.merge(i.label(), 1, Integer::sum);
    }
    sb.append("| fault | injected |\n| --- | ---: |\n");
    byKind.forEach((k, n) -> sb.append("| ").append(k).append(" | ").append(n).append(" |\n"));
    sb.append("| total injected | ")
        .append(r.faults().stream().filter(i -> !i.skipped()).count())
        .append(" |\n\n");

    sb.append(
        "| restart | at (s into the chaos) | server back (ms) | cursors moving again (ms) |\n");
    sb.append("| --- | ---: | ---: | ---: |\n");
    for (FaultInjector.Injected i : r.faults()) {
      if (i.fault().role() == null && !i.skipped()) {
        sb.append(
            String.format(
                "| %s | %.1f | %s | %s |%n",
                i.fault().kind() == Fault.Kind.RESTART_DATABASE ? "database" : "broker",
                i.atMillis() / 1000.0,
                Long.toString(i.upMillis()),
                i.recoveredMillis() < 0 ? "not within 2 min" : Long.toString(i.recoveredMillis())));
      }
    }
    sb.append('\n');
    sb.append(
        String.format(
            "Duplicate bounds: deliveries %,d, relay %,d, task runs %,d.%n%n",
            r.bounds().deliveries(), r.bounds().relay(), r.bounds().taskRuns()));
    sb.append("| check | observed | must be | |\n| --- | ---: | --- | --- |\n");
    for (CheckReport.Row row : r.report().rows()) {
      sb.append("| ")
          .append(row.check())
          .append(" | ")
          .append(row.observed())
          .append(" | ")
          .append(row.limit())
          .append(" | ")
          .append(row.ok() ? "ok" : "**VIOLATED**")
          .append(" |\n");
    }
    return sb.toString();
  }
}
