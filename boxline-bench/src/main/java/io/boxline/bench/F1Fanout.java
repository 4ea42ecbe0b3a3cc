package io.boxline.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.chaos.PostgresPair;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Recorder;

/**
 * F1: fan-out. One topic, N subscriptions (1, 5, 10, 20), each with a consumer, while a producer
 * publishes at a fixed rate; the consumers read the log from a hot standby ({@code readReplicas})
 * or, for comparison, from the primary. Runs on a PostgreSQL primary and streaming replica of its
 * own (pg_basebackup, asynchronous), so that each server's CPU can be read from /proc: the
 * postmaster's own and its exited children's time plus every live backend's.
 *
 * <p>The producer is one Boxline instance (the sequencer); the consumers are another, without a
 * sequencer, so every batch they handle is a read of the log, not the sequencer's in-memory
 * hand-over. Per trial: each subscription's delivered events/s over the window, the
 * publish-to-handler latency, and the primary's and the replica's CPU per 1,000 produced events.
 */
final class F1Fanout {
  record Trial(
      String reads,
      int subscriptions,
      double producedPerSecond,
      double slowestSubscriptionPerSecond,
      double p50Millis,
      double p99Millis,
      double primaryCpuMsPer1000,
      double replicaCpuMsPer1000,
      long replicaReads,
      long primaryFallbacks,
      double commitCallsPer1000,
      double walBytesPerEvent,
      double primaryTransactionsPer1000,
      double walSyncsPer1000) {}

  private static final Workload.Definition DEF = Workload.define("f1", Bench.Suite.W);

  static final Opt<int[]> SUBSCRIPTIONS =
      DEF.ints("subscriptions", "1,5,10,20", "subscriptions on the topic, one trial per count");
  static final Opt<List<String>> READS =
      DEF.words(
          "reads",
          "replica,primary",
          "where the consumers read the log: replica (readReplicas) or primary",
          List.of("replica", "primary"));
  static final Opt<Integer> RATE = DEF.integer("rate", 2_000, "produced events/s");
  static final Opt<Integer> TXN = DEF.integer("txn", 10, "events per producer transaction");
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 20, "measured seconds per trial");
  static final Opt<Integer> WARMUP = DEF.integer("warmup", 5, "seconds produced before measuring");

  static final Workload WORKLOAD =
      DEF.runs(
          "fan-out: N subscriptions reading one topic from a hot standby or the primary (on a"
              + " primary and replica of its own; --url is not used)",
          run -> report(run.o(), new F1Fanout(run.o()).run()));

  private static final TopicName TOPIC = TopicName.of("bench", "fanout");

  private final Options o;

  F1Fanout(Options o) {
    this.o = o;
  }

  List<Trial> run() throws Exception {
    List<Trial> out = new ArrayList<>();
    Bench.log("F1: starting a PostgreSQL primary and hot standby of its own");
    try (PostgresPair pair = PostgresPair.start(false);
        HikariDataSource primary = pool(pair.primaryUrl(), "f1-primary");
        HikariDataSource replica = pool(pair.standbyUrl(), "f1-replica")) {
      int n = 0;
      for (int subs : o.get(SUBSCRIPTIONS)) {
        for (String reads : o.get(READS)) {
          Trial t = trial(pair, primary, replica, "f1_" + (++n), subs, reads);
          out.add(t);
          Bench.log(
              "F1 %s, %d subscription(s): %.0f ev/s produced, slowest subscription %.0f ev/s,"
                  + " p50/p99 %.1f/%.1f ms, primary %.1f and replica %.1f CPU ms per 1,000"
                  + " events (%d replica reads, %d primary fallbacks, %.0f cursor commit calls per"
                  + " 1,000 events)",
              reads,
              subs,
              t.producedPerSecond(),
              t.slowestSubscriptionPerSecond(),
              t.p50Millis(),
              t.p99Millis(),
              t.primaryCpuMsPer1000(),
              t.replicaCpuMsPer1000(),
              t.replicaReads(),
              t.primaryFallbacks(),
              t.commitCallsPer1000());
        }
      }
    }
    return out;
  }

  private Trial trial(
      PostgresPair pair,
      HikariDataSource primary,
      HikariDataSource replica,
      String schema,
      int subs,
      String reads)
      throws Exception {
    int rate = o.get(RATE);
    int txn = o.get(TXN);
    try (Boxline producer =
        Boxline.builder()
            .store(JdbcStore.builder(primary).schema(schema).build())
            .instanceId("f1-producer")
            .build()
            .start()) {
      producer.admin().createNamespace(NamespacePath.of("bench"));
      producer.admin().createTopic(TOPIC, o.get(Bench.PARTITIONS));
      for (int i = 0; i < subs; i++) {
        producer.admin().createSubscription(SubscriptionSpec.of("fan-" + i, TOPIC));
      }
      Bench.awaitLeader(producer);
      awaitReplicaHas(replica, schema, subs);
      // The consumers' own pool on the primary, counted statement by statement (as W3 counts).
      Probe probe = new Probe(schema);
      org.postgresql.ds.PGSimpleDataSource direct = new org.postgresql.ds.PGSimpleDataSource();
      direct.setURL(pair.primaryUrl());
      direct.setUser("postgres");
      HikariConfig counted = new HikariConfig();
      counted.setDataSource(probe.wrap(direct));
      counted.setMaximumPoolSize(48);
      counted.setPoolName("f1-consumers-primary");
      AtomicLongArray counts = new AtomicLongArray(subs);
      AtomicLongArray lastAt = new AtomicLongArray(subs);
      Recorder latency = new Recorder(3);
      AtomicLong measuring = new AtomicLong(Long.MAX_VALUE);
      try (HikariDataSource consumersPrimary = new HikariDataSource(counted);
          Boxline consumers =
              Boxline.builder()
                  .store(
                      JdbcStore.builder(consumersPrimary)
                          .schema(schema)
                          .readReplicas(reads.equals("replica") ? List.of(replica) : List.of())
                          .build())
                  .instanceId("f1-consumers")
                  .sequencer(false)
                  .build()
                  .start()) {
        List<Consumer> started = new ArrayList<>();
        for (int i = 0; i < subs; i++) {
          int sub = i;
          started.add(
              consumers
                  .consumer("fan-" + i)
                  .handler(
                      e -> {
                        long now = System.nanoTime();
                        counts.incrementAndGet(sub);
                        lastAt.set(sub, now);
                        long sent = Long.parseLong(e.key().substring(e.key().indexOf('@') + 1));
                        if (sent >= measuring.get()) {
                          latency.recordValue(Math.max(0, (now - sent) / 1_000));
                        }
                      })
                  .start());
        }
        // Warm-up, then the measured window: events carry their send time in the key's tail.
        long warmEvents = (long) o.get(WARMUP) * rate;
        long windowEvents = (long) o.get(SECONDS) * rate;
        produce(producer, warmEvents, rate, txn);
        awaitAll(counts, warmEvents, Duration.ofSeconds(120));
        latency.reset();
        long[] before = new long[subs];
        for (int i = 0; i < subs; i++) {
          before[i] = counts.get(i);
        }
        long calls0 = consumers.stats().cursorCommitCalls();
        probe.reset();
        long[] wal0 = walAndCommits(primary);
        long cpuPrimary0 = Cpu.treeTicks(pair.primaryPid());
        long cpuReplica0 = Cpu.treeTicks(pair.standbyPid());
        long t0 = System.nanoTime();
        measuring.set(t0);
        produce(producer, windowEvents, rate, txn);
        long produced = System.nanoTime();
        awaitAll(counts, warmEvents + windowEvents, Duration.ofSeconds(300));
        long cpuPrimary = Cpu.treeTicks(pair.primaryPid()) - cpuPrimary0;
        long cpuReplica = Cpu.treeTicks(pair.standbyPid()) - cpuReplica0;
        long[] wal1 = walAndCommits(primary);
        double slowest = Double.MAX_VALUE;
        for (int i = 0; i < subs; i++) {
          double seconds = (lastAt.get(i) - t0) / 1e9;
          slowest = Math.min(slowest, (counts.get(i) - before[i]) / seconds);
        }
        var h = latency.getIntervalHistogram();
        StringBuilder top = new StringBuilder();
        probe.snapshot().entrySet().stream()
            .sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed())
            .limit(6)
            .forEach(
                e ->
                    top.append(
                        String.format(
                            "%n    %7.1f per 1,000 events  %s",
                            e.getValue() * 1000.0 / windowEvents, e.getKey())));
        Bench.log(
            "F1 %s, %d subscription(s), the consumers' statements on the primary:%s",
            reads, subs, top);
        var stats = consumers.stats();
        started.forEach(Consumer::close);
        return new Trial(
            reads,
            subs,
            windowEvents / ((produced - t0) / 1e9),
            slowest,
            h.getValueAtPercentile(50) / 1000.0,
            h.getValueAtPercentile(99) / 1000.0,
            Cpu.millis(cpuPrimary) * 1000.0 / windowEvents,
            Cpu.millis(cpuReplica) * 1000.0 / windowEvents,
            stats.replicaReads(),
            stats.primaryFallbacks(),
            (stats.cursorCommitCalls() - calls0) * 1000.0 / windowEvents,
            (double) (wal1[0] - wal0[0]) / windowEvents,
            (wal1[1] - wal0[1] - 1) * 1000.0 / windowEvents,
            (wal1[2] - wal0[2]) * 1000.0 / windowEvents);
      }
    }
  }

  /**
   * The primary's WAL position in bytes, its committed transactions so far (pg_stat_database of
   * every database, each auto-commit statement counting as one; the read itself is one) and its WAL
   * flushes to disk (pg_stat_wal.wal_sync: the writes that wait for the disk, what IOPS pay for).
   */
  private static long[] walAndCommits(HikariDataSource primary) throws java.sql.SQLException {
    try (var c = primary.getConnection();
        var st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn,"
                    + " (SELECT sum(xact_commit) FROM pg_stat_database),"
                    + " (SELECT wal_sync FROM pg_stat_wal)")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
    }
  }

  /** {@code total} events at {@code rate}/s in transactions of {@code txn}, 64 keys. */
  private static void produce(Boxline producer, long total, int rate, int txn) {
    long start = System.nanoTime();
    long txns = total / txn;
    for (long t = 0; t < txns; t++) {
      long due = start + (long) (t * txn * 1e9 / rate);
      for (long wait; (wait = due - System.nanoTime()) > 0; ) {
        LockSupport.parkNanos(wait);
      }
      long sent = System.nanoTime();
      List<OutgoingEvent> batch = new ArrayList<>(txn);
      for (int i = 0; i < txn; i++) {
        batch.add(
            OutgoingEvent.builder(TOPIC)
                .type("bench")
                .key("k" + ((t * txn + i) % 64) + "@" + sent)
                .payload(Payloads.payload(t * txn + i))
                .build());
      }
      producer.inTransaction(tx -> producer.publisher().publishAll(tx, batch));
    }
  }

  private static void awaitAll(AtomicLongArray counts, long each, Duration max)
      throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    for (int i = 0; i < counts.length(); i++) {
      while (counts.get(i) < each) {
        if (System.nanoTime() > deadline) {
          throw new BenchFailure(
              "F1: subscription " + i + " got " + counts.get(i) + " of " + each + " in " + max);
        }
        Thread.sleep(5);
      }
    }
  }

  /** Until the replica shows the schema and its subscriptions (it replays the migration). */
  private static void awaitReplicaHas(HikariDataSource replica, String schema, int subs)
      throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      try (var c = replica.getConnection();
          var st = c.createStatement();
          var rs = st.executeQuery("SELECT count(*) FROM " + schema + ".subscription")) {
        if (rs.next() && rs.getInt(1) == subs) {
          return;
        }
      } catch (java.sql.SQLException e) {
        // not replayed yet
      }
      Thread.sleep(20);
    }
    throw new BenchFailure("F1: the replica did not show schema " + schema + " within 60 s");
  }

  private static HikariDataSource pool(String url, String name) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    cfg.setUsername("postgres");
    cfg.setMaximumPoolSize(48);
    cfg.setConnectionTimeout(5_000);
    cfg.setPoolName(name);
    return new HikariDataSource(cfg);
  }

  static String report(Options o, List<Trial> trials) {
    Table t =
        new Table(
            "reads from",
            "subscriptions",
            "produced ev/s",
            "slowest subscription ev/s",
            "vs 1 subscription",
            "p50 / p99 ms",
            "primary CPU ms / 1,000 ev",
            "vs 1 subscription",
            "replica CPU ms / 1,000 ev",
            "replica reads / fallbacks",
            "cursor commit calls / 1,000 ev",
            "primary WAL bytes / ev",
            "primary transactions / 1,000 ev",
            "primary WAL flushes / 1,000 ev");
    for (Trial r : trials) {
      Trial one =
          trials.stream()
              .filter(x -> x.reads().equals(r.reads()) && x.subscriptions() == 1)
              .findFirst()
              .orElse(r);
      t.row(
          r.reads(),
          r.subscriptions(),
          String.format("%,.0f", r.producedPerSecond()),
          String.format("%,.0f", r.slowestSubscriptionPerSecond()),
          String.format(
              "%.2f×", r.slowestSubscriptionPerSecond() / one.slowestSubscriptionPerSecond()),
          String.format("%.1f / %.1f", r.p50Millis(), r.p99Millis()),
          String.format("%.1f", r.primaryCpuMsPer1000()),
          String.format("%.2f×", r.primaryCpuMsPer1000() / one.primaryCpuMsPer1000()),
          String.format("%.1f", r.replicaCpuMsPer1000()),
          r.replicaReads() + " / " + r.primaryFallbacks(),
          String.format("%.0f", r.commitCallsPer1000()),
          String.format("%,.0f", r.walBytesPerEvent()),
          String.format("%.0f", r.primaryTransactionsPer1000()),
          String.format("%.0f", r.walSyncsPer1000()));
    }
    return "## F1 — fan-out\n\n"
        + String.format(
            "%d partitions, %,d events/s in transactions of %d for %d s after %d s of warm-up;"
                + " consumers in another Boxline instance than the sequencer.%n%n",
            o.get(Bench.PARTITIONS), o.get(RATE), o.get(TXN), o.get(SECONDS), o.get(WARMUP))
        + t;
  }

  /** CPU time of a process tree from /proc: ticks of 1/100 s. */
  static final class Cpu {
    private Cpu() {}

    /**
     * The process's own and its waited-for children's time (exited backends), plus each live
     * child's own.
     */
    static long treeTicks(long pid) throws IOException {
      long ticks = ticks(pid, true);
      for (ProcessHandle child :
          ProcessHandle.of(pid).map(p -> p.children().toList()).orElse(List.of())) {
        try {
          ticks += ticks(child.pid(), false);
        } catch (IOException gone) {
          // exited meanwhile: counted in the parent's children's time once waited for
        }
      }
      return ticks;
    }

    private static long ticks(long pid, boolean withChildren) throws IOException {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // After the command: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
      long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      if (withChildren) {
        t += Long.parseLong(f[13]) + Long.parseLong(f[14]);
      }
      return t;
    }

    static double millis(long ticks) {
      return ticks * 10.0;
    }
  }
}
