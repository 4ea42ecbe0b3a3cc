package io.boxline.bench;

import static io.boxline.bench.GfKit.check;
import static io.boxline.bench.GfKit.f;
import static io.boxline.bench.GfKit.log;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.bench.GfKit.BenchDb;
import io.boxline.bench.GfKit.CheckFailed;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Consumer-group benchmarks (issue 3). Usage, from the repository root:
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench exec:java -Dexec.mainClass=io.boxline.bench.GroupBench -Dexec.args="all"
 * ./mvnw -o -q -pl boxline-bench exec:java -Dexec.mainClass=io.boxline.bench.GroupBench -Dexec.args="g1 --g1.consumers=1,10"
 * </pre>
 *
 * <ul>
 *   <li><b>G1</b> idle coordination load: N consumers of one subscription (one Boxline instance),
 *       nothing published, default group policy; statements/s counted on the client (a counting
 *       proxy under the pool) and transactions/s on the server (pg_stat_database of the workload's
 *       own database).
 *   <li><b>G2</b> rebalance: 1,024 partitions with a backlog, handlers blocked on a gate, 50
 *       consumers join at once; time until every partition is leased and every share is within
 *       bounds.
 *   <li><b>G3</b> cold-partition pickup: 3 idle consumers on 64 partitions; single events to
 *       unleased partitions; latency from commit to handler.
 * </ul>
 *
 * Every workload runs in a database of its own ({@code bench_gf_<workload>_<random>}), dropped at
 * the end. A failed correctness check exits non-zero.
 */
public final class GroupBench {
  private static final TopicName TOPIC = TopicName.of("bench", "events");

  private GroupBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].contains(" ")) {
      args = args[0].trim().split("\\s+");
    }
    if (args.length == 0) {
      args = new String[] {"all"};
    }
    GfKit.Options o = GfKit.Options.parse(args, 1);
    GfKit.quietLogs(o.getBool("verbose", false));
    List<String> workloads = new ArrayList<>();
    for (String w : args[0].toLowerCase(Locale.ROOT).split(",")) {
      if (w.equals("all")) {
        workloads.addAll(List.of("g1", "g2", "g3"));
      } else if (List.of("g1", "g2", "g3").contains(w)) {
        workloads.add(w);
      } else {
        throw new IllegalArgumentException("unknown workload " + w + "; use g1, g2, g3 or all");
      }
    }
    StringBuilder report = new StringBuilder(GfKit.header("Boxline group benchmarks", args));
    System.out.print(report);
    long started = System.nanoTime();
    try {
      for (String w : workloads) {
        String part =
            switch (w) {
              case "g1" -> g1(o);
              case "g2" -> g2(o);
              case "g3" -> g3(o);
              default -> throw new IllegalStateException(w);
            };
        report.append(part).append('\n');
        System.out.println();
        System.out.println(part);
      }
    } catch (CheckFailed e) {
      System.out.println("BENCHMARK FAILED (correctness): " + e.getMessage());
      GfKit.write("groups-FAILED", report + "\nFAILED: " + e.getMessage() + "\n");
      System.exit(1);
    }
    report.append(
        f(
            "Total time %.0f s; load average at the end %s; Boxline warnings logged: %d%s. All"
                + " correctness checks passed.%n",
            (System.nanoTime() - started) / 1e9,
            GfKit.load(),
            GfKit.WARNINGS.get(),
            GfKit.FIRST_WARNINGS.isEmpty() ? "" : " (first: " + GfKit.FIRST_WARNINGS.get(0) + ")"));
    System.out.println(report);
    System.out.println("Written to " + GfKit.write("groups", report.toString()).toAbsolutePath());
    System.exit(0);
  }

  // ================================================================== G1
  /** What one G1 window counted. */
  record G1Row(
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

  static String g1(GfKit.Options o) throws Exception {
    int[] counts = o.ints("g1.consumers", "1,10,100");
    int[] instanceCounts = o.ints("g1.instances", "");
    int minWindow = o.getInt("g1.seconds", 60);
    int partitions = o.getInt("g1.partitions", 64);
    List<G1Row> rows = new ArrayList<>();
    try (BenchDb db = GfKit.BenchDb.create(o, "g1");
        Connection maintenance = db.maintenance()) {
      Probe probe = new Probe(GfKit.SCHEMA);
      HikariDataSource pool = db.pool("g1", o.getInt("g1.pool", 16), probe);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
              .instanceId("g1-main")
              .build()
              .start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(TOPIC, partitions);
        GfKit.awaitLeader(boxline);
        int group = 0;
        for (int n : counts) {
          rows.add(g1Window(o, db, maintenance, probe, boxline, List.of(), n, ++group, minWindow));
        }
        for (int n : instanceCounts) {
          // N more Boxline instances on the same pool, one consumer each (sequencer standbys).
          List<Boxline> extra = new ArrayList<>();
          try {
            for (int i = 0; i < n - 1; i++) {
              extra.add(
                  Boxline.builder()
                      .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
                      .instanceId("g1-extra-" + i)
                      .build()
                      .start());
            }
            rows.add(g1Window(o, db, maintenance, probe, boxline, extra, n, ++group, minWindow));
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
    return g1Report(rows, minWindow, partitions);
  }

  private static G1Row g1Window(
      GfKit.Options o,
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
    main.admin().createSubscription(SubscriptionSpec.of(sub, TOPIC));
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
    long warm = Math.max(o.getInt("g1.warmup", 10) * 1000L, 2 * interval.toMillis() + 2000);
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
    G1Row r =
        new G1Row(
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
            GfKit.load(),
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

  private static String g1Report(List<G1Row> rows, int minWindow, int partitions) {
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
    for (G1Row r : rows) {
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
              GfKit.median(r.serverSlices()),
              GfKit.min(r.serverSlices()),
              GfKit.max(r.serverSlices())),
          r.autovacuum(),
          f("%.2f", theoretical(r.consumers())),
          r.load());
    }
    sb.append(t).append('\n');
    for (G1Row r : rows) {
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

  // ================================================================== G2
  record G2Rep(
      String policy,
      int rep,
      double allLeasedSeconds,
      double balancedSeconds,
      boolean stable,
      int minHeld,
      int maxHeld,
      long checkIns,
      long lost,
      long fenced,
      long duplicates,
      int maxOverlap,
      long deadlocks,
      double noneAboveSeconds,
      int belowAtEnd,
      String load) {}

  static String g2(GfKit.Options o) throws Exception {
    int partitions = o.getInt("g2.partitions", 1024);
    int members = o.getInt("g2.consumers", 50);
    int perPartition = o.getInt("g2.events", 3);
    int reps = o.getInt("g2.reps", 3);
    int timeout = o.getInt("g2.timeout", 45);
    boolean withDefault = o.getBool("g2.default", true);
    GroupPolicy fast =
        GroupPolicy.DEFAULT
            .withMinCheckInInterval(Duration.ofMillis(o.getInt("g2.min-interval-ms", 250)))
            .withCheckInRate(o.getDouble("g2.rate", 200))
            .withDeadlineMultiplier(o.getDouble("g2.deadline-multiplier", 8));
    List<G2Rep> out = new ArrayList<>();
    int total = partitions * perPartition;
    try (BenchDb db = GfKit.BenchDb.create(o, "g2")) {
      HikariDataSource pool = db.pool("g2", o.getInt("g2.pool", 40), null);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
              .instanceId("g2-main")
              .build()
              .start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(TOPIC, partitions);
        GfKit.awaitLeader(boxline);
        // A key per partition, then perPartition events in every partition.
        String[] keyOf = keysPerPartition(partitions);
        List<OutgoingEvent> all = new ArrayList<>(total);
        for (int i = 0; i < total; i++) {
          all.add(event(i, keyOf[i % partitions]));
        }
        for (int from = 0; from < total; from += 512) {
          List<OutgoingEvent> chunk = all.subList(from, Math.min(total, from + 512));
          boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, chunk));
        }
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (boxline.stats().eventsSequenced() < total) {
          check(System.nanoTime() < deadline, "G2: backlog not sequenced within 60 s");
          Thread.sleep(20);
        }
        log("G2 published %d events, %d per partition", total, perPartition);
        for (int rep = 1; rep <= reps; rep++) {
          out.add(g2Rep(o, db, boxline, "fast", fast, rep, partitions, members, total, timeout));
        }
        if (withDefault) {
          out.add(
              g2Rep(
                  o,
                  db,
                  boxline,
                  "default",
                  GroupPolicy.DEFAULT,
                  1,
                  partitions,
                  members,
                  total,
                  o.getInt("g2.default-timeout", 40)));
        }
      } finally {
        boxline.close();
      }
    }
    return g2Report(out, fast, partitions, members, perPartition);
  }

  private static G2Rep g2Rep(
      GfKit.Options o,
      BenchDb db,
      Boxline boxline,
      String policyName,
      GroupPolicy policy,
      int rep,
      int partitions,
      int members,
      int total,
      int timeoutSeconds)
      throws Exception {
    String sub = "g2-" + policyName + "-" + rep;
    boxline.admin().createSubscription(SubscriptionSpec.of(sub, TOPIC));
    boxline.admin().setGroupPolicy(sub, policy);
    CountDownLatch gate = new CountDownLatch(1);
    AtomicIntegerArray seen = new AtomicIntegerArray(total);
    AtomicLong deliveries = new AtomicLong();
    AtomicReference<String> error = new AtomicReference<>();
    double share = (double) partitions / members;
    int lo = (int) Math.floor(share * (1 - policy.slack()) + 1e-9);
    int hi = (int) Math.ceil(share * (1 + policy.slack()) - 1e-9);
    List<Consumer> consumers = new ArrayList<>();
    log(
        "G2 %s rep %d: %d consumers join a group over %d backlogged partitions (share %.2f, bounds"
            + " %d..%d)",
        policyName, rep, members, partitions, share, lo, hi);
    long t0 = System.nanoTime();
    for (int i = 0; i < members; i++) {
      consumers.add(
          boxline
              .consumer(sub)
              .id(sub + "-m" + i)
              .weight(1)
              .handler(
                  (Event e) -> {
                    long idx = GfKit.index(e.id());
                    if (idx < 0 || idx >= total) {
                      error.compareAndSet(null, "unknown event " + e);
                      return;
                    }
                    seen.incrementAndGet((int) idx);
                    deliveries.incrementAndGet();
                    try {
                      gate.await();
                    } catch (InterruptedException ie) {
                      Thread.currentThread().interrupt();
                      throw new IllegalStateException("interrupted while blocked on the gate");
                    }
                  })
              .start());
    }
    double allLeased = Double.NaN;
    double balanced = Double.NaN;
    int minHeld = 0;
    int maxHeld = 0;
    int maxOverlap = 0;
    int belowAtEnd = 0;
    double noneAbove = Double.NaN;
    boolean stable = false;
    long deadlocks0 = GfKit.DEADLOCKS.get();
    boolean trace = o.getBool("g2.trace", true);
    double traceEvery = o.getDouble("g2.trace-every", 5);
    double nextTrace = 0;
    try {
      long end = t0 + timeoutSeconds * 1_000_000_000L;
      while (System.nanoTime() < end) {
        Set<TopicPartition> union = new HashSet<>();
        int mn = Integer.MAX_VALUE;
        int mx = 0;
        int sum = 0;
        for (Consumer c : consumers) {
          Set<TopicPartition> a = c.assignedPartitions();
          union.addAll(a);
          sum += a.size();
          mn = Math.min(mn, a.size());
          mx = Math.max(mx, a.size());
        }
        // A consumer whose lease was taken over still lists the partition until its next check-in
        // notices (its commits are fenced meanwhile): count it, it is not an error by itself.
        maxOverlap = Math.max(maxOverlap, sum - union.size());
        double s = (System.nanoTime() - t0) / 1e9;
        int belowNow = 0;
        for (Consumer c : consumers) {
          belowNow += c.assignedPartitions().size() < lo ? 1 : 0;
        }
        belowAtEnd = belowNow;
        if (mx <= hi && Double.isNaN(noneAbove)) {
          noneAbove = s;
        }
        if (trace && s >= nextTrace) {
          nextTrace += traceEvery;
          int below = 0;
          int above = 0;
          for (Consumer c : consumers) {
            int a = c.assignedPartitions().size();
            below += a < lo ? 1 : 0;
            above += a > hi ? 1 : 0;
          }
          log(
              "  t=%5.1f s: %4d partitions held, double-listed %d, per consumer min %d max %d,"
                  + " %d below %d, %d above %d, deadlocks %d, lost %d; lease table: %s",
              s,
              union.size(),
              sum - union.size(),
              mn,
              mx,
              below,
              lo,
              above,
              hi,
              GfKit.DEADLOCKS.get() - deadlocks0,
              consumers.stream().mapToLong(Consumer::lostCount).sum(),
              leaseStates(db, sub));
        }
        minHeld = mn;
        maxHeld = mx;
        if (union.size() == partitions && Double.isNaN(allLeased)) {
          allLeased = s;
        }
        if (union.size() == partitions && sum == partitions && mn >= lo && mx <= hi) {
          balanced = s;
          break;
        }
        Thread.sleep(20);
      }
      // Stays balanced for another 3 s?
      stable = !Double.isNaN(balanced);
      if (stable) {
        long until = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < until && stable) {
          int n = 0;
          for (Consumer c : consumers) {
            int a = c.assignedPartitions().size();
            n += a;
            if (a < lo || a > hi) {
              stable = false;
            }
          }
          stable &= n == partitions;
          Thread.sleep(50);
        }
      }
    } finally {
      gate.countDown(); // never leave handlers blocked, whatever happened
    }
    long deadlocks = GfKit.DEADLOCKS.get() - deadlocks0;
    String load = GfKit.load();
    log(
        "G2 %s rep %d: all leased after %.2f s, balanced after %.2f s (%s); held min %d max %d;"
            + " deadlocks so far %d",
        policyName,
        rep,
        allLeased,
        balanced,
        stable ? "stable 3 s" : "NOT stable",
        minHeld,
        maxHeld,
        deadlocks);
    // Every event must get through once the gate is open.
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (true) {
      int missing = 0;
      for (int i = 0; i < total; i++) {
        if (seen.get(i) == 0) {
          missing++;
        }
      }
      if (missing == 0) {
        break;
      }
      if (System.nanoTime() > deadline) {
        closeAll(consumers);
        throw new CheckFailed(
            "G2 " + policyName + " rep " + rep + ": " + missing + " events never handled");
      }
      Thread.sleep(100);
    }
    Thread.sleep(1000);
    long checkIns = 0;
    long lost = 0;
    long fenced = 0;
    for (Consumer c : consumers) {
      checkIns += c.checkInCount();
      lost += c.lostCount();
      fenced += c.fencedCount();
    }
    closeAll(consumers);
    check(error.get() == null, "G2: " + error.get());
    long lag =
        boxline.admin().lag(sub).stream().mapToLong(l -> l.lastSequence() - l.position()).sum();
    check(lag == 0, "G2 " + policyName + " rep " + rep + ": " + lag + " events not committed");
    long duplicates = deliveries.get() - total;
    return new G2Rep(
        policyName,
        rep,
        allLeased,
        balanced,
        stable,
        minHeld,
        maxHeld,
        checkIns,
        lost,
        fenced,
        duplicates,
        maxOverlap,
        GfKit.DEADLOCKS.get() - deadlocks0,
        noneAbove,
        belowAtEnd,
        load);
  }

  /** "held h, releasing r, free f" from the lease table of the group. */
  static String leaseStates(BenchDb db, String group) {
    try (Connection c = db.connect();
        var st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT count(*) FILTER (WHERE owner IS NOT NULL AND NOT releasing),"
                    + " count(*) FILTER (WHERE releasing), count(*) FILTER (WHERE owner IS NULL)"
                    + " FROM "
                    + GfKit.SCHEMA
                    + ".lease WHERE group_name = '"
                    + group
                    + "'")) {
      rs.next();
      return "held " + rs.getLong(1) + ", releasing " + rs.getLong(2) + ", free " + rs.getLong(3);
    } catch (java.sql.SQLException e) {
      return "?";
    }
  }

  /** Closes consumers in parallel (each close waits for its own in-flight batch). */
  static void closeAll(List<Consumer> consumers) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (Consumer c : consumers) {
      Thread t = new Thread(c::close, "close-" + c.id());
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
  }

  private static String g2Report(
      List<G2Rep> reps, GroupPolicy fast, int partitions, int members, int perPartition) {
    StringBuilder sb = new StringBuilder("## G2 — rebalance of 50 joining consumers\n\n");
    sb.append(
        f(
            "Topic of %d partitions, %d events in each (all partitions backlogged); a fresh"
                + " subscription per repetition; %d consumers (one Boxline instance, default"
                + " concurrency 4 and batch 100) started in a loop, their handlers block on a gate"
                + " so partitions stay active. Measured from the first start(): *all leased* ="
                + " every partition held (ACTIVE) by some consumer, *balanced* = additionally every"
                + " consumer holds between floor(share×0.9) and ceil(share×1.1) partitions"
                + " (assignedPartitions(), polled every 20 ms). Then the gate opens and every event"
                + " must be handled and committed.%n%n"
                + "Fast policy: checkInRate %.0f/s, minCheckInInterval %d ms (so the interval is"
                + " %d ms at %d members), deadlineMultiplier %.1f, slack %.2f, releaseGrace %d s,"
                + " idleRelease %d s. Default policy: checkInRate 8/s, min 2 s (interval %d ms at"
                + " %d members).%n%n",
            partitions,
            perPartition,
            members,
            fast.checkInRate(),
            fast.minCheckInInterval().toMillis(),
            fast.checkInInterval(members).toMillis(),
            members,
            fast.deadlineMultiplier(),
            fast.slack(),
            fast.releaseGrace().toSeconds(),
            fast.idleRelease().toSeconds(),
            GroupPolicy.DEFAULT.checkInInterval(members).toMillis(),
            members));
    Table t =
        new Table(
            "policy",
            "rep",
            "all leased s",
            "nobody above upper bound s",
            "balanced s",
            "stable 3 s after",
            "held min/max at the end (members below lower bound)",
            "check-ins",
            "lost",
            "fenced",
            "duplicate deliveries",
            "max double-listed",
            "deadlock errors",
            "load 1/5/15");
    for (G2Rep r : reps) {
      t.row(
          r.policy(),
          r.rep(),
          Double.isNaN(r.allLeasedSeconds())
              ? "not within timeout"
              : f("%.2f", r.allLeasedSeconds()),
          Double.isNaN(r.noneAboveSeconds())
              ? "not within timeout"
              : f("%.2f", r.noneAboveSeconds()),
          Double.isNaN(r.balancedSeconds()) ? "not within timeout" : f("%.2f", r.balancedSeconds()),
          r.stable() ? "yes" : "no",
          r.minHeld() + " / " + r.maxHeld() + " (" + r.belowAtEnd() + ")",
          r.checkIns(),
          r.lost(),
          r.fenced(),
          r.duplicates(),
          r.maxOverlap(),
          r.deadlocks(),
          r.load());
    }
    sb.append(t).append('\n');
    for (String policy : List.of("fast", "default")) {
      double[] b =
          reps.stream()
              .filter(r -> r.policy().equals(policy) && !Double.isNaN(r.balancedSeconds()))
              .mapToDouble(G2Rep::balancedSeconds)
              .toArray();
      long all = reps.stream().filter(r -> r.policy().equals(policy)).count();
      if (all > 0) {
        sb.append(
            f(
                "%s policy: balanced in %d of %d repetitions; min / median / max %.2f / %.2f /"
                    + " %.2f s.%n",
                policy, b.length, all, GfKit.min(b), GfKit.median(b), GfKit.max(b)));
      }
    }
    return sb.toString();
  }

  static String[] keysPerPartition(int partitions) {
    String[] keys = new String[partitions];
    Partitioner p = Partitioner.kafkaCompatible();
    int found = 0;
    for (int i = 0; found < partitions; i++) {
      String k = "key-" + i;
      int part = p.partition(k, partitions);
      if (keys[part] == null) {
        keys[part] = k;
        found++;
      }
    }
    return keys;
  }

  static OutgoingEvent event(long index, String key) {
    return OutgoingEvent.builder(TOPIC)
        .id(GfKit.id(index))
        .type("bench.event")
        .key(key)
        .contentType("application/json")
        .payload(GfKit.payload(index))
        .build();
  }

  // ================================================================== G3
  static String g3(GfKit.Options o) throws Exception {
    int partitions = o.getInt("g3.partitions", 64);
    int members = o.getInt("g3.consumers", 3);
    int coldSamples = o.getInt("g3.samples", 200);
    int warmEvery = o.getInt("g3.warm-every", 4); // every 4th sample also a warm one
    long gapMillis = o.getInt("g3.gap-ms", 300);
    long coldAfterMillis = o.getInt("g3.cold-after-ms", 14_000);
    int warmSamples = warmEvery > 0 ? coldSamples / warmEvery : 0;
    int total = coldSamples + warmSamples;
    long[] committedAt = new long[total];
    long[] beforeCommit = new long[total];
    AtomicLongArray entered = new AtomicLongArray(total);
    AtomicIntegerArray seen = new AtomicIntegerArray(total);
    boolean[] cold = new boolean[total];
    AtomicReference<String> error = new AtomicReference<>();
    String[] keyOf = keysPerPartition(partitions);
    long[] lastPublished = new long[partitions];
    Arrays.fill(lastPublished, Long.MIN_VALUE / 2);
    SplittableRandom random = new SplittableRandom(42);
    String load;
    long lost = 0;
    long xacts;
    double seconds;
    try (BenchDb db = GfKit.BenchDb.create(o, "g3");
        Connection maintenance = db.maintenance()) {
      HikariDataSource pool = db.pool("g3", o.getInt("g3.pool", 12), null);
      Boxline boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(GfKit.SCHEMA).build())
              .instanceId("g3-main")
              .build()
              .start();
      try {
        boxline.admin().createNamespace(NamespacePath.of("bench"));
        boxline.admin().createTopic(TOPIC, partitions);
        boxline.admin().createSubscription(SubscriptionSpec.of("g3", TOPIC));
        GfKit.awaitLeader(boxline);
        List<Consumer> consumers = new ArrayList<>();
        for (int i = 0; i < members; i++) {
          consumers.add(
              boxline
                  .consumer("g3")
                  .id("g3-m" + i)
                  .handler(
                      (Event e) -> {
                        long now = System.nanoTime();
                        long idx = GfKit.index(e.id());
                        if (idx < 0 || idx >= total) {
                          error.compareAndSet(null, "unknown event " + e);
                          return;
                        }
                        entered.compareAndSet((int) idx, 0, now);
                        if (seen.incrementAndGet((int) idx) > 1) {
                          error.compareAndSet(null, "event " + idx + " delivered twice");
                        }
                      })
                  .start());
        }
        Thread.sleep(o.getInt("g3.warmup", 5) * 1000L); // every member has checked in
        log(
            "G3 %d idle consumers on %d partitions: %d cold + %d warm samples, one every %d ms",
            members, partitions, coldSamples, warmSamples, gapMillis);
        long x0 = db.transactions(maintenance);
        long start = System.nanoTime();
        int coldDone = 0;
        for (int i = 0; i < total; i++) {
          long due = start + i * gapMillis * 1_000_000L;
          Thread.sleep(Math.max(0, (due - System.nanoTime()) / 1_000_000));
          Set<Integer> held = new HashSet<>();
          for (Consumer c : consumers) {
            for (TopicPartition tp : c.assignedPartitions()) {
              held.add(tp.partition());
            }
          }
          boolean wantWarm = warmEvery > 0 && i % (warmEvery + 1) == warmEvery;
          if (coldDone >= coldSamples) {
            wantWarm = true;
          }
          List<Integer> candidates = new ArrayList<>();
          long now = System.nanoTime();
          for (int p = 0; p < partitions; p++) {
            boolean isCold =
                !held.contains(p) && now - lastPublished[p] > coldAfterMillis * 1_000_000L;
            if (wantWarm ? held.contains(p) : isCold) {
              candidates.add(p);
            }
          }
          if (candidates.isEmpty()) {
            // Nothing warm (or cold) right now: take the other kind rather than wait.
            wantWarm = !wantWarm;
            for (int p = 0; p < partitions; p++) {
              boolean isCold =
                  !held.contains(p) && now - lastPublished[p] > coldAfterMillis * 1_000_000L;
              if (wantWarm ? held.contains(p) : isCold) {
                candidates.add(p);
              }
            }
            check(!candidates.isEmpty(), "G3: no cold and no warm partition to publish to");
          }
          int p = candidates.get(random.nextInt(candidates.size()));
          cold[i] = !wantWarm;
          if (cold[i]) {
            coldDone++;
          }
          lastPublished[p] = System.nanoTime();
          OutgoingEvent e = event(i, keyOf[p]);
          int idx = i;
          boxline.inTransaction(
              tx -> {
                var r = boxline.publisher().publish(tx, e);
                beforeCommit[idx] = System.nanoTime();
                return r;
              });
          committedAt[i] = System.nanoTime();
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
          int missing = 0;
          for (int i = 0; i < total; i++) {
            missing += seen.get(i) == 0 ? 1 : 0;
          }
          if (missing == 0) {
            break;
          }
          check(System.nanoTime() < deadline, "G3: " + missing + " events never handled");
          Thread.sleep(50);
        }
        seconds = (System.nanoTime() - start) / 1e9;
        xacts = db.transactions(maintenance) - x0;
        load = GfKit.load();
        Thread.sleep(500);
        check(error.get() == null, "G3: " + error.get());
        long handled = 0;
        for (Consumer c : consumers) {
          handled += c.handledCount();
          lost += c.lostCount();
        }
        check(handled == total, "G3: handledCount " + handled + ", expected " + total);
        closeAll(consumers);
      } finally {
        boxline.close();
      }
    }
    List<Long> coldLat = new ArrayList<>();
    List<Long> warmLat = new ArrayList<>();
    List<Long> coldLatFromCommitStart = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      long l = entered.get(i) - committedAt[i];
      (cold[i] ? coldLat : warmLat).add(l);
      if (cold[i]) {
        coldLatFromCommitStart.add(entered.get(i) - beforeCommit[i]);
      }
    }
    long[] c = coldLat.stream().mapToLong(Long::longValue).sorted().toArray();
    long[] w = warmLat.stream().mapToLong(Long::longValue).sorted().toArray();
    long[] cb = coldLatFromCommitStart.stream().mapToLong(Long::longValue).sorted().toArray();
    int over = 0;
    for (long v : c) {
      over += v > 100_000_000L ? 1 : 0;
    }
    StringBuilder sb = new StringBuilder("## G3 — cold-partition pickup latency\n\n");
    sb.append(
        f(
            "%d consumers (one Boxline instance, default policy) idle on a topic of %d partitions;"
                + " the producer (same JVM, boxline.inTransaction, one event per transaction)"
                + " publishes one event every %d ms, alternately to a random *cold* partition (no"
                + " consumer holds it and nothing was published to it for %d s, so any lease from"
                + " an earlier sample was released by idleRelease) and, every %d-th sample, to a"
                + " *warm* one (currently leased). Latency: System.nanoTime() when inTransaction"
                + " returned → when the handler was entered. Run took %.0f s, %d server"
                + " transactions (%.1f/s); load %s.%n%n",
            members,
            partitions,
            gapMillis,
            coldAfterMillis / 1000,
            warmEvery + 1,
            seconds,
            xacts,
            xacts / seconds,
            load));
    Table t =
        new Table("partitions", "samples", "p50 ms", "p90 ms", "p99 ms", "max ms", "> 100 ms");
    t.row(
        "cold",
        c.length,
        GfKit.ms(GfKit.percentile(c, 50)),
        GfKit.ms(GfKit.percentile(c, 90)),
        GfKit.ms(GfKit.percentile(c, 99)),
        GfKit.ms(GfKit.percentile(c, 100)),
        over);
    t.row(
        "cold, from just before COMMIT",
        cb.length,
        GfKit.ms(GfKit.percentile(cb, 50)),
        GfKit.ms(GfKit.percentile(cb, 90)),
        GfKit.ms(GfKit.percentile(cb, 99)),
        GfKit.ms(GfKit.percentile(cb, 100)),
        "");
    t.row(
        "warm (leased)",
        w.length,
        GfKit.ms(GfKit.percentile(w, 50)),
        GfKit.ms(GfKit.percentile(w, 90)),
        GfKit.ms(GfKit.percentile(w, 99)),
        GfKit.ms(GfKit.percentile(w, 100)),
        "");
    sb.append(t).append('\n');
    sb.append(
        f(
            "Goal (cold pickup ≤ 100 ms): p99 %s ms → %s (max %s ms; %d of %d samples over 100"
                + " ms). Partitions lost by consumers: %d.%n",
            GfKit.ms(GfKit.percentile(c, 99)),
            GfKit.percentile(c, 99) <= 100_000_000L ? "pass" : "FAIL",
            GfKit.ms(GfKit.percentile(c, 100)),
            over,
            c.length,
            lost));
    return sb.toString();
  }
}
