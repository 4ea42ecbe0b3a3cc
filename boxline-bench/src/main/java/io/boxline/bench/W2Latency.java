package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.bench.DeliveryCheck.BenchFailure;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
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
final class W2Latency {
  static final int KEYS = 1024;

  record Result(
      String where,
      int rate,
      int measured,
      double achievedRate,
      long[] latency,
      long[] commit,
      long[] late,
      String noise,
      Map<String, Probe.Series> trace,
      Stages.Split stages) {}

  private final Bench.Options o;
  private final Db db;
  private final DataSource pool;
  private final String runSchema;
  private int trialCounter;

  W2Latency(Bench.Options o, Db db, DataSource pool, String runSchema) {
    this.o = o;
    this.db = db;
    this.pool = pool;
    this.runSchema = runSchema;
  }

  List<Result> run() throws Exception {
    List<Result> out = new ArrayList<>();
    for (String where : o.w2Where) {
      for (int rate : o.w2Rates) {
        Result r =
            where.equals("floor")
                ? floor(rate)
                : trial(where.equals("same-jvm"), where.equals("sql"), rate);
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

  /**
   * The machine's floor for any design that hands an event to another thread after the commit: the
   * same paced transactions (a 200-byte row, synchronous commit, the same pool), and after each
   * commit a hand-off to a fixed pool of 8 threads (as a consumer's workers) that reads the time
   * first thing. No Boxline, no ordering.
   */
  private Result floor(int rate) throws Exception {
    String schema = runSchema + "_w2_" + (++trialCounter);
    db.exec(
        "CREATE SCHEMA " + schema,
        "CREATE TABLE " + schema + ".event (id bigint PRIMARY KEY, payload bytea NOT NULL)");
    double warmRate = Math.max(rate, o.w2WarmupRate);
    int warm = (int) (warmRate * o.w2WarmupSeconds);
    int measured = (int) (rate * o.w2Seconds);
    int total = warm + measured;
    long[] committed = new long[total];
    long[] took = new long[total];
    long[] late = new long[total];
    long[] arrival = new long[total];
    java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(total);
    java.util.concurrent.ExecutorService workers =
        java.util.concurrent.Executors.newFixedThreadPool(o.w2ConsumerConcurrency);
    String insert = "INSERT INTO " + schema + ".event (id, payload) VALUES (?, ?)";
    try {
      String waited = Bench.quiet(o);
      Noise noise = Noise.start();
      Pacer.run(
          total,
          warm,
          warmRate,
          rate,
          o.w2Threads,
          (i, lateNanos) -> {
            long t0 = System.nanoTime();
            try (java.sql.Connection c = pool.getConnection()) {
              c.setAutoCommit(false);
              try (java.sql.PreparedStatement ps = c.prepareStatement(insert)) {
                ps.setLong(1, i);
                ps.setBytes(2, Payloads.payload(i));
                ps.executeUpdate();
              }
              c.commit();
              long t1 = System.nanoTime();
              committed[i] = t1;
              took[i] = t1 - t0;
              late[i] = lateNanos;
              workers.execute(
                  () -> {
                    arrival[i] = System.nanoTime();
                    all.countDown();
                  });
            }
          });
      if (!all.await(60, TimeUnit.SECONDS)) {
        throw new BenchFailure("W2 floor: not every hand-off ran");
      }
      String load = W1Throughput.join(noise.since(), waited);
      long[] latency = new long[measured];
      long[] commit = new long[measured];
      long[] lateness = new long[measured];
      for (int i = warm; i < total; i++) {
        latency[i - warm] = arrival[i] - committed[i];
        commit[i - warm] = took[i];
        lateness[i - warm] = late[i];
      }
      if (o.w2Dump != null) {
        dump("W2 floor " + rate + "/s", committed, arrival, warm, total);
      }
      Arrays.sort(latency);
      Arrays.sort(commit);
      Arrays.sort(lateness);
      return new Result(
          "floor (commit, then a thread hand-off; no Boxline)",
          rate,
          measured,
          measured / ((committed[total - 1] - committed[warm]) / 1e9),
          latency,
          commit,
          lateness,
          load,
          null,
          null);
    } finally {
      workers.shutdownNow();
      db.dropSchema(schema);
    }
  }

  private Result trial(boolean sameJvm, boolean sql, int rate) throws Exception {
    String schema = runSchema + "_w2_" + (++trialCounter);
    TopicName topic = TopicName.of("bench", "events");
    double warmRate = Math.max(rate, o.w2WarmupRate);
    int warm = (int) (warmRate * o.w2WarmupSeconds);
    int measured = (int) (rate * o.w2Seconds);
    int total = warm + measured;
    String what = "W2 " + (sameJvm ? "same-jvm" : sql ? "sql" : "other-jvm") + " " + rate + "/s";
    DeliveryCheck check =
        new DeliveryCheck(
            total,
            o.partitions,
            0,
            sameJvm ? DeliveryCheck.Clock.NANO_TIME : DeliveryCheck.Clock.EPOCH_NANOS);
    Probe probe = o.w2Trace ? new Probe(schema) : null;
    DataSource ds = probe == null ? pool : probe.wrap(pool);
    CommitClock clock = sameJvm ? new CommitClock() : null;
    if (clock != null) {
      ds = clock.wrap(ds);
    }
    Stages stages = sameJvm ? new Stages(total + 10_000) : null;
    Boxline.Builder builder = Boxline.builder().store(JdbcStore.builder(ds).schema(schema).build());
    if (stages != null) {
      builder.observer(stages);
    }
    Boxline boxline = builder.build().start();
    try {
      boxline.admin().createNamespace(NamespacePath.of("bench"));
      boxline.admin().createTopic(topic, o.partitions, o.sequencing);
      boxline.admin().createSubscription(SubscriptionSpec.of("bench-sub", topic));
      Bench.awaitLeader(boxline);
      Consumer consumer =
          boxline
              .consumer("bench-sub")
              .handler(check)
              .concurrency(o.w2ConsumerConcurrency)
              .handleOnCommittingThread(o.w2OnCommittingThread)
              .batchSize(100)
              .start();
      long[] committed = new long[total];
      long[] took = new long[total];
      long[] late = new long[total];
      String waited = Bench.quiet(o);
      Noise noise = Noise.start();
      long firstDue;
      long lastDone;
      if (sameJvm) {
        var publisher = boxline.publisher();
        firstDue =
            Pacer.run(
                total,
                warm,
                warmRate,
                rate,
                o.w2Threads,
                (i, lateNanos) -> {
                  if (i == warm && probe != null) {
                    probe.reset();
                  }
                  OutgoingEvent e = event(topic, i);
                  long t0 = System.nanoTime();
                  boxline.inTransaction(tx -> publisher.publish(tx, e));
                  long t1 = clock.lastCommitNanos();
                  committed[i] = t1;
                  took[i] = t1 - t0;
                  late[i] = lateNanos;
                });
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
              committed[i] = in.readLong();
              took[i] = in.readLong();
              late[i] = in.readLong();
            }
          }
        } finally {
          Files.deleteIfExists(file);
        }
      }
      check.await(60, what);
      String load = W1Throughput.join(noise.since(), waited);
      Thread.sleep(500);
      check.verify(what, consumer.handledCount());
      consumer.close();
      Map<String, Probe.Series> trace = probe == null ? null : probe.snapshot();
      long[] arrival = check.arrival();
      if (o.w2Dump != null) {
        dump(what, committed, arrival, warm, total);
      }
      long[] latency = new long[measured];
      long[] commit = new long[measured];
      long[] lateness = new long[measured];
      for (int i = warm; i < total; i++) {
        latency[i - warm] = arrival[i] - committed[i];
        commit[i - warm] = took[i];
        lateness[i - warm] = late[i];
      }
      Arrays.sort(latency);
      Arrays.sort(commit);
      Arrays.sort(lateness);
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
          latency,
          commit,
          lateness,
          load,
          trace,
          stages == null ? null : stages.split(committed, arrival, warm, total));
    } finally {
      boxline.close();
      db.dropSchema(schema);
    }
  }

  /** Per event of the measured part: index, commit time (ms after the first), latency (µs). */
  private void dump(String what, long[] committed, long[] arrival, int from, int to)
      throws java.io.IOException {
    Path dir = Path.of(o.w2Dump);
    Files.createDirectories(dir);
    StringBuilder sb = new StringBuilder("event,commit_ms,latency_us\n");
    for (int i = from; i < to; i++) {
      sb.append(i - from)
          .append(',')
          .append(Stats.f("%.3f", (committed[i] - committed[from]) / 1e6))
          .append(',')
          .append(Stats.f("%.1f", (arrival[i] - committed[i]) / 1e3))
          .append('\n');
    }
    Files.writeString(dir.resolve(what.replace(' ', '-').replace('/', '_') + ".csv"), sb);
  }

  private static OutgoingEvent event(TopicName topic, int i) {
    return OutgoingEvent.builder(topic)
        .id(Payloads.id(i))
        .type("order.placed")
        .key("customer-" + new SplittableRandom(i).nextInt(KEYS))
        .contentType("application/json")
        .payload(Payloads.payload(i))
        .build();
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
    cmd.add(db.url);
    cmd.add(db.user);
    cmd.add(db.password.isEmpty() ? "-" : db.password);
    cmd.add(schema);
    cmd.add(Integer.toString(rate));
    cmd.add(Integer.toString(total));
    cmd.add(Integer.toString(o.w2Threads));
    cmd.add(Integer.toString(KEYS));
    cmd.add(out.toString());
    cmd.add(Long.toString(o.w2RemoteNotifyMillis));
    cmd.add(Integer.toString(warm));
    cmd.add(Double.toString(warmRate));
    cmd.add(sql ? "sql" : "java");
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
