package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;
import static io.boxline.bench.Stats.f;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.GroupPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicPartition;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * G2, rebalance (issue 3): 1,024 partitions with a backlog, handlers blocked on a gate, 50
 * consumers join at once; time until every partition is leased and every share is within bounds.
 * Runs in a database of its own ({@link BenchDb}).
 */
final class G2Rebalance {
  private G2Rebalance() {}

  private static final Workload.Definition DEF = Workload.define("g2", Bench.Suite.GROUPS);

  static final Opt<Integer> PARTITIONS = DEF.integer("partitions", 1024, "backlogged partitions");
  static final Opt<Integer> CONSUMERS = DEF.integer("consumers", 50, "consumers that join at once");
  static final Opt<Integer> EVENTS = DEF.integer("events", 3, "events per partition");
  static final Opt<Integer> REPS = DEF.integer("reps", 3, "repetitions with the fast policy");
  static final Opt<Integer> TIMEOUT =
      DEF.integer("timeout", 45, "s to wait for balance (fast policy)");
  static final Opt<Boolean> DEFAULT =
      DEF.flag("default", true, "also one repetition with the default policy");
  static final Opt<Integer> MIN_INTERVAL_MS =
      DEF.integer("min-interval-ms", 250, "fast policy: minCheckInInterval, ms");
  static final Opt<Double> RATE = DEF.decimal("rate", 200, "fast policy: checkInRate, /s");
  static final Opt<Double> DEADLINE_MULTIPLIER =
      DEF.decimal("deadline-multiplier", 8, "fast policy: deadlineMultiplier");
  static final Opt<Integer> POOL = DEF.pool(40);
  static final Opt<Integer> DEFAULT_TIMEOUT =
      DEF.integer("default-timeout", 40, "s to wait for balance (default policy)");
  static final Opt<Boolean> TRACE =
      DEF.flag("trace", true, "log the group every --g2.trace-every s");
  static final Opt<Double> TRACE_EVERY = DEF.decimal("trace-every", 5, "s between trace lines");

  static final Workload WORKLOAD =
      DEF.runs(
          "rebalance: consumers join a group over backlogged partitions at once", G2Rebalance::run);

  record Rep(
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
      String load,
      long joinStatements,
      double joinSeconds,
      double stableStatementsPerSecond) {}

  static String run(Run run) throws Exception {
    Options o = run.o();
    int partitions = o.get(PARTITIONS);
    int members = o.get(CONSUMERS);
    int perPartition = o.get(EVENTS);
    int reps = o.get(REPS);
    int timeout = o.get(TIMEOUT);
    boolean withDefault = o.get(DEFAULT);
    GroupPolicy fast =
        GroupPolicy.DEFAULT
            .withMinCheckInInterval(Duration.ofMillis(o.get(MIN_INTERVAL_MS)))
            .withCheckInRate(o.get(RATE))
            .withDeadlineMultiplier(o.get(DEADLINE_MULTIPLIER));
    List<Rep> out = new ArrayList<>();
    int total = partitions * perPartition;
    try (BenchDb db = BenchDb.create(run, "g2")) {
      Probe probe = new Probe(GfKit.SCHEMA);
      HikariDataSource pool = db.pool("g2", o.get(POOL), probe);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "g2-main"), GroupFixture.TOPIC, partitions);
      try {
        // A key per partition, then perPartition events in every partition.
        String[] keyOf = GroupFixture.keysPerPartition(partitions);
        List<OutgoingEvent> all = new ArrayList<>(total);
        for (int i = 0; i < total; i++) {
          all.add(GfKit.event(GroupFixture.TOPIC, i, keyOf[i % partitions]));
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
          out.add(
              repetition(
                  o, db, probe, boxline, "fast", fast, rep, partitions, members, total, timeout));
        }
        if (withDefault) {
          out.add(
              repetition(
                  o,
                  db,
                  probe,
                  boxline,
                  "default",
                  GroupPolicy.DEFAULT,
                  1,
                  partitions,
                  members,
                  total,
                  o.get(DEFAULT_TIMEOUT)));
        }
      } finally {
        boxline.close();
      }
    }
    return report(out, fast, partitions, members, perPartition);
  }

  private static Rep repetition(
      Options o,
      BenchDb db,
      Probe probe,
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
    boxline.admin().createSubscription(SubscriptionSpec.of(sub, GroupFixture.TOPIC));
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
    long statements0 = probe.statements();
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
    long joinStatements = 0;
    double joinSeconds = 0;
    double stableRate = Double.NaN;
    long deadlocks0 = Bench.DEADLOCKS.get();
    boolean trace = o.get(TRACE);
    double traceEvery = o.get(TRACE_EVERY);
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
              Bench.DEADLOCKS.get() - deadlocks0,
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
      joinStatements = probe.statements() - statements0;
      joinSeconds = (System.nanoTime() - t0) / 1e9;
      // Stays balanced for another 3 s?
      stable = !Double.isNaN(balanced);
      long stable0 = probe.statements();
      long stableT0 = System.nanoTime();
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
        stableRate = (probe.statements() - stable0) / ((System.nanoTime() - stableT0) / 1e9);
      }
    } finally {
      gate.countDown(); // never leave handlers blocked, whatever happened
    }
    long deadlocks = Bench.DEADLOCKS.get() - deadlocks0;
    String load = Noise.loadAverages();
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
        GroupFixture.closeAll(consumers);
        throw new BenchFailure(
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
    GroupFixture.closeAll(consumers);
    check(error.get() == null, "G2: " + error.get());
    long lag =
        boxline.admin().lag(sub).stream().mapToLong(l -> l.lastSequence() - l.position()).sum();
    check(lag == 0, "G2 " + policyName + " rep " + rep + ": " + lag + " events not committed");
    long duplicates = deliveries.get() - total;
    return new Rep(
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
        Bench.DEADLOCKS.get() - deadlocks0,
        noneAbove,
        belowAtEnd,
        load,
        joinStatements,
        joinSeconds,
        stableRate);
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

  private static String report(
      List<Rep> reps, GroupPolicy fast, int partitions, int members, int perPartition) {
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
            "statements until balanced (per s)",
            "statements/s balanced",
            "load 1/5/15");
    for (Rep r : reps) {
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
          f(
              "%d (%.0f)",
              r.joinStatements(), r.joinSeconds() > 0 ? r.joinStatements() / r.joinSeconds() : 0),
          Double.isNaN(r.stableStatementsPerSecond())
              ? "-"
              : f("%.0f", r.stableStatementsPerSecond()),
          r.load());
    }
    sb.append(t).append('\n');
    for (String policy : List.of("fast", "default")) {
      double[] b =
          reps.stream()
              .filter(r -> r.policy().equals(policy) && !Double.isNaN(r.balancedSeconds()))
              .mapToDouble(Rep::balancedSeconds)
              .toArray();
      long all = reps.stream().filter(r -> r.policy().equals(policy)).count();
      if (all > 0) {
        sb.append(
            f(
                "%s policy: balanced in %d of %d repetitions; min / median / max %.2f / %.2f /"
                    + " %.2f s.%n",
                policy, b.length, all, Stats.min(b), Stats.median(b), Stats.max(b)));
      }
    }
    return sb.toString();
  }
}
