package io.boxline.exec;

import java.time.Duration;

/**
 * Resource limits a program runs under, set with the shell's {@code ulimit} before it starts and
 * inherited by everything it starts. A limit of 0 (or {@link Duration#ZERO}) is no limit.
 *
 * @param memoryBytes the largest virtual memory (address space) per process; rounded down to KiB.
 *     Runtimes that reserve much address space up front (a JVM) need far more than they use
 * @param cpuTime the CPU time per process; past it the kernel ends the process (SIGXCPU), which
 *     then restarts with backoff like any crash
 * @param openFiles the most open files and sockets per process
 */
public record ProgramLimits(long memoryBytes, Duration cpuTime, int openFiles) {
  /** No limits: the program inherits the caller's. */
  public static final ProgramLimits NONE = new ProgramLimits(0, Duration.ZERO, 0);

  public ProgramLimits {
    if (memoryBytes < 0) {
      throw new IllegalArgumentException(
          "memoryBytes must be 0 (no limit) or more, got " + memoryBytes);
    }
    if (memoryBytes > 0 && memoryBytes < 1024 * 1024) {
      throw new IllegalArgumentException(
          "memoryBytes of " + memoryBytes + " is too small for any program; give at least 1 MiB");
    }
    if (cpuTime == null || cpuTime.isNegative()) {
      throw new IllegalArgumentException("cpuTime must be zero (no limit) or positive");
    }
    if (!cpuTime.isZero() && cpuTime.toSeconds() < 1) {
      throw new IllegalArgumentException("cpuTime must be at least 1 s, got " + cpuTime);
    }
    if (openFiles < 0 || (openFiles > 0 && openFiles < 8)) {
      throw new IllegalArgumentException(
          "openFiles must be 0 (no limit) or at least 8 (standard streams and a few files), got "
              + openFiles);
    }
  }

  /** The shell commands that set these limits, each followed by "; ", or "" without limits. */
  public String ulimitPrefix() {
    StringBuilder s = new StringBuilder();
    if (memoryBytes > 0) {
      s.append("ulimit -v ").append(memoryBytes / 1024).append(" && ");
    }
    if (!cpuTime.isZero()) {
      s.append("ulimit -t ").append(cpuTime.toSeconds()).append(" && ");
    }
    if (openFiles > 0) {
      s.append("ulimit -n ").append(openFiles).append(" && ");
    }
    return s.toString();
  }
}
