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
 * The README's server lines, run as written by bash against the shaded {@code -all} jar the build
 * just made (so this runs after {@code package}, under failsafe): the config file they write, the
 * token they export, the health wait, the publish, the tail and the stop. Only the build line is
 * left out, and the database the lines default to is this test's own (through {@code DATABASE_URL},
 * which they read).
 */
class ReadmeServerIT {
  private static final String JAR_IN_README = "boxline-server/target/";

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
      CompletableFuture<String> read =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return new String(p.getInputStream().readAllBytes(), UTF8);
                } catch (IOException e) {
                  return "(output lost: " + e + ")";
                }
              });
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
    List<String> lines = Files.readAllLines(Path.of("..", "README.md"), UTF8);
    List<String> block = new ArrayList<>();
    boolean in = false;
    for (String line : lines) {
      if (!in && line.equals("```bash")) {
        in = true;
        block.clear();
      } else if (in && line.equals("```")) {
        if (block.stream().anyMatch(l -> l.startsWith("java -jar " + JAR_IN_README))) {
          block.removeIf(l -> l.startsWith("./mvnw "));
          return block;
        }
        in = false;
      } else if (in) {
        block.add(line);
      }
    }
    return fail("README.md has no ```bash block that runs java -jar " + JAR_IN_README + "…");
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
