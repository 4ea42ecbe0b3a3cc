package io.boxline.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A MariaDB server of the run's own (Debian's {@code mariadbd}, a fresh data directory on disk, a
 * private port), so that it can be crashed with {@code SIGKILL} and started again as the run's
 * PostgreSQL is, without touching the machine's shared server. InnoDB recovers from its redo log at
 * every start. Run as root, the server runs as the {@code mysql} user.
 */
final class PrivateMariaDb implements ChaosDatabase {
  private static final Path MARIADBD = Path.of("/usr/sbin/mariadbd");
  private static final Path INSTALL_DB = Path.of("/usr/bin/mariadb-install-db");

  private final Path root;
  private final Path data;
  private final int port;
  private final String database = "chaos_" + UUID.randomUUID().toString().substring(0, 8);
  private final List<String> options;
  private Process server;

  private PrivateMariaDb(Path root, int port, List<String> options) {
    this.root = root;
    this.data = root.resolve("data");
    this.port = port;
    this.options = List.copyOf(options);
  }

  static PrivateMariaDb start() {
    return start(List.of());
  }

  /** A server started with {@code options} besides the run's own (replication settings). */
  static PrivateMariaDb start(List<String> options) {
    if (!Files.isExecutable(MARIADBD) || !Files.isExecutable(INSTALL_DB)) {
      throw new IllegalStateException(
          "no " + MARIADBD + " or " + INSTALL_DB + " (apt-get install mariadb-server)");
    }
    try {
      // On disk, not tmpfs: InnoDB's redo log and its fsyncs are part of what a crash tests.
      Path root = Files.createTempDirectory(Path.of("/tmp"), "boxline-chaos-mariadb-");
      PrivateMariaDb db = new PrivateMariaDb(root, PrivatePostgres.freePort(), options);
      db.install();
      db.launch();
      return db;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  private Path tmp() {
    return root.resolve("tmp");
  }

  private void install() {
    try {
      Files.createDirectories(tmp());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> cmd = new ArrayList<>(List.of(INSTALL_DB.toString(), "--no-defaults"));
    cmd.add("--datadir=" + data);
    cmd.add("--auth-root-authentication-method=normal"); // root with no password over TCP
    cmd.add("--skip-test-db");
    cmd.add("--tmpdir=" + tmp()); // its own: the server's user may not write to /tmp
    if (root()) {
      PrivatePostgres.run(Duration.ofSeconds(10), "chown", "-R", "mysql:mysql", root.toString());
      cmd.add("--user=mysql");
    }
    PrivatePostgres.run(Duration.ofMinutes(2), cmd.toArray(String[]::new));
  }

  private void launch() {
    List<String> cmd = new ArrayList<>(List.of(MARIADBD.toString(), "--no-defaults"));
    cmd.add("--datadir=" + data);
    cmd.add("--port=" + port);
    cmd.add("--bind-address=127.0.0.1");
    cmd.add("--socket=" + root.resolve("mariadb.sock"));
    cmd.add("--pid-file=" + root.resolve("mariadb.pid"));
    cmd.add("--log-error=" + root.resolve("error.log"));
    cmd.add("--max-connections=400");
    cmd.add("--innodb-buffer-pool-size=256M");
    cmd.add("--skip-name-resolve");
    cmd.add("--tmpdir=" + tmp());
    cmd.addAll(options);
    if (root()) {
      cmd.add("--user=mysql");
    }
    try {
      server =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(Redirect.appendTo(root.resolve("stdout.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + MARIADBD, e);
    }
    awaitConnections(Duration.ofMinutes(2));
  }

  private void awaitConnections(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(url(), user(), password())) {
        return;
      } catch (SQLException e) {
        if (!server.isAlive()) {
          throw new IllegalStateException(
              "the private MariaDB exited at start; see " + root.resolve("error.log"), e);
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the private MariaDB does not accept connections", e);
        }
        ChildArgs.sleepQuietly(Duration.ofMillis(50));
      }
    }
  }

  int port() {
    return port;
  }

  /** Kills the server with SIGKILL and waits until it is gone (no restart). */
  void kill() {
    server.destroyForcibly();
    try {
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the private MariaDB did not die within 30 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing MariaDB", e);
    }
  }

  @Override
  public Duration crashAndRestart() {
    long t0 = System.nanoTime();
    server.destroyForcibly(); // SIGKILL: no shutdown, InnoDB recovers at the next start
    try {
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the private MariaDB did not die within 30 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while crashing MariaDB", e);
    }
    launch();
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  @Override
  public String kind() {
    return "mariadb";
  }

  @Override
  public String url() {
    return "jdbc:mariadb://127.0.0.1:" + port + "/?sslMode=disable";
  }

  @Override
  public String user() {
    return "root";
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
    return "bigint AUTO_INCREMENT PRIMARY KEY";
  }

  @Override
  public String partitionColumn() {
    return "`partition`";
  }

  @Override
  public String schema() {
    return database;
  }

  @Override
  public void close() {
    if (server != null && server.isAlive()) {
      server.destroy(); // SIGTERM: a clean shutdown
      try {
        if (!server.waitFor(60, TimeUnit.SECONDS)) {
          server.destroyForcibly();
        }
      } catch (InterruptedException e) {
        server.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not delete " + root + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "private MariaDB on 127.0.0.1:" + port + " (data in " + data + ")";
  }
}
