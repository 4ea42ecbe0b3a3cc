package io.boxline.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.process.ChildMain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What every chaos child shares: its {@code --key=value} arguments (what a role does not use stays
 * at its default; the database's and the watch that ends the child when the parent closes stdin or
 * dies are the testkit's {@link ChildMain}), database pools that wait for a database that is down,
 * a Boxline instance started with retries (the database may be restarting when a child starts), and
 * a status file the parent reads.
 */
@Command(name = "chaos-child")
final class ChildArgs extends ChildMain {
  @Option(names = "--role", required = true)
  String role;

  @Option(names = "--index", required = true)
  int index;

  @Option(names = "--run", required = true)
  int run;

  @Option(names = "--statusDir", required = true)
  Path statusDir;

  @Option(names = "--seed")
  long seed;

  @Option(names = "--threads")
  int threads;

  @Option(names = "--rate")
  int rate;

  @Option(names = "--maxEvents")
  int maxEvents;

  @Option(names = "--keys")
  int keys;

  @Option(names = "--batch")
  int batch;

  @Option(names = "--concurrency")
  int concurrency;

  @Option(names = "--nats")
  String nats;

  static ChildArgs parse(String[] argv) {
    return ChildMain.init(new ChildArgs(), argv);
  }

  /** Name of this incarnation, e.g. {@code consumer-1-run3}. */
  String incarnation() {
    return role + "-" + index + "-run" + run;
  }

  /** Member id, stable across incarnations (a restarted member rejoins under its own id). */
  String memberId() {
    return role + "-" + index;
  }

  /** A pool that waits for a database that is down (ChildMain.pool would fail at once). */
  HikariDataSource waitingPool(String name, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url());
    cfg.setUsername(user());
    String password = System.getenv(ChaosDatabase.PASSWORD_ENV);
    cfg.setPassword(password == null ? "" : password);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(0);
    cfg.setPoolName(name);
    cfg.setConnectionTimeout(5_000);
    cfg.setInitializationFailTimeout(-1); // the database may be down right now
    return new HikariDataSource(cfg);
  }

  /** Starts Boxline, retrying while the database is unreachable (bounded: two minutes). */
  Boxline startBoxline(HikariDataSource pool, boolean sequencer) {
    return retry(
        "start Boxline",
        () ->
            Boxline.builder()
                .store(JdbcStore.builder(pool).schema(schema()).build())
                .instanceId(incarnation())
                .sequencer(sequencer)
                .sequencerLease(Duration.ofSeconds(3))
                .migrate(false)
                .build()
                .start());
  }

  static <T> T retry(String what, Supplier<T> action) {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (true) {
      try {
        return action.get();
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        log("could not " + what + " (retrying): " + e);
        sleepQuietly(Duration.ofMillis(500));
      }
    }
  }

  /** Writes {@code key=value} lines atomically to this incarnation's status file. */
  void writeStatus(Map<String, Long> counters) {
    Path dir = statusDir;
    StringBuilder sb = new StringBuilder();
    counters.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
    try {
      Path tmp = dir.resolve(incarnation() + ".tmp");
      Files.writeString(tmp, sb);
      Files.move(
          tmp,
          dir.resolve(incarnation() + ".status"),
          StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Rewrites the status file every second on a daemon thread. */
  void reportEvery(Supplier<Map<String, Long>> counters) {
    Thread t =
        new Thread(
            () -> {
              while (true) {
                try {
                  writeStatus(counters.get());
                } catch (RuntimeException e) {
                  log("status not written: " + e);
                }
                sleepQuietly(Duration.ofSeconds(1));
              }
            },
            "chaos-status");
    t.setDaemon(true);
    t.start();
  }

  static void sleepQuietly(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
