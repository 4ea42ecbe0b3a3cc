package io.boxline.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A PostgreSQL primary and a streaming replica of its own (Debian's binaries, {@code pg_basebackup
 * -R}), for failover tests: the primary is crashed ({@code pg_ctl stop -m immediate}) and the
 * replica promoted. With {@code synchronous} the primary waits for the replica to confirm each
 * commit ({@code synchronous_standby_names = '*'}); without, replication is asynchronous and the
 * newest commits may be lost with the primary.
 */
public final class PostgresPair implements AutoCloseable {
  private final Path root;
  private final int primaryPort;
  private final int standbyPort;
  private boolean promoted;

  private PostgresPair(Path root, int primaryPort, int standbyPort) {
    this.root = root;
    this.primaryPort = primaryPort;
    this.standbyPort = standbyPort;
  }

  /** Starts the primary, takes a base backup, starts the replica streaming from it. */
  public static PostgresPair start(boolean synchronous) {
    if (!Files.isExecutable(PrivatePostgres.BIN.resolve("pg_basebackup"))) {
      throw new IllegalStateException(
          "no PostgreSQL binaries in " + PrivatePostgres.BIN + " (apt-get install postgresql-15)");
    }
    try {
      Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of("/tmp");
      Path root = Files.createTempDirectory(base, "boxline-failover-");
      PostgresPair pair =
          new PostgresPair(root, PrivatePostgres.freePort(), PrivatePostgres.freePort());
      PrivatePostgres.run(Duration.ofSeconds(10), "chown", "-R", "postgres", root.toString());
      pair.initPrimary();
      pair.launch(pair.primary(), pair.primaryPort);
      PrivatePostgres.pgCommand(
          Duration.ofMinutes(2),
          PrivatePostgres.BIN.resolve("pg_basebackup").toString(),
          "-h",
          "127.0.0.1",
          "-p",
          String.valueOf(pair.primaryPort),
          "-U",
          "postgres",
          "-D",
          pair.standby().toString(),
          "-R",
          "-X",
          "stream",
          "--checkpoint=fast");
      pair.launch(pair.standby(), pair.standbyPort);
      pair.awaitStreaming(Duration.ofSeconds(60), "streaming");
      if (synchronous) {
        // Set on the primary only (postgresql.auto.conf is not replicated): the promoted replica
        // must not wait for a standby it does not have.
        pair.onPrimary(
            "ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()");
        pair.awaitStreaming(Duration.ofSeconds(60), "sync");
      }
      return pair;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Path primary() {
    return root.resolve("primary");
  }

  private Path standby() {
    return root.resolve("standby");
  }

  private void initPrimary() throws IOException {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(2),
        PrivatePostgres.BIN.resolve("initdb").toString(),
        "-D",
        primary().toString(),
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync");
    String conf = "\nwal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n";
    Files.writeString(
        primary().resolve("postgresql.conf"), conf, java.nio.file.StandardOpenOption.APPEND);
  }

  private void launch(Path data, int port) {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(2),
        PrivatePostgres.BIN.resolve("pg_ctl").toString(),
        "-D",
        data.toString(),
        "-l",
        data.resolveSibling(data.getFileName() + ".log").toString(),
        "-w",
        "-t",
        "110",
        "-o",
        "-p " + port + " -k " + root + " -c listen_addresses=127.0.0.1 -c max_connections=200",
        "start");
  }

  private void onPrimary(String... statements) {
    try (Connection c = DriverManager.getConnection(primaryUrl(), "postgres", "");
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot configure the primary", e);
    }
  }

  /**
   * Waits until the primary reports the replica streaming, and with {@code "sync"} as its
   * synchronous standby.
   */
  private void awaitStreaming(Duration max, String what) {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(primaryUrl(), "postgres", "");
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery(
                  "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
                      + ("sync".equals(what) ? " AND sync_state = 'sync'" : ""))) {
        rs.next();
        if (rs.getInt(1) > 0) {
          return;
        }
      } catch (SQLException e) {
        // not up yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the replica was not " + what + " within " + max);
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(50));
    }
  }

  public String primaryUrl() {
    return "jdbc:postgresql://127.0.0.1:" + primaryPort + "/postgres";
  }

  public String standbyUrl() {
    return "jdbc:postgresql://127.0.0.1:" + standbyPort + "/postgres";
  }

  /**
   * Both servers, the writable one first: what clients use to follow a failover ({@code
   * targetServerType=primary} skips a server in recovery).
   */
  public String multiHostUrl() {
    return "jdbc:postgresql://127.0.0.1:"
        + primaryPort
        + ",127.0.0.1:"
        + standbyPort
        + "/postgres?targetServerType=primary&connectTimeout=2&socketTimeout=10";
  }

  /**
   * Makes the replica apply each commit only this long after the primary made it ({@code
   * recovery_min_apply_delay}; zero: at once): a lagging replica on demand.
   */
  public void delayReplay(Duration delay) {
    onStandby(
        "ALTER SYSTEM SET recovery_min_apply_delay = '" + delay.toMillis() + "ms'",
        "SELECT pg_reload_conf()");
  }

  /** Stops the replica (fast shutdown); {@link #startStandby} brings it back. */
  public void stopStandby() {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(1),
        PrivatePostgres.BIN.resolve("pg_ctl").toString(),
        "-D",
        standby().toString(),
        "-m",
        "fast",
        "-w",
        "stop");
  }

  /** Starts the replica again; it streams from the primary where it stopped. */
  public void startStandby() {
    launch(standby(), standbyPort);
    awaitStreaming(Duration.ofSeconds(60), "streaming");
  }

  private void onStandby(String... statements) {
    try (Connection c = DriverManager.getConnection(standbyUrl(), "postgres", "");
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot configure the replica", e);
    }
  }

  /** The primary's postmaster process id (its backends are its children). */
  public long primaryPid() {
    return postmasterPid(primary());
  }

  /** The replica's postmaster process id (its startup, WAL receiver and backends are children). */
  public long standbyPid() {
    return postmasterPid(standby());
  }

  private static long postmasterPid(Path data) {
    try {
      return Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).strip());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Crashes the primary: its processes are killed, nothing is flushed or handed over. */
  public void crashPrimary() {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(1),
        PrivatePostgres.BIN.resolve("pg_ctl").toString(),
        "-D",
        primary().toString(),
        "-m",
        "immediate",
        "-w",
        "stop");
  }

  /** Promotes the replica and waits until it accepts writes. */
  public void promoteStandby() {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(1),
        PrivatePostgres.BIN.resolve("pg_ctl").toString(),
        "-D",
        standby().toString(),
        "-w",
        "promote");
    promoted = true;
  }

  @Override
  public void close() {
    for (Path data : new Path[] {primary(), standby()}) {
      try {
        PrivatePostgres.pgCommand(
            Duration.ofMinutes(1),
            PrivatePostgres.BIN.resolve("pg_ctl").toString(),
            "-D",
            data.toString(),
            "-m",
            "immediate",
            "stop");
      } catch (RuntimeException e) {
        // already stopped (the crashed primary)
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
    return "PostgreSQL primary :"
        + primaryPort
        + " and replica :"
        + standbyPort
        + (promoted ? " (replica promoted)" : "");
  }
}
