package io.boxline.chaos;

import java.nio.file.Files;

/**
 * The chaos run: kill -9 everything, restart the database and the broker, then prove nothing was
 * lost. Options are {@code key=value} (see {@link ChaosOptions}); prints progress, the checker's
 * table and a Markdown summary, and exits 1 on any violation.
 *
 * <pre>
 * ./mvnw -q -pl boxline-chaos compile exec:exec -Dexec.executable=java \
 *   -Dexec.args="-Xmx3g -cp %classpath io.boxline.chaos.ChaosMain seed=42 seconds=60"
 * </pre>
 */
public final class ChaosMain {
  private ChaosMain() {}

  public static void main(String[] args) throws Exception {
    ChaosOptions options = ChaosOptions.parse(args);
    if (options.help() != null) {
      System.out.println(options.help());
      return;
    }
    ChaosRun.Result result = new ChaosRun(options).run();
    System.out.println();
    System.out.println(result.report().table());
    String summary = ChaosSummary.markdown(result);
    Files.writeString(result.runDir().resolve("summary.md"), summary);
    System.out.println(summary);
    System.out.println("summary written to " + result.runDir().resolve("summary.md"));
    System.exit(result.report().passed() ? 0 : 1);
  }
}
