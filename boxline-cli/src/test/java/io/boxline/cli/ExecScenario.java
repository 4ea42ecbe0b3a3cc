package io.boxline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The program {@code consume --exec} runs in the tests, and the events it gets: keys a, b and flaky
 * with payloads 1 to 10 each, then one event of key poison and one of key never. The Python program
 * answers "dead" for poison until {@link #heal()}, "retry" always for never and once for each event
 * of flaky, "ok" for everything else, and logs what it accepted ("key payload" per line).
 */
final class ExecScenario {
  final Path log;
  final Path healed;
  final Path script;

  private ExecScenario(Path dir) {
    log = dir.resolve("handled.log");
    healed = dir.resolve("healed");
    script = dir.resolve("handle.py");
  }

  static ExecScenario create() throws IOException {
    ExecScenario s = new ExecScenario(Files.createTempDirectory("boxline-exec"));
    Files.writeString(
        s.script,
        String.join(
            "\n",
            "import sys, json, os",
            "tried = set()",
            "for line in sys.stdin:",
            "    e = json.loads(line)",
            "    if e['key'] == 'poison' and not os.path.exists(" + py(s.healed) + "):",
            "        print('dead cannot parse', flush=True)",
            "        continue",
            "    if e['key'] == 'never':",
            "        print('retry still failing', flush=True)",
            "        continue",
            "    if e['key'] == 'flaky' and e['id'] not in tried:",
            "        tried.add(e['id'])",
            "        print('retry not yet', flush=True)",
            "        continue",
            "    with open(" + py(s.log) + ", 'a') as f:",
            "        f.write('%s %s\\n' % (e['key'], e['payload']))",
            "    print('ok', flush=True)",
            ""));
    return s;
  }

  /** The events, as JSON lines for {@code publish --stdin}. */
  String events() {
    StringBuilder lines = new StringBuilder();
    for (int i = 1; i <= 10; i++) {
      for (String key : List.of("a", "b", "flaky")) {
        lines.append(
            String.format("{\"key\":\"%s\",\"type\":\"job\",\"payload\":\"%d\"}%n", key, i));
      }
    }
    lines.append("{\"key\":\"poison\",\"type\":\"job\",\"payload\":\"1\"}\n");
    lines.append("{\"key\":\"never\",\"type\":\"job\",\"payload\":\"1\"}\n");
    return lines.toString();
  }

  /** {@code consume SUB --exec …} with fast retries and three attempts, as member exec-member. */
  String[] consume(String subscription, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "consume",
                subscription,
                "--exec",
                "python3 " + script,
                "--backoff",
                "PT0.05S",
                "--max-attempts",
                "3",
                "--id",
                "exec-member"));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  List<String> handled() {
    try {
      return Files.exists(log) ? Files.readAllLines(log) : List.of();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** a, b and flaky each handled 1 to 10 in order, nothing else. */
  void assertEachKeyInOrder() {
    Map<String, List<Integer>> byKey = new HashMap<>();
    for (String l : handled()) {
      String[] f = l.split(" ");
      byKey.computeIfAbsent(f[0], k -> new ArrayList<>()).add(Integer.parseInt(f[1]));
    }
    assertThat(byKey).containsOnlyKeys("a", "b", "flaky");
    byKey.values().forEach(seen -> assertThat(seen).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  }

  void heal() throws IOException {
    Files.writeString(healed, "");
  }

  private static String py(Path p) {
    return "'" + p.toString().replace("'", "\\'") + "'";
  }
}
