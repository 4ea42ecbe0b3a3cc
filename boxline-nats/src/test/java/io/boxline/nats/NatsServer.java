package io.boxline.nats;

import io.boxline.testkit.Await;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The machine's NATS server with JetStream on 127.0.0.1:4222. When it is not running the tests
 * start it (the command below); when that does not work they fail saying how to start it. They
 * never skip. The outage test kills the server process (found by executable and port) and starts it
 * again with the same command.
 */
final class NatsServer {
  static final String URL = "nats://127.0.0.1:4222";
  static final String BINARY = "/usr/sbin/nats-server";
  static final List<String> START =
      List.of(
          "start-stop-daemon",
          "--start",
          "--oknodo",
          "--background",
          // Matched by this pid file, not by the executable alone: another nats-server on another
          // port (a benchmark's own) must not make this start a no-op.
          "--pidfile",
          "/run/nats-server-4222.pid",
          "--make-pidfile",
          "--exec",
          BINARY,
          "--",
          "-a",
          "127.0.0.1",
          "-p",
          "4222",
          "-js",
          "-sd",
          "/var/lib/nats-server",
          "-l",
          "/var/log/nats-server.log");
  private static final Duration START_WAIT = Duration.ofSeconds(60);

  private NatsServer() {}

  static Options.Builder options() {
    return new Options.Builder()
        .server(URL)
        .connectionTimeout(Duration.ofSeconds(2))
        .maxReconnects(-1)
        .reconnectWait(Duration.ofMillis(200));
  }

  static synchronized void ensureRunning() {
    if (jetStreamAnswers()) {
      return;
    }
    String started;
    try {
      started = start();
    } catch (IOException e) {
      started = e.toString();
    }
    try {
      Await.until(START_WAIT, "NATS with JetStream on " + URL, NatsServer::jetStreamAnswers);
    } catch (AssertionError e) {
      throw new AssertionError(
          "NATS with JetStream does not answer on "
              + URL
              + " and starting it failed ("
              + started
              + "). Start it with `"
              + String.join(" ", START)
              + "` and run the tests again.");
    }
  }

  static boolean jetStreamAnswers() {
    Options o =
        new Options.Builder()
            .server(URL)
            .connectionTimeout(Duration.ofSeconds(1))
            .noReconnect()
            .build();
    Connection c = null;
    try {
      c = Nats.connect(o);
      c.jetStreamManagement().getAccountStatistics();
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      return false;
    } finally {
      if (c != null) {
        try {
          c.close();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /** Starts the server with the machine's command; returns its output. */
  static String start() throws IOException {
    Process p = new ProcessBuilder(START).redirectErrorStream(true).start();
    try {
      if (!p.waitFor(1, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IOException("start-stop-daemon did not return within a minute");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted starting nats-server", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.exitValue() != 0) {
      throw new IOException("start-stop-daemon exited with " + p.exitValue() + ": " + out);
    }
    return out;
  }

  /** Starts the server again after {@link #kill()} and waits until JetStream answers. */
  static void restart() throws IOException {
    start();
    Await.until(START_WAIT, "NATS back with JetStream", NatsServer::jetStreamAnswers);
  }

  /** Kills the nats-server process serving port 4222 (SIGKILL) and waits until it is gone. */
  static void kill() throws Exception {
    ProcessHandle server =
        find().orElseThrow(() -> new AssertionError("no nats-server process on port 4222 found"));
    server.destroyForcibly();
    server.onExit().get(10, TimeUnit.SECONDS);
  }

  private static Optional<ProcessHandle> find() {
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().command().map(BINARY::equals).orElse(false))
        .filter(p -> p.info().arguments().map(args -> List.of(args).contains("4222")).orElse(false))
        .findFirst();
  }
}
