package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** The server as a separate JVM, started from the module's classes and runtime classpath. */
final class ServerProcess implements AutoCloseable {
  final Process process;
  final List<String> output = new CopyOnWriteArrayList<>();
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private volatile int kafkaPort = -1;
  private final Thread reader;

  private ServerProcess(Process process) {
    this.process = process;
    reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  output.add(line);
                  if (line.startsWith("kafka: ")) {
                    kafkaPort = Integer.parseInt(line.substring(7).trim());
                  }
                  if (line.startsWith("ready: ")) {
                    ready.complete(line.substring(7).trim());
                  }
                }
              } catch (IOException e) {
                // process ended
              }
              ready.completeExceptionally(
                  new IllegalStateException(
                      "the server exited before it was ready:\n" + String.join("\n", output)));
            },
            "server-output");
    reader.setDaemon(true);
    reader.start();
  }

  static String classpath() throws IOException {
    String classes = System.getProperty("boxline.server.classes");
    String file = System.getProperty("boxline.server.classpath.file");
    assertThat(classes)
        .as("run the tests with Maven, which sets boxline.server.classes")
        .isNotNull();
    return classes + java.io.File.pathSeparator + Files.readString(Path.of(file)).trim();
  }

  /**
   * The runtime classpath less every entry whose path contains {@code fragment} (such as {@code
   * /io/zonky/}, which leaves out the embedded PostgreSQL as the {@code -all} jar does).
   */
  static String classpathWithout(String fragment) throws IOException {
    List<String> kept = new ArrayList<>();
    for (String entry : classpath().split(java.io.File.pathSeparator)) {
      if (!entry.contains(fragment)) {
        kept.add(entry);
      }
    }
    return String.join(java.io.File.pathSeparator, kept);
  }

  /** Starts {@code BoxlineServer} with these arguments and environment additions. */
  static ServerProcess start(Map<String, String> env, String... args) throws IOException {
    return startWithClasspath(classpath(), env, args);
  }

  /** Starts {@code BoxlineServer} on {@code classpath}. */
  static ServerProcess startWithClasspath(String classpath, Map<String, String> env, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add("io.boxline.server.BoxlineServer");
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("BOXLINE_ADMIN_TOKEN");
    pb.environment().remove("BOXLINE_CONFIG");
    pb.environment().putAll(env);
    return new ServerProcess(pb.start());
  }

  /** Starts {@code BoxlineServer} with this config file text. */
  static ServerProcess startWithConfig(String yaml) throws IOException {
    Path config = Files.createTempFile("boxline-server", ".yaml");
    Files.writeString(config, yaml);
    return start(Map.of(), "--config", config.toString());
  }

  /** The base URL once the server printed "ready", within {@code timeout}. */
  String awaitReady(Duration timeout) throws Exception {
    try {
      return ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError(
          "the server was not ready within " + timeout + ":\n" + String.join("\n", output));
    }
  }

  /** The Kafka listener's port, once ready (-1 when the config has no kafka section). */
  int kafkaPort() {
    return kafkaPort;
  }

  /** Waits for the exit; its status. */
  int awaitExit(Duration timeout) throws InterruptedException {
    assertThat(process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
        .as("server exited within " + timeout + "; output:\n" + String.join("\n", output))
        .isTrue();
    reader.join(10_000); // the last lines it printed
    return process.exitValue();
  }

  String log() {
    return String.join("\n", output);
  }

  /** SIGTERM: the server stops in order, as under a process supervisor. */
  void terminate() {
    process.destroy();
  }

  void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
