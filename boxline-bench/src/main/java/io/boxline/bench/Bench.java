package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.bench.DeliveryCheck.BenchFailure;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Boxline benchmarks. Usage (from the repository root):
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench compile exec:java -Dexec.args="all"
 * ./mvnw -o -q -pl boxline-bench compile exec:java -Dexec.args="w1 --w1.runs=5"
 * </pre>
 *
 * <p>First argument: {@code w1}, {@code w2}, {@code w3}, {@code all}, or a comma-separated list.
 * Options ({@code --name=value}): see {@link Options}; {@code --db=mariadb} (or a {@code
 * --url=jdbc:mariadb://...}) runs them on MariaDB instead of PostgreSQL. Every run works in schemas
 * of its own ({@code bench_<random>...}; databases on MariaDB), dropped at the end. Results are
 * printed as Markdown tables and also written to {@code boxline-bench/target/bench-<time>.md}. Any
 * failed correctness check (lost, duplicate or out-of-order event) aborts the run with a non-zero
 * exit.
 */
public final class Bench {
  // Keep strong references, or the JUL configuration is garbage collected.
  private static final List<Logger> QUIET = new ArrayList<>();

  /** Settings, with the defaults used for docs/benchmarks.md. */
  static final class Options {
    /** {@code --db=postgresql} (default) or {@code --db=mariadb}; a {@code --url} decides too. */
    String db;

    String url;
    String user;
    String password = "";
    int pool = 32;
    int partitions = 8;

    /** {@code --sequencing=sequencer} (default) or {@code in-transaction}: W1's and W2's topic. */
    io.boxline.Sequencing sequencing = io.boxline.Sequencing.SEQUENCER;

    // W1
    int w1Events = 50_000;
    int w1WarmupEvents = 5_000;
    int w1Threads = 4;
    int w1Runs = 3;
    int[] w1TxnSizes = {1, 10};
    int w1ConsumerConcurrency = 8;
    int w1ConsumerBatch = 100;

    /**
     * {@code --w1.managed=true}: Boxline's producers run their transactions through {@code
     * inTransaction} instead of committing their own connections (the raw baseline is unchanged).
     */
    boolean w1Managed = false;

    // W2
    int[] w2Rates = {200, 1000};
    List<String> w2Where = List.of("same-jvm", "other-jvm");
    double w2WarmupSeconds = 15;
    int w2WarmupRate = 1000;
    double w2Seconds = 10;
    int w2Threads = 8;
    int w2ConsumerConcurrency = 8;

    /**
     * {@code --w2.handler-thread=worker} (default) or {@code committing}: the same-JVM consumer's
     * {@code handleOnCommittingThread} (only in-transaction topics use it).
     */
    boolean w2OnCommittingThread = false;

    boolean w2Trace = false;

    /** {@code --w2.dump=dir}: one CSV per trial (event, commit ms since the first, latency µs). */
    String w2Dump;

    long w2RemoteNotifyMillis = Boxline.Builder.DEFAULT_PRODUCER_NOTIFY_INTERVAL.toMillis();
    boolean w1Trace = false;
    // W3
    int[] w3Consumers = {0, 1, 2, 10};
    int w3Seconds = 30;
    int w3SettleSeconds = 3;
    int w3ControlSeconds = 10;
    // Shared machine: before each measured trial wait up to this long for CPU use <= quietBusy %.
    int quietSeconds = 0;
    double quietBusy = 30;

    static Options parse(List<String> args) {
      Options o = new Options();
      for (String a : args) {
        if (!a.startsWith("--") || !a.contains("=")) {
          throw new IllegalArgumentException("expected --name=value, got " + a);
        }
        String k = a.substring(2, a.indexOf('='));
        String v = a.substring(a.indexOf('=') + 1);
        switch (k) {
          case "db" -> o.db = v.toLowerCase(Locale.ROOT);
          case "url" -> o.url = v;
          case "user" -> o.user = v;
          case "password" -> o.password = v;
          case "pool" -> o.pool = Integer.parseInt(v);
          case "partitions" -> o.partitions = Integer.parseInt(v);
          case "w1.events" -> o.w1Events = Integer.parseInt(v);
          case "w1.warmup" -> o.w1WarmupEvents = Integer.parseInt(v);
          case "w1.threads" -> o.w1Threads = Integer.parseInt(v);
          case "w1.runs" -> o.w1Runs = Integer.parseInt(v);
          case "w1.txn" -> o.w1TxnSizes = ints(v);
          case "w1.concurrency" -> o.w1ConsumerConcurrency = Integer.parseInt(v);
          case "w1.batch" -> o.w1ConsumerBatch = Integer.parseInt(v);
          case "w1.managed" -> o.w1Managed = Boolean.parseBoolean(v);
          case "sequencing" ->
              o.sequencing =
                  io.boxline.Sequencing.valueOf(
                      v.toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
          case "w2.rates" -> o.w2Rates = ints(v);
          case "w2.where" -> o.w2Where = List.of(v.split(","));
          case "w2.warmup" -> o.w2WarmupSeconds = Double.parseDouble(v);
          case "w2.warmup-rate" -> o.w2WarmupRate = Integer.parseInt(v);
          case "w2.seconds" -> o.w2Seconds = Double.parseDouble(v);
          case "w2.threads" -> o.w2Threads = Integer.parseInt(v);
          case "w2.concurrency" -> o.w2ConsumerConcurrency = Integer.parseInt(v);
          case "w2.handler-thread" ->
              o.w2OnCommittingThread =
                  switch (v) {
                    case "worker" -> false;
                    case "committing" -> true;
                    default ->
                        throw new IllegalArgumentException(
                            "--w2.handler-thread must be worker or committing, got " + v);
                  };
          case "w2.trace" -> o.w2Trace = Boolean.parseBoolean(v);
          case "w2.dump" -> o.w2Dump = v;
          case "w2.remote-notify-ms" -> o.w2RemoteNotifyMillis = Long.parseLong(v);
          case "w1.trace" -> o.w1Trace = Boolean.parseBoolean(v);
          case "w3.consumers" -> o.w3Consumers = ints(v);
          case "w3.seconds" -> o.w3Seconds = Integer.parseInt(v);
          case "w3.settle" -> o.w3SettleSeconds = Integer.parseInt(v);
          case "w3.control" -> o.w3ControlSeconds = Integer.parseInt(v);
          case "quiet" -> o.quietSeconds = Integer.parseInt(v);
          case "quiet.busy" -> o.quietBusy = Double.parseDouble(v);
          default -> throw new IllegalArgumentException("unknown option --" + k);
        }
      }
      BenchDatabase kind = database(o.db, o.url);
      o.db = kind.option();
      if (o.url == null) {
        o.url = kind.defaultUrl();
      }
      if (o.user == null) {
        o.user = kind.defaultUser();
      }
      for (String w : o.w2Where) {
        if (!List.of("same-jvm", "other-jvm", "sql", "floor").contains(w)) {
          throw new IllegalArgumentException(
              "--w2.where takes same-jvm, other-jvm, sql (the SQL publish() function in another"
                  + " process) and/or floor (no Boxline: a commit, then a hand-off to another"
                  + " thread)");
        }
      }
      return o;
    }

    /** The database of --db and --url; they must agree when both are given. */
    private static BenchDatabase database(String db, String url) {
      BenchDatabase chosen;
      if (db == null) {
        chosen = null;
      } else if (db.equals("postgresql") || db.equals("postgres") || db.equals("pg")) {
        chosen = PostgreSqlDatabase.INSTANCE;
      } else if (db.equals("mariadb") || db.equals("mysql")) {
        chosen = MariaDbDatabase.INSTANCE;
      } else {
        throw new IllegalArgumentException("--db takes postgresql or mariadb, got " + db);
      }
      if (url == null) {
        return chosen == null ? PostgreSqlDatabase.INSTANCE : chosen;
      }
      BenchDatabase fromUrl = BenchDatabase.forUrl(url);
      if (chosen != null && chosen != fromUrl) {
        throw new IllegalArgumentException(
            "--db=" + db + " does not match --url=" + url + " (a " + fromUrl.product() + " URL)");
      }
      return fromUrl;
    }

    private static int[] ints(String v) {
      return Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray();
    }
  }

  private static volatile boolean interrupted;

  private Bench() {}

  public static void main(String[] args) throws Exception {
    quietLogs();
    if (args.length == 0) {
      args = new String[] {"all"};
    }
    List<String> workloads = new ArrayList<>();
    for (String w : args[0].toLowerCase(Locale.ROOT).split(",")) {
      if (w.equals("all")) {
        workloads.addAll(List.of("w1", "w2", "w3"));
      } else if (List.of("w1", "w2", "w3", "w1-parts").contains(w)) {
        workloads.add(w);
      } else {
        throw new IllegalArgumentException(
            "unknown workload " + w + "; use w1, w2, w3, all or w1-parts");
      }
    }
    Options o = Options.parse(Arrays.asList(args).subList(1, args.length));
    Db db = new Db(o.url, o.user, o.password);
    String runSchema = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    Thread cleanup =
        new Thread(
            () -> {
              interrupted = true;
              System.err.println(
                  "interrupted: closing pools and dropping schemas " + runSchema + "*");
              Db.closePools();
              dropQuietly(db, runSchema);
            },
            "bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    StringBuilder report = new StringBuilder();
    long started = System.nanoTime();
    try {
      report.append(environment(db, o, runSchema, args));
      db.exec(db.kind.createSchema(runSchema));
      for (String w : workloads) {
        switch (w) {
          case "w1" -> {
            List<W1Throughput.Trial> r;
            try (HikariDataSource pool = db.pool("bench-w1", o.pool, null)) {
              r = new W1Throughput(o, db, pool, runSchema).run();
            }
            report.append(Report.w1(o, r));
          }
          case "w2" -> {
            List<W2Latency.Result> r;
            try (HikariDataSource pool = db.pool("bench-w2", o.pool, null)) {
              r = new W2Latency(o, db, pool, runSchema).run();
            }
            report.append(Report.w2(o, r));
          }
          case "w3" -> report.append(Report.w3(o, new W3Idle(o, db, runSchema).run()));
          case "w1-parts" -> {
            List<W1Parts.Part> r;
            try (HikariDataSource pool = db.pool("bench-w1-parts", o.pool, null)) {
              r = new W1Parts(o, db, pool, runSchema).run();
            }
            report.append(Report.w1Parts(o, r));
          }
          default -> throw new IllegalStateException(w);
        }
        flush(report);
      }
    } catch (BenchFailure e) {
      System.out.println();
      System.out.println(
          (interrupted ? "BENCHMARK INTERRUPTED: " : "BENCHMARK FAILED (correctness): ")
              + e.getMessage());
      throw e;
    } finally {
      dropQuietly(db, runSchema);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException ignored) {
        // shutting down already
      }
    }
    report.append(
        Stats.f(
            "%nTotal time: %.0f s. All correctness checks passed.%n",
            (System.nanoTime() - started) / 1e9));
    System.out.println();
    System.out.println(report);
    Path file = writeReport(report);
    System.out.println("Written to " + file.toAbsolutePath());
  }

  private static void flush(StringBuilder report) {
    try {
      writeReport(report);
    } catch (IOException e) {
      // best effort: the final write reports problems
    }
  }

  private static Path reportFile;

  private static Path writeReport(StringBuilder report) throws IOException {
    if (reportFile == null) {
      Path dir = Path.of("target");
      if (Files.isDirectory(Path.of("boxline-bench", "target"))) {
        dir = Path.of("boxline-bench", "target");
      }
      Files.createDirectories(dir);
      String stamp =
          LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
      reportFile = dir.resolve("bench-" + stamp + ".md");
    }
    Files.writeString(reportFile, report);
    return reportFile;
  }

  private static void dropQuietly(Db db, String runSchema) {
    try {
      db.dropSchemas(runSchema);
    } catch (RuntimeException e) {
      System.err.println("could not drop schemas " + runSchema + "*: " + e.getMessage());
    }
  }

  private static String environment(Db db, Options o, String schema, String[] args) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("date (UTC)", LocalDateTime.now(ZoneOffset.UTC).withNano(0).toString());
    env.put("arguments", String.join(" ", args));
    env.put("CPU cores (JVM)", Integer.toString(Runtime.getRuntime().availableProcessors()));
    env.put(
        "Java",
        System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    db.kind.describe(db, env);
    env.put(
        "pool",
        "HikariCP, " + o.pool + " connections (per workload), shared by producers and consumers");
    env.put("partitions", Integer.toString(o.partitions));
    env.put("sequencing (W1, W2 topic)", o.sequencing.name());
    env.put("W1 producers", o.w1Managed ? "boxline.inTransaction" : "own connections");
    env.put("W2 handler thread", o.w2OnCommittingThread ? "committing" : "worker");
    env.put("boxline-core", Bench.jar(io.boxline.Boxline.class));
    env.put("boxline-jdbc", Bench.jar(io.boxline.jdbc.JdbcStore.class));
    env.put("schemas", schema + "*, dropped at the end");
    StringBuilder sb = new StringBuilder("# Boxline benchmark run\n\n");
    Table t = new Table("Setting", "Value");
    env.forEach(t::row);
    sb.append(t).append('\n');
    System.out.print(sb);
    return sb.toString();
  }

  /** Where a class was loaded from, when that file was written, and a hash of it. */
  static String jar(Class<?> type) {
    try {
      Path p = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(p)) {
        return p.toString();
      }
      byte[] digest =
          java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
      StringBuilder hex = new StringBuilder();
      for (int i = 0; i < 6; i++) {
        hex.append(String.format("%02x", digest[i]));
      }
      return p.getFileName()
          + " built "
          + Files.getLastModifiedTime(p)
              .toInstant()
              .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
          + ", sha256 "
          + hex;
    } catch (Exception e) {
      return "?";
    }
  }

  /** Silences INFO logging of Boxline (java.util.logging) and HikariCP (slf4j-simple). */
  static void quietLogs() {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    for (String name : List.of("io.boxline", "com.zaxxer.hikari")) {
      Logger l = Logger.getLogger(name);
      l.setLevel(Level.WARNING);
      QUIET.add(l);
    }
  }

  /** Waits for a quiet machine when --quiet is set, and logs it. Returns a note for the tables. */
  static String quiet(Options o) throws InterruptedException {
    String note = Noise.awaitQuiet(o.quietSeconds, o.quietBusy);
    if (!note.isEmpty()) {
      log("%s", note);
    }
    return note;
  }

  static void log(String format, Object... args) {
    System.out.println(
        LocalDateTime.now(ZoneOffset.UTC).toLocalTime().withNano(0) + " " + Stats.f(format, args));
  }

  /**
   * Waits until this instance leads the sequencer, so producers take the in-process wake-up path.
   */
  static void awaitLeader(Boxline boxline) throws InterruptedException {
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (!boxline.stats().sequencerLeader()) {
      if (System.nanoTime() > deadline) {
        throw new BenchFailure("Boxline did not become sequencer leader within 15 s");
      }
      Thread.sleep(5);
    }
  }
}
