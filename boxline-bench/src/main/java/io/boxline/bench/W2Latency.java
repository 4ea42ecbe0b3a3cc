package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * W2: latency from "the producer's commit returned" to "the handler was entered", one event per
 * transaction, paced open-loop.
 *
 * <ul>
 *   <li>same JVM: producer threads call {@code boxline.inTransaction(tx -> publish(...))}; the
 *       commit-return time is System.nanoTime() the moment the connection's commit() returned
 *       ({@link CommitClock}), the handler reads System.nanoTime() first thing; both are joined by
 *       event index (carried in the event id).
 *   <li>other JVM: {@link RemoteProducer} in a child process; both sides read the wall clock
 *       (Instant.now(), CLOCK_REALTIME, nanosecond field) on the same machine.
 * </ul>
 */
final class W2Latency extends Trials {
  static final int KEYS = 1024;

  record Result(
      String where,
      int rate,
      int measured,
      double achievedRate,
      long[] latency,
      long[] commit,
      long[] late,
      String noise) {}

  private static final Workload.Definition DEF = Workload.define("w2", Bench.Suite.W);

  static final Opt<int[]> RATES = DEF.ints("rates", "200,1000", "events/s (a list)");
  static final Opt<List<String>> WHERE =
      DEF.words(
          "where",
          "same-jvm,other-jvm",
          "where the producer runs: same-jvm, other-jvm and/or sql (the SQL publish() function in"
              + " another process)",
          List.of("same-jvm", "other-jvm", "sql"));
  static final Opt<Double> WARMUP = DEF.decimal("warmup", 15, "warm-up seconds");
  static final Opt<Integer> WARMUP_RATE =
      DEF.integer("warmup-rate", 1000, "warm-up events/s (at least the rate)");
  static final Opt<Double> SECONDS = DEF.decimal("seconds", 10, "measured seconds");
  static final Opt<Integer> THREADS = DEF.integer("threads", 8, "sender threads");
  static final Opt<Integer> CONCURRENCY = DEF.integer("concurrency", 8, "consumer concurrency");
  static final Opt<Boolean> ON_COMMITTING_THREAD =
      DEF.option(
          "handler-thread",
          "worker",
          "worker or committing: the same-JVM consumer's handleOnCommittingThread",
          v ->
              switch (v) {
                case "worker" -> false;
                case "committing" -> true;
                default ->
                    throw new IllegalArgumentException(
                        "--w2.handler-thread must be worker or committing, got " + v);
              });

  static final Workload WORKLOAD =
      DEF.runs(
          "latency from the producer's commit to the handler, one event per transaction, paced",
          run ->
              onPool(run, "bench-w2", pool -> Report.w2(run.o(), new W2Latency(run, pool).run())));

  private final double warmupSeconds;
  private final double seconds;
  private final int threads;

  W2Latency(Run run, DataSource pool) {
    super(run, pool, "w2");
    this.warmupSeconds = o.get(WARMUP);
    this.seconds = o.get(SECONDS);
    this.threads = o.get(THREADS);
  }

  List<Result> run() throws Exception {
    List<Result> out = new ArrayList<>();
    for (String where : o.get(WHERE)) {
      for (int rate : o.get(RATES)) {
        Result r = trial(where.equals("same-jvm"), where.equals("sql"), rate);
        out.add(r);
        Bench.log(
            "W2 %s %d/s: p50 %s ms, p90 %s ms, p99 %s ms, max %s ms (%d events, %.0f/s achieved)",
            where,
            rate,
            Stats.ms(Stats.percentile(r.latency(), 50)),
            Stats.ms(Stats.percentile(r.latency(), 90)),
            Stats.ms(Stats.percentile(r.latency(), 99)),
            Stats.ms(Stats.percentile(r.latency(), 100)),
            r.measured(),
            r.achievedRate());
      }
    }
    return out;
  }

  private Result trial(boolean sameJvm, boolean sql, int rate) throws Exception {
    String schema = nextSchema();
    TopicName topic = TopicName.of("bench", "events");
    double warmRate = warmRate(rate);
    int warm = (int) (warmRate * warmupSeconds);
    int measured = (int) (rate * seconds);
    int total = warm + measured;
    String what = "W2 " + (sameJvm ? "same-jvm" : sql ? "sql" : "other-jvm") + " " + rate + "/s";
    DeliveryCheck check =
        new DeliveryCheck(
            total,
            partitions,
            0,
            sameJvm ? DeliveryCheck.Clock.NANO_TIME : DeliveryCheck.Clock.EPOCH_NANOS);
    DataSource ds = pool;
    CommitClock clock = sameJvm ? new CommitClock() : null;
    if (clock != null) {
      ds = clock.wrap(ds);
    }
    Boxline boxline =
        start(Boxline.builder().store(JdbcStore.builder(ds).schema(schema).build()), topic);
    try {
      Consumer consumer =
          consumer(boxline, check, o.get(CONCURRENCY))
              .handleOnCommittingThread(o.get(ON_COMMITTING_THREAD))
              .batchSize(100)
              .start();
      CommitTimes times = new CommitTimes(total);
      Noise machine = watch(true);
      long firstDue;
      long lastDone;
      if (sameJvm) {
        Pacer.Send publish =
            times.publishing(
                boxline,
                i -> Payloads.event(topic, i, Payloads.randomKey(i, KEYS)),
                clock::lastCommitNanos);
        firstDue = pace(total, warm, warmRate, rate, publish);
        lastDone = System.nanoTime();
      } else {
        Path file = Files.createTempFile("boxline-w2-", ".bin");
        try {
          long started = System.nanoTime();
          runChild(schema, rate, total, warm, warmRate, file, sql);
          lastDone = System.nanoTime();
          firstDue = started; // only used for the achieved rate below, corrected from the file
          try (DataInputStream in =
              new DataInputStream(new BufferedInputStream(new FileInputStream(file.toFile())))) {
            int n = in.readInt();
            if (n != total) {
              throw new BenchFailure(what + ": remote producer wrote " + n + " of " + total);
            }
            for (int i = 0; i < total; i++) {
              times.committed[i] = in.readLong();
              times.took[i] = in.readLong();
              times.late[i] = in.readLong();
            }
          }
        } finally {
          Files.deleteIfExists(file);
        }
      }
      check.await(60, what);
      String load = machine.since();
      Thread.sleep(500);
      check.verify(what, consumer.handledCount());
      consumer.close();
      long[] arrival = check.arrival();
      long[] committed = times.committed;
      double achieved;
      if (sameJvm) {
        achieved = measured / ((lastDone - firstDue) / 1e9);
      } else {
        achieved = measured / ((committed[total - 1] - committed[warm]) / 1e9);
      }
      return new Result(
          sameJvm ? "same JVM" : sql ? "SQL publish(), other process" : "other JVM",
          rate,
          measured,
          achieved,
          Stats.sorted(warm, total, i -> arrival[i] - committed[i]),
          times.commitDurations(warm, total),
          times.sendLags(warm, total),
          load);
    } finally {
      boxline.close();
      db.dropSchema(schema);
    }
  }

  /** Sends {@code warm} events at {@code warmRate}/s, then the rest at {@code rate}/s. */
  private long pace(int total, int warm, double warmRate, int rate, Pacer.Send send)
      throws Exception {
    return Pacer.run(total, warm, warmRate, rate, threads, send);
  }

  /** The warm-up runs at max(rate, --w2.warmup-rate), so the JIT compiles the hot paths. */
  private double warmRate(int rate) {
    return Math.max(rate, o.get(WARMUP_RATE));
  }

  private void runChild(
      String schema, int rate, int total, int warm, double warmRate, Path out, boolean sql)
      throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-cp");
    cmd.add(classPath());
    cmd.add(RemoteProducer.class.getName());
    cmd.add("--url=" + db.url);
    cmd.add("--user=" + db.user);
    cmd.add("--password=" + db.password);
    cmd.add("--schema=" + schema);
    cmd.add("--rate=" + rate);
    cmd.add("--total=" + total);
    cmd.add("--threads=" + threads);
    cmd.add("--keys=" + KEYS);
    cmd.add("--out=" + out);
    cmd.add("--warm=" + warm);
    cmd.add("--warm-rate=" + warmRate);
    cmd.add("--via=" + (sql ? "sql" : "java"));
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    long limit = (long) (warm / warmRate + (total - warm) / (double) rate) + 60;
    if (!p.waitFor(limit, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new BenchFailure("remote producer did not finish within " + limit + " s");
    }
    if (p.exitValue() != 0) {
      throw new BenchFailure("remote producer exited with " + p.exitValue());
    }
  }

  /** The class path of this program (exec:java runs it in a URLClassLoader of its own). */
  static String classPath() {
    ClassLoader cl = W2Latency.class.getClassLoader();
    if (cl instanceof URLClassLoader) {
      List<String> parts = new ArrayList<>();
      for (URL u : ((URLClassLoader) cl).getURLs()) {
        try {
          parts.add(new File(u.toURI()).getPath());
        } catch (Exception e) {
          parts.add(u.getPath());
        }
      }
      return String.join(File.pathSeparator, parts);
    }
    return System.getProperty("java.class.path");
  }
}
