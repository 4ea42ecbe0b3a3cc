package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.RetentionPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * F2, bloat (issue 4): a steady load with a 30-s topic retention and a 5-s retention interval for a
 * few minutes; table sizes, live/dead tuples and autovacuum runs sampled every 15 s. Runs in a
 * database of its own ({@link BenchDb}).
 */
final class F2Bloat {
  private F2Bloat() {}

  private static final Workload.Definition DEF = Workload.define("f2", Bench.Suite.FAILURES);

  static final Opt<int[]> VACUUM =
      DEF.ints(
          "vacuum",
          "0,60",
          "a run per value: VACUUM every n s, 0 = leave it to the server (a list)");
  static final Opt<Integer> RATE = DEF.integer("rate", 1000, "events/s");
  static final Opt<Integer> TXN = DEF.txn(10);
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 120, "s of load");
  static final Opt<Integer> TAIL = DEF.integer("tail", 35, "s after the load");
  static final Opt<Integer> SAMPLE = DEF.integer("sample", 15, "s between samples");
  static final Opt<Integer> PARTITIONS = DEF.partitions(8);
  static final Opt<Integer> RETENTION = DEF.integer("retention", 30, "topic retention, s");
  static final Opt<Integer> INTERVAL = DEF.integer("interval", 5, "retention interval, s");
  static final Opt<Integer> POOL = DEF.pool(16);
  static final Opt<Integer> CONCURRENCY = DEF.concurrency(8);
  static final Opt<Integer> PRODUCERS = DEF.producers(4);

  static final Workload WORKLOAD =
      DEF.runs(
          "bloat under retention: a steady load for minutes, table sizes sampled", F2Bloat::run);

  record Sample(
      double t,
      long published,
      long handled,
      long logRows,
      Map<String, long[]> tables,
      long retentionRuns,
      long retentionDeleted,
      String load) {}

  /** Per table: n_live_tup, n_dead_tup, total bytes, autovacuum_count, n_tup_del, index bytes. */
  static Map<String, long[]> tableStats(Connection c) throws Exception {
    Map<String, long[]> out = new LinkedHashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT relname, n_live_tup, n_dead_tup, pg_total_relation_size(relid),"
                + " autovacuum_count, n_tup_del, pg_indexes_size(relid) FROM pg_stat_user_tables"
                + " WHERE schemaname = ?")) {
      ps.setString(1, GfKit.SCHEMA);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(
              rs.getString(1),
              new long[] {
                rs.getLong(2),
                rs.getLong(3),
                rs.getLong(4),
                rs.getLong(5),
                rs.getLong(6),
                rs.getLong(7)
              });
        }
      }
    }
    return out;
  }

  static String run(Run run) throws Exception {
    Options o = run.o();
    StringBuilder sb = new StringBuilder();
    String autovacuum = run.db().queryString("SHOW autovacuum");
    for (int vacuumEvery : o.get(VACUUM)) {
      sb.append(variant(run, vacuumEvery, autovacuum)).append('\n');
    }
    return sb.toString();
  }

  static String variant(Run run, int vacuumEvery, String autovacuum) throws Exception {
    Options o = run.o();
    int rate = o.get(RATE);
    int perTxn = o.get(TXN);
    int seconds = o.get(SECONDS);
    int tail = o.get(TAIL);
    int every = o.get(SAMPLE);
    int partitions = o.get(PARTITIONS);
    Duration retention = Duration.ofSeconds(o.get(RETENTION));
    Duration interval = Duration.ofSeconds(o.get(INTERVAL));
    int total = rate * seconds;
    int txns = total / perTxn;
    AtomicIntegerArray seen = new AtomicIntegerArray(total);
    AtomicLong handled = new AtomicLong();
    AtomicLong published = new AtomicLong();
    AtomicReference<String> error = new AtomicReference<>();
    List<Sample> samples = new ArrayList<>();
    TopicName topic = TopicName.of("bench", "f2");
    long maxLate;
    long logAtEnd;
    long outboxAtEnd;
    AtomicLong vacuums = new AtomicLong();
    AtomicLong vacuumNanos = new AtomicLong();
    AtomicLong vacuumMaxNanos = new AtomicLong();
    try (BenchDb db = BenchDb.create(run, "f2");
        Connection monitor = db.connect();
        Connection vacuumer = db.connect()) {
      HikariDataSource pool = db.pool("f2", o.get(POOL), null);
      Boxline boxline =
          GfKit.start(
              GfKit.builder(pool, "f2-main").retentionInterval(interval), topic, partitions);
      try {
        boxline.admin().setRetention(topic, RetentionPolicy.byAge(retention));
        boxline.admin().createSubscription(SubscriptionSpec.of("f2", topic));
        Consumer consumer =
            boxline
                .consumer("f2")
                .id("f2-c")
                .concurrency(o.get(CONCURRENCY))
                .handler(
                    (Event e) -> {
                      long idx = GfKit.index(e.id());
                      if (idx < 0 || idx >= total) {
                        error.compareAndSet(null, "unknown event " + e);
                        return;
                      }
                      if (seen.getAndIncrement((int) idx) != 0) {
                        error.compareAndSet(null, "event " + idx + " delivered twice");
                      }
                      handled.incrementAndGet();
                    })
                .start();
        Thread.sleep(1000);
        log(
            "F2 %d events/s (%d per transaction) for %d s, retention %s, retention interval %s,"
                + " sampling every %d s",
            rate, perTxn, seconds, retention, interval, every);
        long start = System.nanoTime() + 100_000_000L;
        AtomicLong next = new AtomicLong();
        AtomicLong late = new AtomicLong();
        Workers producers =
            new Workers()
                .start(
                    o.get(PRODUCERS),
                    t -> {
                      for (long j; (j = next.getAndIncrement()) < txns; ) {
                        long due = start + (long) (j * 1e9 * perTxn / rate);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        } else {
                          late.accumulateAndGet(-wait, Math::max);
                        }
                        List<OutgoingEvent> batch = new ArrayList<>(perTxn);
                        for (int k = 0; k < perTxn; k++) {
                          long i = j * perTxn + k;
                          batch.add(GfKit.event(topic, i, "key-" + (i % 1000)));
                        }
                        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
                        published.addAndGet(perTxn);
                      }
                    });
        long stop = start + (long) (seconds + tail) * 1_000_000_000L;
        // Stand-in for autovacuum when the server has it off: a plain VACUUM (ANALYZE) of every
        // Boxline table every vacuumEvery seconds, on a connection of its own.
        Thread vacuum = null;
        if (vacuumEvery > 0) {
          StringBuilder tables = new StringBuilder();
          for (String t : GfKit.TABLES) {
            tables
                .append(tables.length() == 0 ? "" : ", ")
                .append(GfKit.SCHEMA)
                .append('.')
                .append(t);
          }
          String sql = "VACUUM (ANALYZE) " + tables;
          vacuum =
              new Thread(
                  () -> {
                    try (var st = vacuumer.createStatement()) {
                      for (long due = start + vacuumEvery * 1_000_000_000L;
                          due < stop;
                          due += vacuumEvery * 1_000_000_000L) {
                        Thread.sleep(Math.max(0, (due - System.nanoTime()) / 1_000_000));
                        long v0 = System.nanoTime();
                        st.execute(sql);
                        long d = System.nanoTime() - v0;
                        vacuums.incrementAndGet();
                        vacuumNanos.addAndGet(d);
                        vacuumMaxNanos.accumulateAndGet(d, Math::max);
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    } catch (Exception e) {
                      producers.fail(e);
                    }
                  },
                  "bench-vacuum");
          vacuum.setDaemon(true);
          vacuum.start();
        }
        for (long s = start; s <= stop; s += every * 1_000_000_000L) {
          Thread.sleep(Math.max(0, (s - System.nanoTime()) / 1_000_000));
          long logRows = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".log");
          Sample smp =
              new Sample(
                  (System.nanoTime() - start) / 1e9,
                  published.get(),
                  handled.get(),
                  logRows,
                  tableStats(monitor),
                  boxline.stats().retentionRuns(),
                  boxline.stats().retentionDeleted(),
                  Noise.loadAverages());
          samples.add(smp);
          long[] lg = smp.tables().get("log");
          log(
              "F2 t=%3.0f s: published %d, handled %d, log rows %d (live %d, dead %d, %d kB,"
                  + " autovacuums %d), retention deleted %d; load %s",
              smp.t(),
              smp.published(),
              smp.handled(),
              logRows,
              lg[0],
              lg[1],
              lg[2] / 1024,
              lg[3],
              smp.retentionDeleted(),
              smp.load());
          check(!producers.failed(), "F2 producer failed: " + producers.failure());
          check(error.get() == null, "F2: " + error.get());
        }
        producers.await();
        if (vacuum != null) {
          vacuum.join();
        }
        maxLate = late.get();
        check(!producers.failed(), "F2 producer failed: " + producers.failure());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (handled.get() < total) {
          check(
              System.nanoTime() < deadline,
              "F2: " + handled.get() + " of " + total + " events handled");
          Thread.sleep(50);
        }
        Thread.sleep(500);
        check(error.get() == null, "F2: " + error.get());
        for (int i = 0; i < total; i++) {
          check(seen.get(i) == 1, "F2: event " + i + " handled " + seen.get(i) + " times");
        }
        check(
            consumer.handledCount() == total,
            "F2: handledCount " + consumer.handledCount() + ", expected " + total);
        consumer.close();
        logAtEnd = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".log");
        outboxAtEnd = db.queryLong("SELECT count(*) FROM " + GfKit.SCHEMA + ".outbox");
        check(outboxAtEnd == 0, "F2: " + outboxAtEnd + " rows left in the outbox");
        // Bounded: the log never held much more than retention + interval (+ slack) of events.
        long bound = (long) rate * (retention.toSeconds() + interval.toSeconds() + 20);
        for (Sample smp : samples) {
          check(
              smp.logRows() <= bound,
              f("F2: log held %d rows at t=%.0f s, more than %d", smp.logRows(), smp.t(), bound));
        }
      } finally {
        boxline.close();
      }
    }
    return report(
        vacuumEvery,
        autovacuum,
        vacuums.get(),
        vacuumNanos.get(),
        vacuumMaxNanos.get(),
        samples,
        rate,
        perTxn,
        seconds,
        tail,
        retention,
        interval,
        partitions,
        total,
        maxLate,
        logAtEnd);
  }

  private static String report(
      int vacuumEvery,
      String autovacuum,
      long vacuums,
      long vacuumNanos,
      long vacuumMaxNanos,
      List<Sample> samples,
      int rate,
      int perTxn,
      int seconds,
      int tail,
      Duration retention,
      Duration interval,
      int partitions,
      int total,
      long maxLate,
      long logAtEnd) {
    StringBuilder sb =
        new StringBuilder(
            vacuumEvery == 0
                ? "## F2 — bloat under retention, server as configured (autovacuum = "
                    + autovacuum
                    + ")\n\n"
                : "## F2 — bloat under retention, with a VACUUM (ANALYZE) of the Boxline tables"
                    + " every "
                    + vacuumEvery
                    + " s (stand-in for autovacuum; server autovacuum = "
                    + autovacuum
                    + ")\n\n");
    if (vacuumEvery > 0) {
      sb.append(
          f(
              "The benchmark ran VACUUM (ANALYZE) on the ten Boxline tables %d times, %.0f ms on"
                  + " average, %.0f ms at most.%n%n",
              vacuums, vacuums == 0 ? 0 : vacuumNanos / 1e6 / vacuums, vacuumMaxNanos / 1e6));
    }
    sb.append(
        f(
            "Topic of %d partitions with RetentionPolicy.byAge(%ds), Boxline.builder()"
                + ".retentionInterval(%ds); %d events/s (%d per transaction, paced open-loop by 4"
                + " producer threads with boxline.inTransaction) for %d s = %,d events, then %d s"
                + " with no load; one consumer (concurrency 8) keeps up. Every %s s: exact row count"
                + " of the log, and n_live_tup / n_dead_tup / pg_total_relation_size /"
                + " autovacuum_count from pg_stat_user_tables (server settings untouched). Latest"
                + " producer transaction started %.0f ms late. Log rows left at the end: %d.%n%n",
            partitions,
            retention.toSeconds(),
            interval.toSeconds(),
            rate,
            perTxn,
            seconds,
            total,
            tail,
            samples.size() > 1 ? f("%.0f", samples.get(1).t() - samples.get(0).t()) : "?",
            maxLate / 1e6,
            logAtEnd));
    Table t =
        new Table(
            "t s",
            "published",
            "handled",
            "log rows",
            "log live / dead tuples",
            "log total kB (indexes)",
            "log autovacuums",
            "outbox live / dead",
            "outbox kB",
            "outbox autovacuums",
            "retention deleted",
            "load 1 min");
    for (Sample s : samples) {
      long[] lg = s.tables().getOrDefault("log", new long[6]);
      long[] ob = s.tables().getOrDefault("outbox", new long[6]);
      t.row(
          f("%.0f", s.t()),
          s.published(),
          s.handled(),
          s.logRows(),
          lg[0] + " / " + lg[1],
          lg[2] / 1024 + " (" + lg[5] / 1024 + ")",
          lg[3],
          ob[0] + " / " + ob[1],
          ob[2] / 1024,
          ob[3],
          s.retentionDeleted(),
          s.load().split(" ")[0]);
    }
    sb.append(t).append('\n');
    List<String> small = new ArrayList<>(GfKit.TABLES);
    small.remove("log");
    small.remove("outbox");
    String[] header = new String[small.size() + 1];
    header[0] = "t s";
    for (int i = 0; i < small.size(); i++) {
      header[i + 1] = small.get(i) + " kB (dead, autovac)";
    }
    Table u = new Table(header);
    for (Sample s : samples) {
      Object[] row = new Object[header.length];
      row[0] = f("%.0f", s.t());
      for (int i = 0; i < small.size(); i++) {
        long[] v = s.tables().getOrDefault(small.get(i), new long[6]);
        row[i + 1] = v[2] / 1024 + " (" + v[1] + ", " + v[3] + ")";
      }
      u.row(row);
    }
    sb.append("Smaller tables (total kB, dead tuples, autovacuum runs):\n\n")
        .append(u)
        .append('\n');
    // Plateau: compare the second half of the load with the first half.
    Sample mid = null;
    Sample endLoad = null;
    for (Sample s : samples) {
      if (s.t() <= seconds / 2.0 + 1) {
        mid = s;
      }
      if (s.t() <= seconds + 1) {
        endLoad = s;
      }
    }
    if (mid != null && endLoad != null) {
      long m = mid.tables().get("log")[2];
      long e = endLoad.tables().get("log")[2];
      long maxDead = 0;
      long maxRows = 0;
      for (Sample s : samples) {
        maxDead = Math.max(maxDead, s.tables().get("log")[1]);
        maxRows = Math.max(maxRows, s.logRows());
      }
      sb.append(
          f(
              "Log total size at t=%.0f s (half the load): %d kB; at t=%.0f s (end of the load):"
                  + " %d kB (×%.2f; linear growth would be ×2). Largest log row count %d (%.1f s"
                  + " of events), largest dead-tuple count %d. Plateau → %s.%n",
              mid.t(),
              m / 1024,
              endLoad.t(),
              e / 1024,
              (double) e / m,
              maxRows,
              maxRows / (double) rate,
              maxDead,
              e <= 1.5 * m ? "pass" : "FAIL"));
    }
    return sb.toString();
  }
}
