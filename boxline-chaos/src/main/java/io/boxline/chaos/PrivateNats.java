package io.boxline.chaos;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A nats-server with JetStream of the run's own (private port, its own store directory), which the
 * fault schedule kills with SIGKILL and starts again. The machine's shared broker is never touched.
 */
final class PrivateNats implements AutoCloseable {
  static final String STREAM = "CHAOS";
  static final String SUBJECTS = "chaos.>";

  private final Path root;
  private final int port;
  private Process server;

  private PrivateNats(Path root, int port) {
    this.root = root;
    this.port = port;
  }

  static PrivateNats start() {
    try {
      PrivateNats nats =
          new PrivateNats(
              Files.createTempDirectory("boxline-chaos-nats-"), PrivatePostgres.freePort());
      nats.launch();
      nats.createStream();
      return nats;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String url() {
    return "nats://127.0.0.1:" + port;
  }

  private void launch() {
    String binary =
        Files.isExecutable(Path.of("/usr/sbin/nats-server"))
            ? "/usr/sbin/nats-server"
            : "nats-server";
    try {
      server =
          new ProcessBuilder(
                  List.of(
                      binary,
                      "-a",
                      "127.0.0.1",
                      "-p",
                      Integer.toString(port),
                      "-js",
                      "-sd",
                      root.resolve("store").toString()))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve("server.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start nats-server (is it installed?)", e);
    }
    awaitStream(Duration.ofSeconds(60), false);
  }

  /**
   * A file-backed stream with a duplicate window longer than any run, so that every resend of an
   * event (same Nats-Msg-Id) after a broker or relay crash is stored once.
   */
  private void createStream() {
    try (Connection c = connect()) {
      c.jetStreamManagement()
          .addStream(
              StreamConfiguration.builder()
                  .name(STREAM)
                  .subjects(SUBJECTS)
                  .storageType(StorageType.File)
                  .duplicateWindow(Duration.ofHours(6))
                  .build());
    } catch (Exception e) {
      throw new IllegalStateException("cannot create the JetStream stream", e);
    }
  }

  Connection connect() throws IOException, InterruptedException {
    return Nats.connect(
        new Options.Builder().server(url()).connectionTimeout(Duration.ofSeconds(5)).build());
  }

  /** SIGKILL and start again; returns the time until JetStream answers with the stream again. */
  Duration crashAndRestart() {
    long t0 = System.nanoTime();
    server.destroyForcibly();
    try {
      server.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    launch();
    awaitStream(Duration.ofSeconds(60), true);
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  /** Waits until the server answers (and, with {@code stream}, until the stream is recovered). */
  private void awaitStream(Duration max, boolean stream) {
    long deadline = System.nanoTime() + max.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try (Connection c = connect()) {
        JetStreamManagement jsm = c.jetStreamManagement();
        if (!stream) {
          jsm.getAccountStatistics();
          return;
        }
        jsm.getStreamInfo(STREAM);
        return;
      } catch (Exception e) {
        last = e;
        ChildArgs.sleepQuietly(Duration.ofMillis(100));
      }
    }
    throw new IllegalStateException("private nats-server does not answer on " + url(), last);
  }

  @Override
  public void close() {
    if (server != null) {
      server.destroyForcibly();
      try {
        server.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not remove " + root + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "private nats-server (JetStream) on " + url();
  }
}
