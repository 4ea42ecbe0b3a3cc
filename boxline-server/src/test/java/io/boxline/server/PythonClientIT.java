package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Python client in {@code clients/python}, installed as a user installs it (pip, offline, into
 * a directory of its own) and tested by its own unittest suite against the {@code -all} jar the
 * build just made, on a fresh PostgreSQL database. The suite runs from the source tree with only
 * the installed package on {@code PYTHONPATH}, so what is tested is what pip installed.
 */
class PythonClientIT {
  private static final Path CLIENT =
      Path.of("..", "clients", "python").toAbsolutePath().normalize();

  @Test
  void thePythonClientInstallsWithPipAndPassesItsTestsAgainstTheServer() throws Exception {
    Path jar = Path.of(System.getProperty("boxline.server.jar", "missing"));
    assertThat(jar)
        .as("run with Maven's verify, which builds the -all jar first and names it")
        .exists();
    assertThat(CLIENT.resolve("pyproject.toml")).exists();
    Path dir = Files.createTempDirectory("boxline-python");
    String token = "py-admin-" + UUID.randomUUID();
    String database = Databases.uniqueName("pyclient_");
    try (Connection c = Databases.postgres();
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + database);
    }
    Path config = dir.resolve("boxline.yaml");
    Files.writeString(
        config,
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + "database: {url: 'jdbc:postgresql://127.0.0.1:5432/"
            + database
            + "', user: postgres}\n"
            + "tokens:\n"
            + "  - {name: py-admin, secret: "
            + token
            + ", role: admin, namespaces: ['*']}\n");
    List<String> serverLog = new CopyOnWriteArrayList<>();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-jar",
                jar.toAbsolutePath().toString(),
                "--config",
                config.toString())
            .redirectErrorStream(true)
            .start();
    readLines(server, serverLog, ready);
    try {
      // pip runs while the server starts.
      Path site = dir.resolve("site");
      Run pip =
          run(
              List.of(
                  "python3",
                  "-m",
                  "pip",
                  "install",
                  "--no-build-isolation",
                  "--no-index",
                  "--disable-pip-version-check",
                  "--target",
                  site.toString(),
                  CLIENT.toString()),
              Map.of(),
              90,
              dir);
      assertThat(pip.status).as("pip installs the package offline:\n%s", pip.output).isZero();
      assertThat(site.resolve("boxline").resolve("client.py")).exists();

      String url;
      try {
        url = ready.get(90, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError(
            "the server did not print 'ready:' within 90 s:\n" + String.join("\n", serverLog), e);
      }
      Run tests =
          run(
              List.of(
                  "python3",
                  "-m",
                  "unittest",
                  "discover",
                  "-s",
                  CLIENT.resolve("tests").toString(),
                  "-v"),
              Map.of(
                  "PYTHONPATH",
                  site.toString(),
                  "PYTHONDONTWRITEBYTECODE",
                  "1",
                  "BOXLINE_URL",
                  url,
                  "BOXLINE_TOKEN",
                  token,
                  "BOXLINE_REQUIRE_SERVER",
                  "1",
                  "BOXLINE_EXPECT_PACKAGE_DIR",
                  site.resolve("boxline").toString()),
              100,
              dir);
      assertThat(tests.status)
          .as(
              "the Python client's tests pass (exit status 0):\n%s\n--- server log ---\n%s",
              tests.output, String.join("\n", serverLog))
          .isZero();
      assertThat(tests.output)
          .as("every test ran, none was skipped:\n%s", tests.output)
          .contains("\nOK")
          .doesNotContain("skipped");
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor(10, TimeUnit.SECONDS);
      }
      try (Connection c = Databases.postgres();
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
      }
    }
  }

  private record Run(int status, String output) {}

  /** Runs a command with these environment additions; its exit status and output. */
  private static Run run(List<String> command, Map<String, String> env, int seconds, Path workDir)
      throws Exception {
    // Not from clients/python: `python3 -m` puts the working directory first on sys.path, where
    // the source tree's package would shadow the installed one.
    ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      return fail("cannot run " + command.get(0) + " (is python3 on the PATH?): " + e.getMessage());
    }
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return "(output lost: " + e + ")";
              }
            });
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      return fail(
          String.join(" ", command)
              + " did not finish within "
              + seconds
              + " s:\n"
              + output.get(10, TimeUnit.SECONDS));
    }
    return new Run(p.exitValue(), output.get(10, TimeUnit.SECONDS));
  }

  /** Keeps the server's output and completes {@code ready} with its URL. */
  private static void readLines(Process p, List<String> lines, CompletableFuture<String> ready) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  lines.add(line);
                  if (line.startsWith("ready: ")) {
                    ready.complete(line.substring(7).trim());
                  }
                }
              } catch (IOException e) {
                // the server ended
              }
              ready.completeExceptionally(new IllegalStateException("the server exited"));
            },
            "python-it-server-output");
    reader.setDaemon(true);
    reader.start();
  }
}
