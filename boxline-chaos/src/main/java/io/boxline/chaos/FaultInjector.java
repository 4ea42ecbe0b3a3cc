package io.boxline.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs the fault schedule on its own thread until stopped: one fault at a time, each followed by
 * its seeded gap. After a database or broker restart it measures the recovery: the time from the
 * crash until the consumers (or the relay) move their cursors past where they were when the server
 * came back.
 */
final class FaultInjector {
  /** A fault as it happened: when (ms since the chaos phase began) and what it took. */
  record Injected(Fault fault, long atMillis, long upMillis, long recoveredMillis, String note) {
    /** A database restart on a shared server is not done. */
    boolean skipped() {
      return upMillis < 0 && recoveredMillis < 0 && note.startsWith("skipped");
    }

    String label() {
      return skipped() ? fault.label() + " (skipped)" : fault.label();
    }
  }

  static final Duration RECOVERY_BOUND = Duration.ofMinutes(2);

  private final FaultSchedule schedule;
  private final ChaosCluster cluster;
  private final ChaosDatabase db;
  private final PrivateNats nats;
  private final ChaosProbe probe;
  private final List<Injected> injected = new ArrayList<>();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread;
  private long startNanos;

  FaultInjector(
      FaultSchedule schedule,
      ChaosCluster cluster,
      ChaosDatabase db,
      PrivateNats nats,
      ChaosProbe probe) {
    this.schedule = schedule;
    this.cluster = cluster;
    this.db = db;
    this.nats = nats;
    this.probe = probe;
    this.thread = new Thread(this::loop, "chaos-faults");
  }

  void start() {
    startNanos = System.nanoTime();
    thread.start();
  }

  /** Stops after the fault in progress (a pause is resumed, a killed child restarted). */
  void stopAndJoin() throws InterruptedException {
    stop.countDown();
    thread.join(Duration.ofMinutes(3).toMillis());
    if (thread.isAlive()) {
      throw new IllegalStateException("the fault thread did not finish its last fault in 3 min");
    }
  }

  synchronized List<Injected> injected() {
    return List.copyOf(injected);
  }

  private long now() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  private void loop() {
    try {
      while (true) {
        Fault f = schedule.next();
        // The gap is part of the schedule; stopping ends it early.
        if (stop.await(f.gapMillis(), TimeUnit.MILLISECONDS)) {
          return;
        }
        Injected done = inject(f);
        synchronized (this) {
          injected.add(done);
        }
        System.out.println("   fault " + f + " " + done.note());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      System.out.println("!! fault thread failed: " + e);
      e.printStackTrace(System.out);
    }
  }

  private Injected inject(Fault f) {
    long at = now();
    switch (f.kind()) {
      case KILL -> {
        cluster.killAndRestart(f.role(), f.index(), Duration.ofMillis(f.millis()));
        return new Injected(f, at, 0, 0, "");
      }
      case PAUSE -> {
        cluster.pause(f.role(), f.index(), Duration.ofMillis(f.millis()));
        return new Injected(f, at, 0, 0, "");
      }
      case RESTART_DATABASE -> {
        if (!db.restartable()) {
          return new Injected(f, at, -1, -1, "skipped: shared database server");
        }
        long t0 = System.nanoTime();
        Duration up = db.crashAndRestart();
        long recovered = awaitProgress(t0, List.of(ChaosNames.EFFECTS, ChaosNames.DELIVERIES));
        return new Injected(
            f,
            at,
            up.toMillis(),
            recovered,
            "(accepting connections after "
                + up.toMillis()
                + " ms, consumers moving after "
                + recovered
                + " ms)");
      }
      case NET_CUT -> {
        io.boxline.testkit.net.FaultProxy link = cluster.link(f.role(), f.index());
        link.blackhole();
        try {
          ChildArgs.sleepQuietly(Duration.ofMillis(f.millis())); // the fault's length
        } finally {
          link.heal();
        }
        return new Injected(f, at, 0, 0, "");
      }
      case NET_RESET -> {
        int reset = cluster.link(f.role(), f.index()).resetAll();
        return new Injected(f, at, 0, 0, "(" + reset + " connections reset)");
      }
      case NET_COMMIT_LOST -> {
        io.boxline.testkit.net.FaultProxy link = cluster.link(f.role(), f.index());
        int before = link.resets();
        link.resetAfterReplyTo("COMMIT");
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (link.resets() == before && System.nanoTime() < deadline) {
          ChildArgs.sleepQuietly(Duration.ofMillis(20)); // polling a condition, bounded above
        }
        boolean hit = link.resets() > before;
        link.heal(); // disarms a marker that no COMMIT met
        return new Injected(f, at, 0, 0, hit ? "(a COMMIT's answer lost)" : "(no COMMIT in 10 s)");
      }
      case NET_SLOW -> {
        io.boxline.testkit.net.FaultProxy link = cluster.link(f.role(), f.index());
        java.util.Random r = new java.util.Random(f.number());
        long latency = 50 + r.nextInt(451);
        long bytesPerSecond = 20_000 + r.nextInt(180_001);
        link.latency(Duration.ofMillis(latency));
        link.bandwidth(bytesPerSecond);
        try {
          ChildArgs.sleepQuietly(Duration.ofMillis(f.millis())); // the fault's length
        } finally {
          link.heal();
        }
        return new Injected(
            f, at, 0, 0, "(" + latency + " ms per chunk, " + bytesPerSecond / 1000 + " KB/s)");
      }
      case RESTART_BROKER -> {
        long t0 = System.nanoTime();
        Duration up = nats.crashAndRestart();
        long recovered = awaitProgress(t0, List.of(ChaosNames.RELAY));
        return new Injected(
            f,
            at,
            up.toMillis(),
            recovered,
            "(stream back after "
                + up.toMillis()
                + " ms, relay moving after "
                + recovered
                + " ms)");
      }
    }
    throw new IllegalStateException("unknown fault " + f);
  }

  /**
   * Milliseconds from {@code t0} until new events were sequenced and every named subscription's
   * cursors moved, relative to the first reading that succeeds; -1 if not within the bound.
   */
  private long awaitProgress(long t0, List<String> subscriptions) {
    long deadline = System.nanoTime() + RECOVERY_BOUND.toNanos();
    Long sequenced = null;
    Map<String, Long> positions = null;
    while (System.nanoTime() < deadline) {
      try {
        if (positions == null) {
          sequenced = probe.sequenced();
          positions = probe.positions();
        } else if (probe.sequenced() > sequenced
            && moved(positions, probe.positions(), subscriptions)) {
          return (System.nanoTime() - t0) / 1_000_000;
        }
      } catch (Exception e) {
        // the database is still coming back
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(50)); // polling a condition, bounded above
    }
    return -1;
  }

  private static boolean moved(Map<String, Long> before, Map<String, Long> now, List<String> subs) {
    for (String s : subs) {
      if (now.getOrDefault(s, 0L) <= before.getOrDefault(s, 0L)) {
        return false;
      }
    }
    return true;
  }
}
