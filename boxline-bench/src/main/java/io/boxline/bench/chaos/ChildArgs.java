package io.boxline.bench.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

/**
 * What every chaos child shares: {@code --key=value} arguments, the watch that ends the child when
 * the parent closes stdin or dies, database pools, a Boxline instance started with retries (the
 * database may be restarting when a child starts), and a status file the parent reads.
 */
final class ChildArgs {
  private final Map<String, String> args;
  private final CountDownLatch shutdown = new CountDownLatch(1);

  private ChildArgs(Map<String, String> args) {
    this.args = args;
  }

  static ChildArgs parse(String[] argv) {
    Map<String, String> map = new LinkedHashMap<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (!a.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("expected --key=value, got " + a);
      }
      map.put(a.substring(2, eq), a.substring(eq + 1));
    }
    ChildArgs child = new ChildArgs(map);
    child.watchParent();
    return child;
  }

  String get(String key) {
    String v = args.get(key);
    if (v == null) {
      throw new IllegalArgumentException("missing --" + key);
    }
    return v;
  }

  int getInt(String key) {
    return Integer.parseInt(get(key));
  }

  long getLong(String key) {
    return Long.parseLong(get(key));
  }

  /** Name of this incarnation, e.g. {@code consumer-1-run3}. */
  String incarnation() {
    return get("role") + "-" + get("index") + "-run" + get("run");
  }

  /** Member id, stable across incarnations (a restarted member rejoins under its own id). */
  String memberId() {
    return get("role") + "-" + get("index");
  }

  /** Blocks until stdin ends (the parent asked for a graceful stop, or went away). */
  void awaitShutdown() throws InterruptedException {
    shutdown.await();
  }

  boolean shuttingDown() {
    return shutdown.getCount() == 0;
  }

  private void watchParent() {
    Thread stdin =
        new Thread(
            () -> {
              InputStream in = System.in;
              byte[] buf = new byte[64];
              try {
                while (in.read(buf) >= 0) {
                  // the parent never writes
                }
              } catch (IOException ignored) {
                // same as end of input
              }
              shutdown.countDown();
              // A graceful stop is bounded: halt if it takes too long.
              Thread watchdog =
                  new Thread(
                      () -> {
                        sleepQuietly(Duration.ofSeconds(30));
                        log("graceful stop took over 30 s: halting");
                        Runtime.getRuntime().halt(4);
                      },
                      "chaos-stop-watchdog");
              watchdog.setDaemon(true);
              watchdog.start();
            },
            "chaos-stdin-watch");
    stdin.setDaemon(true);
    stdin.start();
  }

  HikariDataSource pool(String name, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(get("url"));
    cfg.setUsername(get("user"));
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
                .store(JdbcStore.builder(pool).schema(get("schema")).build())
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
    Path dir = Path.of(get("statusDir"));
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

  static void log(String message) {
    System.out.println(Instant.now() + " [" + Thread.currentThread().getName() + "] " + message);
    System.out.flush();
  }
}
