package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the tests of the clients in other languages share: the server's {@code -all} jar (the one
 * Maven's verify just built) started on a fresh PostgreSQL database with an admin token, and
 * programs run with a bounded wait that keep their output for the failure message.
 */
final class ExternalClients {
  private ExternalClients() {}

  /** A program's exit status and output (standard error merged). */
  record Run(int status, String output) {}

  /**
   * Runs {@code command} in {@code workDir} with these environment additions; fails the test when
   * it cannot start (saying {@code missing}: how to get the program) or does not end in time.
   */
  static Run run(
      List<String> command, Map<String, String> env, int seconds, Path workDir, String missing)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      return fail("cannot run " + command.get(0) + ": " + missing + " (" + e.getMessage() + ")");
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

  /** The server as a process of its own; closing it stops it and drops its database. */
  static final class Server implements AutoCloseable {
    final String token;
    private final String database;
    private final ServerProcess process;

    private Server(String token, String database, ServerProcess process) {
      this.token = token;
      this.database = database;
      this.process = process;
    }

    /**
     * Starts the jar named by the system property {@code boxline.server.jar} with a config in
     * {@code dir}; {@code name} prefixes the token's and the database's names.
     */
    static Server start(String name, Path dir) throws Exception {
      Path jar = Path.of(System.getProperty("boxline.server.jar", "missing"));
      assertThat(jar)
          .as("run with Maven's verify, which builds the -all jar first and names it")
          .exists();
      String token = name + "-admin-" + UUID.randomUUID();
      String database = Databases.uniqueName(name + "client_");
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
              + "  - {name: "
              + name
              + "-admin, secret: "
              + token
              + ", role: admin, namespaces: ['*']}\n");
      // The -all jar as the class path: the same main class `java -jar` runs.
      ServerProcess process =
          ServerProcess.startWithClasspath(
              jar.toAbsolutePath().toString(), Map.of(), "--config", config.toString());
      return new Server(token, database, process);
    }

    /** The server's URL once it is ready (it starts while the client installs). */
    String url() throws Exception {
      return process.awaitReady(Duration.ofSeconds(90));
    }

    /** What the server printed so far. */
    String log() {
      return process.log();
    }

    @Override
    public void close() throws Exception {
      process.process.destroy(); // SIGTERM: the server drains and stops
      if (!process.process.waitFor(30, TimeUnit.SECONDS)) {
        process.close();
      }
      try (Connection c = Databases.postgres();
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
      }
    }
  }
}
