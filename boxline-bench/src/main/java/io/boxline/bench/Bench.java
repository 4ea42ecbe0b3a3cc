package io.boxline.bench;

import io.boxline.Boxline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Boxline benchmarks: the one entry point, with the registry of every workload (commands in
 * docs/benchmarks.md, "Running"). First argument: a workload ({@code w1}, {@code w2}, {@code w3},
 * {@code s1}, {@code soak}), {@code all} (= W1–W3), or a comma-separated list of workloads of one
 * {@link Suite}. Then {@code --name=value} options ({@code --help} after a workload lists the ones
 * it reads). Everything runs on PostgreSQL in schemas of its own ({@code bench_<random>...}), all
 * dropped at the end, also on Ctrl-C. Results are printed as Markdown and written to {@code
 * boxline-bench/target/<suite>-<time>.md}. A failed correctness check (lost, duplicate or
 * out-of-order event …) prints {@code BENCHMARK FAILED (correctness)} and exits 1. Workloads
 * retired by issue 34 run at the git tag {@code bench-archive-2026-11} (docs/benchmarks.md,
 * "Retired workloads").
 */
public final class Bench {
  /** Workloads that share a report, a set of common options and a way of using the database. */
  enum Suite {
    W("Boxline benchmark run", "bench"),
    SERVER("Boxline server benchmark", "server"),
    SOAK("Boxline soak run", "soak");

    final String title;
    final String reportName;

    Suite(String title, String reportName) {
      this.title = title;
      this.reportName = reportName;
    }

    /** The options every workload of the suite reads. */
    List<Opt<?>> common() {
      return switch (this) {
        case W ->
            List.of(
                Db.URL,
                Db.USER,
                Db.PASSWORD,
                POOL,
                PARTITIONS,
                SEQUENCING,
                QUIET,
                QUIET_BUSY,
                VERBOSE);
        case SERVER, SOAK -> List.of(Db.URL, Db.USER, Db.PASSWORD, VERBOSE);
      };
    }
  }

  static final Opt<Integer> POOL =
      Opt.integer("pool", 32, "HikariCP pool size per workload, producers and consumers share it");
  static final Opt<Integer> PARTITIONS = Opt.integer("partitions", 8, "partitions of the topic");
  static final Opt<io.boxline.Sequencing> SEQUENCING =
      Opt.choice(
          "sequencing",
          io.boxline.Sequencing.SEQUENCER,
          "sequencer or in-transaction: the W1 and W2 topic's",
          io.boxline.Sequencing.class);
  static final Opt<Integer> QUIET =
      Opt.integer(
          "quiet", 0, "before each measured trial wait up to this many s for a quiet machine");
  static final Opt<Double> QUIET_BUSY =
      Opt.decimal("quiet.busy", 30, "quiet: CPU use of the machine at most this many %");
  static final Opt<Boolean> VERBOSE =
      Opt.flag(
          "verbose",
          false,
          "print Boxline's warnings as they come (W1-W3 always do; they are counted anyway)");

  /** Every workload, in the order {@code --help} lists them. */
  static List<Workload> workloads() {
    return List.of(
        W1Throughput.WORKLOAD,
        W2Latency.WORKLOAD,
        W3Idle.WORKLOAD,
        F1Fanout.WORKLOAD,
        P1Partitions.WORKLOAD,
        S1Server.WORKLOAD,
        K1Kafka.WORKLOAD,
        S2Waiting.WORKLOAD,
        Soak.WORKLOAD);
  }

  /** The name that stands for several workloads. */
  static final Map<String, List<String>> GROUPS = Map.of("all", List.of("w1", "w2", "w3"));

  // Keep strong references, or the JUL configuration is garbage collected.
  private static final List<Logger> QUIET_LOGGERS = new ArrayList<>();

  /** Boxline warnings logged so far (lost partitions, dead letters …). */
  static final AtomicLong WARNINGS = new AtomicLong();

  static final List<String> FIRST_WARNINGS = new CopyOnWriteArrayList<>();

  private static volatile boolean interrupted;

  private Bench() {}

  public static void main(String[] args) throws Exception {
    try {
      System.exit(run(args));
    } catch (picocli.CommandLine.ParameterException e) {
      System.err.println(e.getMessage() + " (--help lists the options)");
      System.exit(2);
    }
  }

  /** exec:exec passes one argument when the arguments are quoted together. */
  private static String[] split(String[] args) {
    return args.length == 1 && args[0].contains(" ") ? args[0].trim().split("\\s+") : args;
  }

  static int run(String[] args) throws Exception {
    args = split(args);
    if (args.length == 0) {
      args = new String[] {"all"};
    }
    if (args[0].equals("--help") || args[0].equals("help")) {
      System.out.print(help(workloads()));
      return 0;
    }
    List<Workload> chosen = choose(args[0]);
    Suite suite = chosen.get(0).suite();
    // The options of every workload of the suite, so that one command line serves a whole suite.
    Set<Opt<?>> known = new LinkedHashSet<>(suite.common());
    workloads().stream().filter(w -> w.suite() == suite).forEach(w -> known.addAll(w.options()));
    List<String> rest = Arrays.asList(args).subList(1, args.length);
    if (rest.contains("--help")) {
      System.out.print(help(chosen));
      return 0;
    }
    Options o = Options.parse(rest, known);
    quietLogs(o.given(VERBOSE) ? o.get(VERBOSE) : suite == Suite.W);
    Db db = Db.of(o);
    // Every schema of the run starts with this name; all are dropped at the end.
    String schema = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    Thread cleanup =
        new Thread(
            () -> {
              interrupted = true;
              System.err.println("interrupted: closing pools and dropping schemas " + schema + "*");
              Db.closePools();
              dropQuietly(db, schema);
            },
            "bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    Run run = new Run(o, db, schema);
    StringBuilder report = new StringBuilder(header(suite, run, args));
    System.out.print(report);
    Path file = reportFile(suite.reportName);
    long started = System.nanoTime();
    try {
      if (suite == Suite.W) {
        db.exec("CREATE SCHEMA " + schema);
      }
      for (Workload w : chosen) {
        String part = w.run(run);
        System.out.println();
        System.out.println(part);
        report.append(part).append('\n');
        Files.writeString(file, report);
      }
    } catch (BenchFailure e) {
      String what = interrupted ? "BENCHMARK INTERRUPTED: " : "BENCHMARK FAILED (correctness): ";
      System.out.println();
      System.out.println(what + e.getMessage());
      Files.writeString(file, report + "\nFAILED: " + e.getMessage() + "\n");
      return 1;
    } finally {
      dropQuietly(db, schema);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException ignored) {
        // shutting down already
      }
    }
    report.append(
        Stats.f(
            "Total time %.0f s; load average at the end %s; Boxline warnings logged: %d%s. All"
                + " correctness checks passed.%n",
            (System.nanoTime() - started) / 1e9,
            Noise.loadAverages(),
            WARNINGS.get(),
            FIRST_WARNINGS.isEmpty() ? "" : " (first: " + FIRST_WARNINGS.get(0) + ")"));
    System.out.println();
    System.out.println(report);
    Files.writeString(file, report);
    System.out.println("Written to " + file.toAbsolutePath());
    return 0;
  }

  /** The workloads a first argument names; they must belong to one suite. */
  static List<Workload> choose(String arg) {
    List<Workload> chosen = new ArrayList<>();
    for (String name : arg.toLowerCase(Locale.ROOT).split(",")) {
      for (String n : GROUPS.getOrDefault(name, List.of(name))) {
        Workload w =
            workloads().stream()
                .filter(x -> x.name().equals(n))
                .findFirst()
                .orElseThrow(
                    () ->
                        new IllegalArgumentException(
                            "unknown workload " + n + "; --help lists them"));
        if (!chosen.isEmpty() && chosen.get(0).suite() != w.suite()) {
          throw new IllegalArgumentException(
              w.name() + " and " + chosen.get(0).name() + " cannot run together; run them apart");
        }
        chosen.add(w);
      }
    }
    return chosen;
  }

  static String help(List<Workload> list) {
    StringBuilder sb =
        new StringBuilder(
            "Usage: Bench <workload>[,<workload>...] [--name=value ...]   (all = w1,w2,w3)\n");
    Suite shown = null;
    for (Workload w : list) {
      if (w.suite() != shown) {
        shown = w.suite();
        if (!shown.common().isEmpty()) {
          sb.append("\nOptions of every workload of the ")
              .append(shown.title)
              .append(":\n")
              .append(Options.help(shown.common()));
        }
      }
      sb.append('\n').append(w.name()).append(": ").append(w.description()).append('\n');
      sb.append(Options.help(w.options()));
    }
    return sb.toString();
  }

  private static Path reportFile(String name) throws IOException {
    String stamp =
        LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    return SoakPlots.targetDir().resolve(name + "-" + stamp + ".md");
  }

  private static void dropQuietly(Db db, String schema) {
    try {
      db.dropSchemas(schema);
    } catch (RuntimeException e) {
      System.err.println("could not drop schemas " + schema + "*: " + e.getMessage());
    }
  }

  private static String header(Suite suite, Run run, String[] args) {
    Options o = run.o();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("date (UTC)", LocalDateTime.now(ZoneOffset.UTC).withNano(0).toString());
    env.put("arguments", String.join(" ", args));
    env.put("CPU cores (JVM)", Integer.toString(Runtime.getRuntime().availableProcessors()));
    env.put("load average at start (1/5/15 min)", Noise.loadAverages());
    env.put(
        "Java",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    run.db().describe(env);
    if (suite == Suite.W) {
      env.put(
          "pool",
          "HikariCP, "
              + o.get(POOL)
              + " connections (per workload), shared by producers and consumers");
      env.put("partitions", Integer.toString(o.get(PARTITIONS)));
      env.put("sequencing (W1, W2 topic)", o.get(SEQUENCING).name());
      env.put("W2 handler thread", o.get(W2Latency.ON_COMMITTING_THREAD) ? "committing" : "worker");
    }
    env.put("boxline-core", jar(Boxline.class));
    env.put("boxline-jdbc", jar(io.boxline.jdbc.JdbcStore.class));
    env.put("schemas", run.schema() + "*, dropped at the end");
    Table t = new Table("Setting", "Value");
    env.forEach(t::row);
    return "# " + suite.title + "\n\n" + t + "\n";
  }

  /** Where a class was loaded from, and when that file was written (which build ran). */
  static String jar(Class<?> type) {
    try {
      Path p = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
      return p.getFileName() + " written " + Files.getLastModifiedTime(p);
    } catch (Exception e) {
      return "?";
    }
  }

  /**
   * Silences INFO logging of Boxline (java.util.logging) and HikariCP (slf4j-simple). Boxline's
   * warnings are counted, the first few kept for the report, and printed only when {@code verbose}.
   */
  static void quietLogs(boolean verbose) {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    Logger boxline = Logger.getLogger("io.boxline");
    boxline.setLevel(Level.WARNING);
    boxline.setUseParentHandlers(verbose);
    boxline.addHandler(
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            if (r.getLevel().intValue() < Level.WARNING.intValue()) {
              return;
            }
            WARNINGS.incrementAndGet();
            if (FIRST_WARNINGS.size() < 20) {
              String m = r.getMessage();
              if (r.getParameters() != null) {
                m = java.text.MessageFormat.format(m, r.getParameters());
              }
              FIRST_WARNINGS.add(m);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
    QUIET_LOGGERS.add(boxline);
  }

  static void log(String format, Object... args) {
    System.out.println(
        LocalDateTime.now(ZoneOffset.UTC).toLocalTime().withNano(0) + " " + Stats.f(format, args));
  }

  /**
   * Waits until this instance leads the sequencer, so producers take the in-process wake-up path.
   */
  static void awaitLeader(Boxline boxline) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!boxline.stats().sequencerLeader()) {
      BenchFailure.check(
          System.nanoTime() < deadline, "Boxline did not become sequencer leader within 20 s");
      Thread.sleep(5);
    }
  }
}
