package io.boxline.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the run's own (Debian's binaries, a fresh data directory, a private port)
 * so that it can be crashed with {@code pg_ctl stop -m immediate} without touching the machine's
 * shared server. Run as root, the binaries are started as the {@code postgres} user.
 *
 * <p>The data directory lives on /dev/shm when it exists: an immediate shutdown kills the server
 * processes, not the kernel, so what was written survives it either way, and tmpfs spares the run's
 * two cores the fsync wait.
 */
final class PrivatePostgres implements ChaosDatabase {
  static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");

  private final Path root;
  private final Path data;
  private final int port;

  private PrivatePostgres(Path root, int port) {
    this.root = root;
    this.data = root.resolve("pgdata");
    this.port = port;
  }

  static PrivatePostgres start() {
    if (!Files.isExecutable(BIN.resolve("pg_ctl"))) {
      throw new IllegalStateException(
          "no PostgreSQL binaries in " + BIN + " (apt-get install postgresql-15)");
    }
    Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of("/tmp");
    try {
      Path root = Files.createTempDirectory(base, "boxline-chaos-pg-");
      PrivatePostgres pg = new PrivatePostgres(root, freePort());
      pg.initdb();
      pg.launch();
      return pg;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A free port outside the range other tests on this machine reserve (35672–35682). */
  static int freePort() throws IOException {
    while (true) {
      try (ServerSocket s = new ServerSocket(0)) {
        int p = s.getLocalPort();
        if (p < 35672 || p > 35682) {
          return p;
        }
      }
    }
  }

  private void initdb() {
    run(Duration.ofMinutes(2), "chown", "-R", "postgres", root.toString());
    pgCommand(
        Duration.ofMinutes(2),
        BIN.resolve("initdb").toString(),
        "-D",
        data.toString(),
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync");
  }

  private void launch() {
    pgCommand(
        Duration.ofMinutes(2),
        BIN.resolve("pg_ctl").toString(),
        "-D",
        data.toString(),
        "-l",
        root.resolve("server.log").toString(),
        "-w",
        "-t",
        "110",
        "-o",
        "-p "
            + port
            + " -k "
            + root
            + " -c listen_addresses=127.0.0.1 -c max_connections=400"
            + " -c shared_buffers=256MB",
        "start");
    awaitConnections(Duration.ofMinutes(2));
  }

  @Override
  public Duration crashAndRestart() {
    long t0 = System.nanoTime();
    pgCommand(
        Duration.ofMinutes(1),
        BIN.resolve("pg_ctl").toString(),
        "-D",
        data.toString(),
        "-m",
        "immediate",
        "-w",
        "stop");
    launch();
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  private void awaitConnections(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(url(), user(), password())) {
        return;
      } catch (SQLException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("private PostgreSQL does not accept connections", e);
        }
        ChildArgs.sleepQuietly(Duration.ofMillis(50));
      }
    }
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** Runs a PostgreSQL binary, as the postgres user when this JVM runs as root. */
  static void pgCommand(Duration max, String... command) {
    List<String> cmd = new ArrayList<>();
    if (root()) {
      cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    cmd.addAll(List.of(command));
    run(max, cmd.toArray(String[]::new));
  }

  /** Runs a command to its end within {@code max}; a non-zero exit fails with its output. */
  static void run(Duration max, String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      // Drain output so the child never blocks on a full pipe.
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish in " + max);
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " failed (" + p.exitValue() + "): " + new String(out));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public String kind() {
    return "postgresql";
  }

  @Override
  public String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  @Override
  public String user() {
    return "postgres";
  }

  @Override
  public String password() {
    return "";
  }

  @Override
  public boolean restartable() {
    return true;
  }

  @Override
  public String serialKey() {
    return "bigserial PRIMARY KEY";
  }

  @Override
  public String partitionColumn() {
    return "partition";
  }

  /** The server is the run's own, so a fixed name. */
  @Override
  public String schema() {
    return "chaos";
  }

  @Override
  public void close() {
    try {
      pgCommand(
          Duration.ofMinutes(1),
          BIN.resolve("pg_ctl").toString(),
          "-D",
          data.toString(),
          "-m",
          "fast",
          "-w",
          "stop");
    } catch (RuntimeException e) {
      System.err.println("stopping the private PostgreSQL: " + e);
    }
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not remove " + root + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "private PostgreSQL 15 on 127.0.0.1:" + port + " (data in " + data + ")";
  }
}
