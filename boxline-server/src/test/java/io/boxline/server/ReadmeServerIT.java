package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The README's server lines, run as written by bash: the zero-install trial (its Maven line from
 * the source tree, then the curl lines of the "second terminal", then Ctrl-C), and the lines
 * against the shaded {@code -all} jar the build just made (so this runs after {@code package},
 * under failsafe): the config file they write, the token they export, the health wait, the publish,
 * the tail and the stop. Only the jar's build line is left out, and the database those lines
 * default to is this test's own (through {@code DATABASE_URL}, which they read).
 */
class ReadmeServerIT {
  private static final String JAR_IN_README = "boxline-server/target/";
  private static final String DEV_LINE = "-Dexec.args=--dev";

  @Test
  void theReadmesZeroInstallTrialRunsAsWrittenAndStopsCleanlyOnCtrlC() throws Exception {
    List<List<String>> blocks = readmeBashBlocks();
    int at = -1;
    for (int i = 0; i < blocks.size() && at < 0; i++) {
      if (blocks.get(i).stream().anyMatch(l -> l.contains(DEV_LINE))) {
        at = i;
      }
    }
    assertThat(at)
        .as("README.md has a ```bash block that starts the server with --dev")
        .isNotNegative();
    assertThat(at + 1)
        .as("the --dev block is followed by the curl lines")
        .isLessThan(blocks.size());
    List<String> start = blocks.get(at);
    List<String> curls = new ArrayList<>();
    // The "second terminal" has run the same export lines.
    start.stream().filter(l -> l.startsWith("export ")).forEach(curls::add);
    curls.addAll(blocks.get(at + 1));
    requireFreePort(8080);
    Path dir = Files.createTempDirectory("boxline-readme-dev");
    Path startScript = dir.resolve("start.sh");
    Files.writeString(startScript, String.join("\n", start) + "\n");
    Path curlScript = dir.resolve("curls.sh");
    Files.writeString(curlScript, String.join("\n", curls) + "\n");
    Path log = dir.resolve("server.log");

    // Its own session, so that Ctrl-C can be what a terminal sends: SIGINT to the whole group.
    Process server =
        new ProcessBuilder("setsid", "bash", startScript.toString())
            .directory(Path.of("..").toAbsolutePath().normalize().toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      long readyBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
      while (!Files.readString(log).contains("ready: http://127.0.0.1:8080")) {
        if (!server.isAlive() || System.nanoTime() > readyBy) {
          fail(
              "the README's --dev line did not print 'ready: http://127.0.0.1:8080' within 300 s"
                  + " (exit status "
                  + (server.isAlive() ? "none, still running" : server.exitValue())
                  + "):\n"
                  + Files.readString(log));
        }
        server.waitFor(200, TimeUnit.MILLISECONDS);
      }
      Process client =
          new ProcessBuilder("bash", curlScript.toString()).redirectErrorStream(true).start();
      CompletableFuture<String> read = readAll(client);
      assertThat(client.waitFor(60, TimeUnit.SECONDS)).as("the curl lines finish").isTrue();
      String output = read.get(10, TimeUnit.SECONDS);
      assertThat(output)
          .as("the topic is created")
          .contains("{\"name\":\"acme/orders\",\"partitions\":4");
      assertThat(output)
          .as("the publish answers with the event's topic")
          .contains("{\"topic\":\"acme/orders\",\"results\":[");
      assertThat(output).as("the tail shows the event").contains("\"key\":\"order-7\"");

      new ProcessBuilder("kill", "-INT", "--", "-" + server.pid()).inheritIO().start().waitFor();
      assertThat(server.waitFor(60, TimeUnit.SECONDS))
          .as("Ctrl-C stops the server within 60 s:\n%s", Files.readString(log))
          .isTrue();
      String stopped = Files.readString(log);
      assertThat(stopped)
          .as("the server drains, stops its embedded PostgreSQL and says so, with no stack trace")
          .contains("stopped in")
          .contains("server stopped")
          .doesNotContain("Exception")
          .doesNotContain("\tat ");
      assertThat(server.exitValue()).as("the exit status of a SIGINT").isEqualTo(130);
    } finally {
      server.descendants().forEach(ProcessHandle::destroyForcibly);
      server.destroyForcibly();
    }
  }

  @Test
  void theReadmesServerLinesPublishReadBackAndStopCleanly() throws Exception {
    List<String> script = readmeServerBlock();
    Path jar = Path.of(System.getProperty("boxline.server.jar", "missing"));
    assertThat(jar)
        .as("run with Maven's verify, which builds the -all jar first and names it")
        .exists();
    requireFreePort(8080);
    Path dir = Files.createTempDirectory("boxline-readme");
    Path linked = dir.resolve(JAR_IN_README).resolve(jar.getFileName());
    Files.createDirectories(linked.getParent());
    Files.createSymbolicLink(linked, jar.toAbsolutePath());
    Path file = dir.resolve("readme.sh");
    Files.writeString(file, String.join("\n", script) + "\n");

    String database = Databases.uniqueName("readme_");
    try (Connection c = Databases.postgres();
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + database);
    }
    try {
      ProcessBuilder pb = new ProcessBuilder("bash", file.toString()).directory(dir.toFile());
      pb.environment().put("DATABASE_URL", "jdbc:postgresql://127.0.0.1:5432/" + database);
      pb.redirectErrorStream(true);
      Process p = pb.start();
      CompletableFuture<String> read = readAll(p);
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        fail("the README's lines did not finish in 120 s:\n" + read.get(10, TimeUnit.SECONDS));
      }
      String output = read.get(10, TimeUnit.SECONDS);

      assertThat(output)
          .as("the publish answers with the event's topic")
          .contains("{\"topic\":\"acme/orders\",\"results\":[");
      assertThat(output)
          .as("the tail shows the published event")
          .contains("OrderPlaced")
          .contains("order-7");
      assertThat(output)
          .as("the server drains and stops without a stack trace")
          .doesNotContain("Exception")
          .doesNotContain("\tat ");
      assertThat(p.exitValue())
          .as("'wait %%1' returns the server's exit status after SIGTERM:\n%s", output)
          .isEqualTo(143);
    } finally {
      try (Connection c = Databases.postgres();
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
      }
    }
  }

  /** The README's bash block that starts the jar, less its build line. */
  private static List<String> readmeServerBlock() throws IOException {
    for (List<String> block : readmeBashBlocks()) {
      if (block.stream().anyMatch(l -> l.startsWith("java -jar " + JAR_IN_README))) {
        List<String> lines = new ArrayList<>(block);
        lines.removeIf(l -> l.startsWith("./mvnw "));
        return lines;
      }
    }
    return fail("README.md has no ```bash block that runs java -jar " + JAR_IN_README + "…");
  }

  /** Every ```bash block of the README, in order. */
  private static List<List<String>> readmeBashBlocks() throws IOException {
    List<List<String>> blocks = new ArrayList<>();
    List<String> block = null;
    for (String line : Files.readAllLines(Path.of("..", "README.md"), UTF8)) {
      if (block == null && line.equals("```bash")) {
        block = new ArrayList<>();
      } else if (block != null && line.equals("```")) {
        blocks.add(block);
        block = null;
      } else if (block != null) {
        block.add(line);
      }
    }
    return blocks;
  }

  private static CompletableFuture<String> readAll(Process p) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return new String(p.getInputStream().readAllBytes(), UTF8);
          } catch (IOException e) {
            return "(output lost: " + e + ")";
          }
        });
  }

  private static void requireFreePort(int port) {
    try (ServerSocket s = new ServerSocket(port)) {
      s.setReuseAddress(true);
    } catch (IOException e) {
      fail(
          "the README's lines use port "
              + port
              + ", which something on this machine holds ("
              + e.getMessage()
              + "); stop it and run again");
    }
  }

  private static final java.nio.charset.Charset UTF8 = StandardCharsets.UTF_8;
}
