package io.boxline.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a generated attack sent and got: the statuses, the time spent per route template and per
 * phase, and (with {@code -Dboxline.attack.log=true}) every request with its status.
 */
final class AttackTally {
  final Map<Integer, Integer> statuses = new TreeMap<>();
  final Map<String, long[]> timing = new TreeMap<>(); // template -> {requests, milliseconds}
  final long[] phase = new long[3]; // nanoseconds generating, sending, checking
  final StringBuilder log;
  int sent;
  int twins;

  AttackTally(boolean log) {
    this.log = log ? new StringBuilder() : null;
  }

  /** Counts request {@code i} and its answer. */
  void sent(int i, Attack attack, RawHttp.Response resp) {
    sent++;
    statuses.merge(resp.status, 1, Integer::sum);
    if (log != null) {
      log.append(i)
          .append(' ')
          .append(attack.who())
          .append(' ')
          .append(RawHttp.truncate(attack.request().method + " " + attack.request().target, 300))
          .append(" -> ")
          .append(resp.status)
          .append(' ')
          .append(RawHttp.truncate(resp.bodyText().replace("\n", " "), 200))
          .append('\n');
    }
    long[] t = timing.computeIfAbsent(attack.template(), k -> new long[2]);
    t[0]++;
    t[1] += resp.millis;
  }

  /** The six templates whose answers took the most time in all. */
  String slowest() {
    StringBuilder slow = new StringBuilder();
    timing.entrySet().stream()
        .sorted((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]))
        .limit(6)
        .forEach(
            e ->
                slow.append(
                    String.format(
                        Locale.ROOT,
                        " %s: %d in %d ms (%.1f ms each);",
                        e.getKey(),
                        e.getValue()[0],
                        e.getValue()[1],
                        e.getValue()[1] / (double) e.getValue()[0])));
    return slow.toString();
  }

  /** Writes the requests to target/tenant-attack/, when they were logged. */
  void writeLog(long seed) throws IOException {
    if (log != null) {
      Path file = Path.of("target", "tenant-attack", "requests-" + seed + ".txt");
      Files.createDirectories(file.getParent());
      Files.writeString(file, log);
      System.out.println("TenantAttackTest requests: " + file.toAbsolutePath());
    }
  }

  void printPhases() {
    System.out.printf(
        Locale.ROOT,
        "TenantAttackTest phases: generate %d ms, send %d ms, check %d ms%n",
        phase[0] / 1_000_000,
        phase[1] / 1_000_000,
        phase[2] / 1_000_000);
  }
}
