package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Plumbing shared by the child-process mains: {@code --key=value} arguments parsed by picocli into
 * each main's own subclass (its options next to these), database pools tagged with an {@code
 * application_name} (so the parent can see in {@code pg_stat_activity} when a killed child's
 * sessions are gone), and the guarantee that a child never outlives its parent.
 *
 * <p>Common arguments: {@code --url} (JDBC URL), {@code --user}, {@code --schema}, {@code --app}
 * (application name of the child's sessions). The password comes from the environment variable
 * {@link ChildJvm#PASSWORD_ENV}.
 */
@Command
public class ChildMain {
  @Option(names = "--url", required = true)
  String url;

  @Option(names = "--user", required = true)
  String user;

  @Option(names = "--schema", required = true)
  String schema;

  @Option(names = "--app", required = true)
  String app;

  private final CountDownLatch shutdown = new CountDownLatch(1);

  protected ChildMain() {}

  /**
   * Parses {@code argv} into {@code options} (an unknown or missing option is an error) and starts
   * the parent watch: {@link #awaitShutdown()} returns when stdin reaches end-of-file (the parent
   * closed it or died); if the parent process disappears the child halts at once.
   */
  public static <T extends ChildMain> T init(T options, String[] argv) {
    new CommandLine(options).parseArgs(argv);
    ((ChildMain) options).watchParent();
    return options;
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

  public String url() {
    return url;
  }

  public String user() {
    return user;
  }

  public String schema() {
    return schema;
  }

  /** True once the parent asked for shutdown (closed stdin) or went away. */
  public boolean shuttingDown() {
    return shutdown.getCount() == 0;
  }

  /** Blocks until the parent asks for shutdown (closes stdin) or goes away. */
  public void awaitShutdown() throws InterruptedException {
    shutdown.await();
  }

  /** A pool on {@code --url} as {@code --user}, its sessions named {@code --app}. */
  public HikariDataSource pool(String poolName, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    cfg.setUsername(user);
    String password = System.getenv(ChildJvm.PASSWORD_ENV);
    cfg.setPassword(password == null ? "" : password);
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(1);
    cfg.setPoolName(poolName);
    cfg.setConnectionTimeout(10_000);
    cfg.addDataSourceProperty("ApplicationName", app);
    return new HikariDataSource(cfg);
  }

  /** One line on stdout (the parent's log file for this child), time-stamped. */
  public static void log(String message) {
    System.out.println(Instant.now() + " [" + Thread.currentThread().getName() + "] " + message);
    System.out.flush();
  }
}
