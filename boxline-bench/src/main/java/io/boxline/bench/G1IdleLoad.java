package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.GroupPolicy;
import io.boxline.SubscriptionSpec;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * G1, idle coordination load (issue 3): N consumers of one subscription (one Boxline instance),
 * nothing published, default group policy; statements/s counted on the client (a counting proxy
 * under the pool) and transactions/s on the server (pg_stat_database of the workload's own
 * database). Runs in a database of its own ({@link BenchDb}).
 */
final class G1IdleLoad {
  private G1IdleLoad() {}

  private static final Workload.Definition DEF = Workload.define("g1", Bench.Suite.GROUPS);

  static final Opt<int[]> CONSUMERS =
      DEF.ints(
          "consumers",
          "1,10,100",
          "consumers of one Boxline instance, one window per count (a list; empty for none)");
  static final Opt<int[]> INSTANCES =
      DEF.ints(
          "instances",
          "",
          "N Boxline instances with one consumer each, one window per count (a list)");
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 60, "least window length, s");
  static final Opt<Integer> PARTITIONS = DEF.partitions(64);
  static final Opt<Integer> POOL = DEF.pool(16);
  static final Opt<Integer> WARMUP = DEF.integer("warmup", 10, "least warm-up before a window, s");

  static final Workload WORKLOAD =
      DEF.runs("idle coordination load of N consumers of one subscription", G1IdleLoad::run);

  /** What one G1 window counted. */
  record Row(
      int consumers,
      int instances,
      double seconds,
      double boxline,
      double checkIns,
      double backlog,
      double policy,
      double sequencer,
      double other,
      double pings,
      double server,
      double[] serverSlices,
      long autovacuum,
      String load,
      String otherLabels) {}

  static double theoretical(int n) {
    return n <= 16 ? 0.5 + 0.55 * n : 0.5 + 8.8;
  }

  static String run(Run run) throws Exception {
    Options o = run.o();
    int[] counts = o.get(CONSUMERS);
    int[] instanceCounts = o.get(INSTANCES);
    int minWindow = o.get(SECONDS);
    int partitions = o.get(PARTITIONS);
    List<Row> rows = new ArrayList<>();
    try (BenchDb db = BenchDb.create(run, "g1");
        Connection maintenance = db.maintenance()) {
      Probe probe = new Probe(GfKit.SCHEMA);
      HikariDataSource pool = db.pool("g1", o.get(POOL), probe);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "g1-main"), GroupFixture.TOPIC, partitions);
      try {
        int group = 0;
        for (int n : counts) {
          rows.add(window(o, db, maintenance, probe, boxline, List.of(), n, ++group, minWindow));
        }
        for (int n : instanceCounts) {
          // N more Boxline instances on the same pool, one consumer each (sequencer standbys).
          List<Boxline> extra = new ArrayList<>();
          try {
            for (int i = 0; i < n - 1; i++) {
              extra.add(GfKit.builder(pool, "g1-extra-" + i).build().start());
            }
            rows.add(window(o, db, maintenance, probe, boxline, extra, n, ++group, minWindow));
          } finally {
            for (Boxline b : extra) {
              b.close();
            }
          }
        }
        check(
            boxline.stats().eventsSequenced() == 0,
            "G1: events were sequenced although nothing was published");
      } finally {
        boxline.close();
      }
    }
    return report(rows, minWindow, partitions);
  }

  private static Row window(
      Options o,
      BenchDb db,
      Connection maintenance,
      Probe probe,
      Boxline main,
      List<Boxline> extra,
      int n,
      int group,
      int minWindow)
      throws Exception {
    String sub = "g1-" + group;
    main.admin().createSubscription(SubscriptionSpec.of(sub, GroupFixture.TOPIC));
    List<Consumer> consumers = new ArrayList<>();
    int instances = extra.isEmpty() ? 1 : extra.size() + 1;
    for (int i = 0; i < n; i++) {
      Boxline b = i == 0 || extra.isEmpty() ? main : extra.get(i - 1);
      consumers.add(
          b.consumer(sub)
              .id(sub + "-m" + i)
              .weight(1)
              .handler(
                  e -> {
                    throw new IllegalStateException("G1 publishes nothing, got " + e);
                  })
              .start());
    }
    // Steady state: every member has seen the whole group (its interval depends on the group size
    // it saw) and the first full re-syncs of the simultaneous start are behind.
    Duration interval = GroupPolicy.DEFAULT.checkInInterval(n);
    long warm = Math.max(o.get(WARMUP) * 1000L, 2 * interval.toMillis() + 2000);
    // At least one full cycle of RESYNC_EVERY (10) check-ins, so the every-tenth backlog and policy
    // reads are in the window in their long-run proportion.
    long window = Math.max(minWindow * 1000L, 10 * interval.toMillis());
    log(
        "G1 %d consumer(s) in %d Boxline instance(s): warm-up %d s, window %d s (check-in interval"
            + " %d ms)",
        n, instances, warm / 1000, window / 1000, interval.toMillis());
    Thread.sleep(warm);
    long checkIns0 = consumers.stream().mapToLong(Consumer::checkInCount).sum();
    long av0 = db.autovacuumRuns();
    probe.reset();
    long x0 = db.transactions(maintenance);
    long t0 = System.nanoTime();
    int slices = (int) Math.max(1, window / 15_000);
    double[] sliceRates = new double[slices];
    long prev = x0;
    long prevT = t0;
    for (int s = 0; s < slices; s++) {
      long end = t0 + (s + 1) * window * 1_000_000L / slices;
      Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000));
      long x = db.transactions(maintenance);
      long t = System.nanoTime();
      sliceRates[s] = (x - prev) / ((t - prevT) / 1e9);
      prev = x;
      prevT = t;
    }
    long t1 = prevT;
    long x1 = prev;
    Map<String, Probe.Series> snap = probe.snapshot();
    long autovacuum = db.autovacuumRuns() - av0;
    long checkIns1 = consumers.stream().mapToLong(Consumer::checkInCount).sum();
    double sec = (t1 - t0) / 1e9;
    long checkInStmts = 0;
    long backlog = 0;
    long policy = 0;
    long sequencer = 0;
    long pings = 0;
    long other = 0;
    Map<String, Long> otherLabels = new HashMap<>();
    for (Map.Entry<String, Probe.Series> e : snap.entrySet()) {
      String k = e.getKey();
      long c = e.getValue().count();
      if (k.endsWith("| borrow (getConnection)")) {
        continue;
      } else if (k.contains("(isValid)")) {
        pings += c;
      } else if (k.startsWith("sequencer |")) {
        sequencer += c;
      } else if (k.contains("heartbeat")) {
        checkInStmts += c;
      } else if (k.contains("p.last_seq, EXISTS")) {
        backlog += c;
      } else if (k.contains("check_in_rate")) {
        policy += c;
      } else {
        other += c;
        otherLabels.merge(k, c, Long::sum);
      }
    }
    // Correctness: every member alive, none lost anything, all of them in the member table.
    long live =
        db.queryLong(
            "SELECT count(*) FROM "
                + GfKit.SCHEMA
                + ".member WHERE group_name = '"
                + sub
                + "' AND expires_at > now()");
    check(live == n, "G1 " + n + ": " + live + " live members in the table, expected " + n);
    for (Consumer c : consumers) {
      check(
          c.lostCount() == 0 && c.fencedCount() == 0 && c.handledCount() == 0,
          "G1 " + n + ": consumer " + c.id() + " lost/fenced/handled something");
    }
    check(
        checkInStmts == checkIns1 - checkIns0
            || Math.abs(checkInStmts - (checkIns1 - checkIns0)) <= n,
        "G1 "
            + n
            + ": counted "
            + checkInStmts
            + " check-in statements but consumers report "
            + (checkIns1 - checkIns0));
    for (Consumer c : consumers) {
      c.close();
    }
    long boxlineStmts = checkInStmts + backlog + policy + sequencer + other;
    Row r =
        new Row(
            n,
            instances,
            sec,
            boxlineStmts / sec,
            checkInStmts / sec,
            backlog / sec,
            policy / sec,
            sequencer / sec,
            other / sec,
            pings / sec,
            (x1 - x0) / sec,
            sliceRates,
            autovacuum,
            Noise.loadAverages(),
            otherLabels.toString());
    log(
        "G1 %d consumer(s): Boxline %.2f statements/s (check-ins %.2f, backlog %.2f, policy %.2f,"
            + " sequencer %.2f, other %.2f) + pool pings %.2f/s; server %.2f transactions/s"
            + " (autovacuum/analyze runs in the window: %d); theory %.2f; load %s; other: %s",
        n,
        r.boxline(),
        r.checkIns(),
        r.backlog(),
        r.policy(),
        r.sequencer(),
        r.other(),
        r.pings(),
        r.server(),
        r.autovacuum(),
        theoretical(n),
        r.load(),
        r.otherLabels());
    return r;
  }

  private static String report(List<Row> rows, int minWindow, int partitions) {
    StringBuilder sb = new StringBuilder("## G1 — idle coordination load\n\n");
    sb.append(
        f(
            "One subscription on a topic of %d partitions, N consumers (ConsumerBuilder.id, weight"
                + " 1) of one Boxline instance unless stated, default GroupPolicy, nothing"
                + " published. Window: at least %d s and at least 10 check-in intervals, after a"
                + " warm-up of at least 2 intervals. Client: statements counted by a JDBC proxy"
                + " under the HikariCP pool. Server: xact_commit + xact_rollback of the workload's"
                + " own database (pg_stat_database), per 15-s slice.%n%n",
            partitions, minWindow));
    Table t =
        new Table(
            "N consumers",
            "Boxline instances",
            "window s",
            "Boxline statements/s",
            "check-ins/s",
            "backlog reads/s",
            "policy reads/s",
            "sequencer/s",
            "other/s",
            "pool pings/s",
            "server xacts/s (median of slices; min–max)",
            "autovacuum runs",
            "docs formula",
            "load 1/5/15");
    for (Row r : rows) {
      t.row(
          r.consumers(),
          r.instances(),
          f("%.0f", r.seconds()),
          f("%.2f", r.boxline()),
          f("%.2f", r.checkIns()),
          f("%.2f", r.backlog()),
          f("%.2f", r.policy()),
          f("%.2f", r.sequencer()),
          f("%.2f", r.other()),
          f("%.2f", r.pings()),
          f(
              "%.2f (%.2f; %.2f–%.2f)",
              r.server(),
              Stats.median(r.serverSlices()),
              Stats.min(r.serverSlices()),
              Stats.max(r.serverSlices())),
          r.autovacuum(),
          f("%.2f", theoretical(r.consumers())),
          r.load());
    }
    sb.append(t).append('\n');
    for (Row r : rows) {
      if (r.consumers() == 100 && r.instances() == 1) {
        sb.append(
            f(
                "Goal (≤ 10 queries/s at 100 consumers): Boxline statements %.2f/s → %s; with the"
                    + " pool's validation pings %.2f/s → %s; server transactions %.2f/s → %s.%n",
                r.boxline(),
                r.boxline() <= 10 ? "pass" : "FAIL",
                r.boxline() + r.pings(),
                r.boxline() + r.pings() <= 10 ? "pass" : "FAIL",
                r.server(),
                r.server() <= 10 ? "pass" : "FAIL"));
      }
    }
    return sb.toString();
  }
}
