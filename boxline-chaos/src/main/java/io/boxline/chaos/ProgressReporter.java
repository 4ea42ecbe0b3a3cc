package io.boxline.chaos;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Prints a progress line every few seconds (events committed and sequenced, each subscription's
 * position, faults so far by kind) and restarts children that died on their own.
 */
final class ProgressReporter {
  private final ChaosProbe probe;
  private final ChaosCluster cluster;
  private final FaultInjector faults;
  private final Duration every;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread;
  private final long startNanos = System.nanoTime();

  ProgressReporter(ChaosProbe probe, ChaosCluster cluster, FaultInjector faults, Duration every) {
    this.probe = probe;
    this.cluster = cluster;
    this.faults = faults;
    this.every = every;
    this.thread = new Thread(this::loop, "chaos-progress");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  void stopAndJoin() throws InterruptedException {
    stop.countDown();
    thread.join(every.toMillis() + 10_000);
  }

  private void loop() {
    try {
      while (!stop.await(every.toMillis(), TimeUnit.MILLISECONDS)) {
        cluster.restartDead();
        System.out.println(line());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  String line() {
    long secs = (System.nanoTime() - startNanos) / 1_000_000_000;
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("[%4ds] published %,d", secs, cluster.sum("events")));
    try {
      sb.append(String.format(" sequenced %,d |", probe.sequenced()));
      probe.positions().forEach((s, p) -> sb.append(String.format(" %s %,d", s, p)));
    } catch (Exception e) {
      sb.append(" (database unreachable: ").append(e.getClass().getSimpleName()).append(')');
    }
    Map<String, Integer> byKind = new TreeMap<>();
    for (FaultInjector.Injected i : faults.injected()) {
      byKind.merge(i.label(), 1, Integer::sum);
    }
    sb.append(" | faults ").append(faults.injected().size()).append(' ').append(byKind);
    return sb.toString();
  }
}
