package io.boxline.exec.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ProcessBuilder.Redirect;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** Starts a program's processes under its limits, and ends them with their children. */
final class Processes {
  private final DefaultProgram.Settings settings;

  Processes(DefaultProgram.Settings settings) {
    this.settings = settings;
  }

  /**
   * A new process: with {@code answers} its standard output is the caller's to read; else it goes
   * where standard error goes.
   */
  Process start(boolean answers) throws IOException {
    ProcessBuilder b =
        new ProcessBuilder("sh", "-c", settings.limits.ulimitPrefix() + settings.command);
    if (settings.directory != null) {
      b.directory(settings.directory.toFile());
    }
    b.environment().putAll(settings.environment);
    if (settings.errorLines == null) {
      b.redirectError(Redirect.INHERIT);
      if (!answers) {
        b.redirectOutput(Redirect.INHERIT);
      }
    } else if (!answers) {
      b.redirectErrorStream(true);
    }
    Process p = b.start();
    if (settings.errorLines != null) {
      Lines.pump(
          "boxline-exec-" + settings.name + "-err-" + p.pid(),
          answers ? p.getErrorStream() : p.getInputStream(),
          settings.errorLines,
          () -> {});
    }
    return p;
  }

  /**
   * Ends {@code p} now: its children and it, terminated and then, a second later, killed; returns
   * once they are gone (or after a further two seconds), so that nothing outlives a caller who
   * exits next.
   */
  void kill(Process p) {
    List<ProcessHandle> tree = p.descendants().collect(Collectors.toList());
    tree.forEach(ProcessHandle::destroy);
    p.destroy();
    try {
      if (!p.waitFor(1, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
      // A killed process lingers until the kernel has torn it down.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      p.waitFor(2, TimeUnit.SECONDS);
      for (ProcessHandle h : tree) {
        long left = deadline - System.nanoTime();
        if (left > 0 && h.isAlive()) {
          try {
            h.onExit().get(left, TimeUnit.NANOSECONDS);
          } catch (java.util.concurrent.ExecutionException
              | java.util.concurrent.TimeoutException e) {
            // reported by its caller's checks, if at all; nothing more can be done here
          }
        }
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Ends {@code p} gently: its input closes (a well-behaved program ends at end of input), and
   * whatever still runs after {@code timeout} is {@link #kill killed}.
   */
  void stop(Process p, OutputStream input, Duration timeout) {
    if (input != null) {
      try {
        input.close();
      } catch (IOException ignored) {
        // already gone
      }
    }
    try {
      if (p.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)
          && p.descendants().noneMatch(ProcessHandle::isAlive)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    kill(p);
  }
}
