package io.boxline.chaos;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One child JVM of the chaos run. Its output goes to a log file; its stdin stays a pipe from this
 * JVM so that closing it asks for a graceful stop, and so that a child never outlives the parent
 * (see {@link ChildArgs}). {@link #kill9()} is SIGKILL, {@link #pause()} / {@link #resume()} are
 * SIGSTOP / SIGCONT.
 */
final class ChildProcess {
  private final String name;
  private final Process process;
  private final Path log;

  private ChildProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  static ChildProcess start(
      String name, Class<?> main, Path logDir, List<String> args, String envName, String envValue) {
    List<String> cmd = new ArrayList<>();
    cmd.add(
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    // Small heaps and serial GC: up to a dozen of these share two cores.
    cmd.addAll(List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"));
    cmd.add("-cp");
    cmd.add(classPath());
    cmd.add(main.getName());
    cmd.addAll(args);
    Path file = logDir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(file.toFile()));
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    pb.environment().put(envName, envValue);
    try {
      return new ChildProcess(name, pb.start(), file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name, e);
    }
  }

  /** This program's class path (exec:java runs it in a URLClassLoader of its own). */
  static String classPath() {
    ClassLoader cl = ChildProcess.class.getClassLoader();
    if (cl instanceof URLClassLoader ucl) {
      List<String> parts = new ArrayList<>();
      for (URL u : ucl.getURLs()) {
        try {
          parts.add(new File(u.toURI()).getPath());
        } catch (Exception e) {
          parts.add(u.getPath());
        }
      }
      return String.join(File.pathSeparator, parts);
    }
    return System.getProperty("java.class.path");
  }

  String name() {
    return name;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL, then a bounded wait until the process is gone. */
  void kill9() {
    process.destroyForcibly();
    waitForExit(Duration.ofSeconds(15));
  }

  void pause() {
    signal("STOP");
  }

  void resume() {
    signal("CONT");
  }

  /** Closes stdin (the child stops cleanly), waits up to {@code timeout}, then kills. */
  boolean stop(Duration timeout) {
    try {
      OutputStream in = process.getOutputStream();
      in.close();
    } catch (IOException ignored) {
      // already gone
    }
    if (waitForExit(timeout)) {
      return true;
    }
    kill9();
    return false;
  }

  boolean waitForExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** True once the child printed {@code text} (its log is small; read on demand). */
  boolean printed(String text) {
    try {
      return Files.readString(log).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "<" + e + ">";
    }
  }

  private void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return name + "(pid " + process.pid() + ")";
  }
}
