package io.boxline.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How busy the (shared) machine was during a measurement: machine-wide CPU use from /proc/stat,
 * this JVM's own CPU use, and the 1-minute load average at the end. Linux only; empty elsewhere.
 */
final class Noise {
  private final long busy;
  private final long total;
  private final long ownCpuNanos;
  private final long wallNanos;

  /** What happened before the start (a wait for a quiet machine), appended to {@link #since}. */
  private final String note;

  private Noise(long busy, long total, long ownCpuNanos, long wallNanos, String note) {
    this.busy = busy;
    this.total = total;
    this.ownCpuNanos = ownCpuNanos;
    this.wallNanos = wallNanos;
    this.note = note;
  }

  static Noise start(String note) {
    long[] cpu = cpu();
    return new Noise(cpu[0], cpu[1], jvmCpu(), System.nanoTime(), note);
  }

  /** "machine 97% busy (this JVM 41%), load 8.1" for the time since {@link #start()}. */
  String since() {
    long[] cpu = cpu();
    if (cpu[1] <= total) {
      return "";
    }
    double machine = 100.0 * (cpu[0] - busy) / (cpu[1] - total);
    int cores = Runtime.getRuntime().availableProcessors();
    double own =
        100.0 * (jvmCpu() - ownCpuNanos) / ((System.nanoTime() - wallNanos) * (double) cores);
    return Stats.f("machine %.0f%% busy (bench JVM %.0f%%), load %s", machine, own, loadAverages())
        + (note.isEmpty() ? "" : "; " + note);
  }

  /**
   * Waits until the machine's CPU use over one second is at most {@code maxBusyPercent}, for at
   * most {@code maxSeconds}; returns a note on what happened ("" when it was quiet at once).
   */
  static String awaitQuiet(int maxSeconds, double maxBusyPercent) throws InterruptedException {
    if (maxSeconds <= 0) {
      return "";
    }
    long deadline = System.nanoTime() + maxSeconds * 1_000_000_000L;
    long waited = System.nanoTime();
    while (true) {
      long[] a = cpu();
      Thread.sleep(1000);
      long[] b = cpu();
      if (b[1] <= a[1]) {
        return "";
      }
      double busy = 100.0 * (b[0] - a[0]) / (b[1] - a[1]);
      if (busy <= maxBusyPercent) {
        long s = (System.nanoTime() - waited) / 1_000_000_000L;
        return s <= 1 ? "" : "waited " + s + " s for a quiet machine";
      }
      if (System.nanoTime() > deadline) {
        return Stats.f("machine still %.0f%% busy after %d s; ran anyway", busy, maxSeconds);
      }
    }
  }

  /** "1-, 5-, 15-minute load average" from /proc/loadavg. */
  static String loadAverages() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }

  /** {busy jiffies, total jiffies} of all CPUs. */
  private static long[] cpu() {
    try {
      String line = Files.readAllLines(Path.of("/proc/stat")).get(0);
      String[] f = line.trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return new long[] {0, 0};
    }
  }

  /** This JVM's CPU time so far, in nanoseconds. */
  static long jvmCpu() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos()).orElse(0L);
  }
}
