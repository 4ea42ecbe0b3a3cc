package io.boxline.chaos;

import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One chaos run from start to verdict: private database and broker, schema, children, the fault
 * schedule with progress lines, the drain (producers stopped, every subscription caught up), a
 * graceful stop, then the checker.
 */
final class ChaosRun {
  /** Everything a run produced, for the table and the test. */
  record Result(
      ChaosOptions options,
      String database,
      List<FaultInjector.Injected> faults,
      CheckReport report,
      ChaosChecker.Bounds bounds,
      Map<String, Long> producerCounters,
      int unexpectedExits,
      Duration setup,
      Duration chaos,
      Duration drain,
      Duration check,
      Duration wall,
      Path runDir) {}

  private final ChaosOptions options;

  ChaosRun(ChaosOptions options) {
    this.options = options;
  }

  Result run() throws Exception {
    long t0 = System.nanoTime();
    Path runDir =
        Path.of("target", "chaos", "run-" + options.seed + "-" + Instant.now().toEpochMilli())
            .toAbsolutePath();
    System.out.println(
        "chaos run, seed " + options.seed + " (replay: " + options.commandLine() + ")");
    System.out.println("children's logs in " + runDir.resolve("logs"));
    try (ChaosDatabase db = ChaosDatabases.open(options.db);
        PrivateNats nats = PrivateNats.start();
        HikariDataSource pool = ChaosSetup.parentPool(db)) {
      System.out.println("database: " + db + "; broker: " + nats);
      ChaosSetup.create(pool, db);
      try (ChaosCluster cluster = new ChaosCluster(options, db, nats.url(), runDir)) {
        // Ctrl-C or kill of this JVM: take the children, the broker and the database down too.
        Thread cleanup =
            new Thread(
                () -> {
                  cluster.close();
                  nats.close();
                  db.close();
                },
                "chaos-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
          return phases(cluster, db, nats, pool, runDir, t0);
        } finally {
          Runtime.getRuntime().removeShutdownHook(cleanup);
        }
      }
    }
  }

  private Result phases(
      ChaosCluster cluster,
      ChaosDatabase db,
      PrivateNats nats,
      HikariDataSource pool,
      Path runDir,
      long t0)
      throws Exception {
    for (Role r : Role.values()) {
      cluster.startAll(r);
    }
    cluster.awaitReady(Duration.ofMinutes(2));
    Duration setup = since(t0);
    System.out.println("all children ready after " + setup.toMillis() + " ms");

    ChaosProbe probe = new ChaosProbe(pool, db);
    FaultSchedule schedule =
        new FaultSchedule(options.seed, cluster.counts(), options.faultEverySeconds);
    FaultInjector faults = new FaultInjector(schedule, cluster, db, nats, probe);
    ProgressReporter progress =
        new ProgressReporter(probe, cluster, faults, Duration.ofSeconds(options.progressSeconds));
    long chaosStart = System.nanoTime();
    faults.start();
    progress.start();
    awaitChaosEnd(cluster, faults, schedule.openingSize(), chaosStart);
    System.out.println("chaos phase over; finishing the fault in progress");
    faults.stopAndJoin();
    cluster.restartDead();
    Duration chaos = since(chaosStart);

    long drainStart = System.nanoTime();
    int killed = cluster.stop(Role.PRODUCER, Duration.ofSeconds(30));
    System.out.println("producers stopped (" + killed + " had to be killed); draining");
    awaitDrained(probe, cluster);
    progress.stopAndJoin();
    System.out.println(progress.line());
    Map<String, Long> producerCounters =
        Map.of(
            "events", cluster.sum("events"),
            "rolledBack", cluster.sum("rolledBack"),
            "resends", cluster.sum("resends"),
            "failures", cluster.sum("failures"));
    for (Role r : List.of(Role.CONSUMER, Role.RELAY, Role.WORKER)) {
      cluster.stop(r, Duration.ofSeconds(30));
    }
    Duration drain = since(drainStart);

    long checkStart = System.nanoTime();
    ChaosChecker.Bounds bounds = bounds(faults.injected(), cluster);
    CheckReport report = new ChaosChecker(pool, db, nats, bounds).check();
    return new Result(
        options,
        db.toString(),
        faults.injected(),
        report,
        bounds,
        producerCounters,
        cluster.unexpectedExits(),
        setup,
        chaos,
        drain,
        since(checkStart),
        since(t0),
        runDir);
  }

  /**
   * The chaos phase lasts its seconds, and on until every kind of fault was injected once (the
   * schedule's opening) and the event target is met (if any) — but not past four times the time the
   * target takes at the producers' nominal rate (at least ten minutes), so a run that stalls still
   * ends and the checker shows what it got.
   */
  private void awaitChaosEnd(ChaosCluster cluster, FaultInjector faults, int opening, long start) {
    long end = start + options.chaosTime().toNanos();
    double nominalRate = (double) options.producers * options.producerRate;
    long capSeconds = Math.max(600, (long) (4 * options.events / nominalRate));
    long cap = start + Duration.ofSeconds(capSeconds).toNanos();
    while (System.nanoTime() < cap
        && (System.nanoTime() < end
            || faults.injected().size() < opening
            || cluster.sum("events") < options.events)) {
      ChildArgs.sleepQuietly(Duration.ofMillis(500)); // the run's clock, not a synchronisation
    }
  }

  /** Bounded wait until the outbox is empty, nothing is parked and every cursor is at the end. */
  private void awaitDrained(ChaosProbe probe, ChaosCluster cluster) {
    long deadline = System.nanoTime() + Duration.ofSeconds(options.drainSeconds).toNanos();
    String state = "";
    while (System.nanoTime() < deadline) {
      try {
        long outbox = probe.outbox();
        long parked = probe.parkedLive();
        Map<String, Long> backlogs = probe.backlogs();
        state = "outbox " + outbox + ", parked " + parked + ", backlogs " + backlogs;
        if (outbox == 0 && parked == 0 && backlogs.values().stream().allMatch(b -> b == 0)) {
          System.out.println("drained: " + state);
          return;
        }
      } catch (Exception e) {
        state = "database unreachable: " + e;
      }
      cluster.restartDead();
      ChildArgs.sleepQuietly(Duration.ofMillis(250)); // polling a condition, bounded above
    }
    System.out.println(
        "!! not drained within "
            + options.drainSeconds
            + " s: "
            + state
            + " (the checker reports what is missing)");
  }

  /**
   * Duplicates at-least-once delivery may show: each disruption of a member (kill, pause, a network
   * fault on its link, a database restart for every member) can redeliver its in-flight batches
   * (concurrency × batch), and each partition a member lost or was fenced on its in-flight batch.
   */
  private ChaosChecker.Bounds bounds(List<FaultInjector.Injected> injected, ChaosCluster cluster) {
    long dbRestarts = count(injected, Fault.Kind.RESTART_DATABASE, null);
    long brokerRestarts = count(injected, Fault.Kind.RESTART_BROKER, null);
    int batch = options.batch;
    int conc = options.concurrency;
    long consumerHits = hits(injected, Role.CONSUMER) + dbRestarts * options.consumers;
    long relayHits = hits(injected, Role.RELAY) + (dbRestarts + brokerRestarts) * options.relays;
    long workerHits = hits(injected, Role.WORKER) + dbRestarts * options.workers;
    return new ChaosChecker.Bounds(
        consumerHits * conc * batch
            + (cluster.sum("deliveriesLost") + cluster.sum("deliveriesFenced")) * batch,
        relayHits * conc * batch * 5
            + (cluster.sum("relayLost") + cluster.sum("relayFenced")) * batch * 5,
        workerHits * conc * batch
            + (cluster.sum("tasksLost") + cluster.sum("tasksFenced")) * batch);
  }

  /** Faults that disrupt one process of {@code role}: each can redeliver its in-flight batches. */
  private static long hits(List<FaultInjector.Injected> injected, Role role) {
    long n = 0;
    for (Fault.Kind k :
        List.of(
            Fault.Kind.KILL,
            Fault.Kind.PAUSE,
            Fault.Kind.NET_CUT,
            Fault.Kind.NET_RESET,
            Fault.Kind.NET_COMMIT_LOST,
            Fault.Kind.NET_SLOW)) {
      n += count(injected, k, role);
    }
    return n;
  }

  static long count(List<FaultInjector.Injected> injected, Fault.Kind kind, Role role) {
    return injected.stream()
        .filter(i -> !i.skipped())
        .filter(i -> i.fault().kind() == kind && (role == null || i.fault().role() == role))
        .count();
  }

  private static Duration since(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos);
  }
}
