package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Plumbing shared by the child-process mains: {@code --key=value} arguments, database pools tagged
 * with an {@code application_name} (so the parent can see in {@code pg_stat_activity} when a killed
 * child's sessions are gone), and the guarantee that a child never outlives its parent.
 *
 * <p>Common arguments: {@code --url} (JDBC URL), {@code --user}, {@code --schema}, {@code --app}
 * (application name of the child's sessions). The password comes from the environment variable
 * {@link ChildJvm#PASSWORD_ENV}.
 */
public final class ChildMain {
  private final Map<String, String> args;
  private final CountDownLatch shutdown = new CountDownLatch(1);

  private ChildMain(Map<String, String> args) {
    this.args = args;
  }

  /**
   * Parses {@code --key=value} arguments and starts the parent watch: the returned object's {@link
   * #awaitShutdown()} returns when stdin reaches end-of-file (the parent closed it or died); if the
   * parent process disappears the child halts at once.
   */
  public static ChildMain init(String[] argv) {
    Map<String, String> map = new LinkedHashMap<>();
    for (String a : argv) {
      if (!a.startsWith("--") || a.indexOf('=') < 0) {
        throw new IllegalArgumentException("expected --key=value, got " + a);
      }
      int eq = a.indexOf('=');
      map.put(a.substring(2, eq), a.substring(eq + 1));
    }
    ChildMain child = new ChildMain(map);
    child.watchParent();
    return child;
  }

  private void watchParent() {
    Thread stdin =
        new Thread(
            () -> {
              InputStream in = System.in;
              byte[] buf = new byte[256];
              try {
                while (in.read(buf) >= 0) {
                  // the parent never writes; anything read is ignored
                }
              } catch (IOException ignored) {
                // treated like end-of-file
              }
              log("stdin closed: shutting down");
              shutdown.countDown();
            },
            "child-stdin-watch");
    stdin.setDaemon(true);
    stdin.start();
    Optional<ProcessHandle> parent = ProcessHandle.current().parent();
    Thread liveness =
        new Thread(
            () -> {
              long deadline = Long.MAX_VALUE;
              while (System.nanoTime() < deadline) {
                if (parent.isPresent() && !parent.get().isAlive()) {
                  log("parent process is gone: halting");
                  Runtime.getRuntime().halt(3);
                }
                if (deadline != Long.MAX_VALUE) {
                  LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
                  continue;
                }
                try {
                  if (shutdown.await(500, TimeUnit.MILLISECONDS)) {
                    // A graceful shutdown normally ends the JVM well before this watchdog fires.
                    deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                  }
                } catch (InterruptedException e) {
                  return;
                }
              }
              log("graceful shutdown took more than 30 s: halting");
              Runtime.getRuntime().halt(4);
            },
            "child-parent-watch");
    liveness.setDaemon(true);
    liveness.start();
  }

  /** Blocks until the parent asks for shutdown (closes stdin) or goes away. */
  public void awaitShutdown() throws InterruptedException {
    shutdown.await();
  }

  public String require(String key) {
    String v = args.get(key);
    if (v == null) {
      throw new IllegalArgumentException("missing argument --" + key + "=...; got " + args);
    }
    return v;
  }

  public String get(String key, String fallback) {
    return args.getOrDefault(key, fallback);
  }

  public int getInt(String key, int fallback) {
    String v = args.get(key);
    return v == null ? fallback : Integer.parseInt(v);
  }

  public long getLong(String key, long fallback) {
    String v = args.get(key);
    return v == null ? fallback : Long.parseLong(v);
  }

  public boolean getBoolean(String key, boolean fallback) {
    String v = args.get(key);
    return v == null ? fallback : Boolean.parseBoolean(v);
  }

  /** A pool on {@code --url} as {@code --user}, its sessions named {@code --app}. */
  public HikariDataSource pool(String poolName, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(require("url"));
    cfg.setUsername(require("user"));
    String password = System.getenv(ChildJvm.PASSWORD_ENV);
    cfg.setPassword(password == null ? "" : password);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(1);
    cfg.setPoolName(poolName);
    cfg.setConnectionTimeout(10_000);
    cfg.addDataSourceProperty("ApplicationName", require("app"));
    return new HikariDataSource(cfg);
  }

  /** One line on stdout (the parent's log file for this child), time-stamped. */
  public static void log(String message) {
    System.out.println(Instant.now() + " [" + Thread.currentThread().getName() + "] " + message);
    System.out.flush();
  }
}
