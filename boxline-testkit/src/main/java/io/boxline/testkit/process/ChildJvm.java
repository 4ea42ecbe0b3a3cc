package io.boxline.testkit.process;

import io.boxline.testkit.Await;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM started from the running test JVM, for fault tests that kill real processes.
 *
 * <p>The child runs {@code mainClass} with this JVM's {@code java} executable and class path. Its
 * stdout and stderr go to one log file under {@code target/fault-logs/}. Its stdin stays a pipe
 * from this JVM: closing it ({@link #stop}) asks the child to shut down gracefully, and when this
 * JVM dies the pipe closes too, so a child built on {@link ChildMain} never outlives its parent.
 *
 * <p>{@link #kill9()} is SIGKILL (no shutdown hooks, no finally blocks, sockets closed by the
 * kernel); {@link #signal(String)} sends any other signal, e.g. {@code STOP} / {@code CONT}.
 */
public final class ChildJvm implements AutoCloseable {
  /** Environment variable carrying the database password to a child (kept off the command line). */
  public static final String PASSWORD_ENV = "BOXLINE_CHILD_PG_PASSWORD";

  private static final Duration EXIT_WAIT = Duration.ofSeconds(10);

  private final String name;
  private final Process process;
  private final Path log;
  private final OutputStream stdin;

  private ChildJvm(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.stdin = process.getOutputStream();
  }

  /** Starts {@code mainClass} in a new JVM with {@code args}; see {@link #start(Spec)}. */
  public static ChildJvm start(String name, Class<?> mainClass, String... args) {
    return start(new Spec(name, mainClass).args(args));
  }

  /** Starts a child JVM as described by {@code spec}. */
  public static ChildJvm start(Spec spec) {
    Path dir = spec.logDirectory == null ? logDirectory() : spec.logDirectory;
    Path log = dir.resolve(spec.name + "-" + System.currentTimeMillis() + ".log");
    List<String> command = new ArrayList<>();
    command.add(javaExecutable());
    command.add("-Xmx256m");
    command.add("-XX:+UseSerialGC");
    command.add("-Xss512k");
    command.addAll(spec.jvmArgs);
    command.add("-cp");
    command.add(classPath());
    command.add(spec.mainClass.getName());
    command.addAll(spec.args);
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    pb.environment().putAll(spec.environment);
    try {
      Files.writeString(log, "# " + String.join(" ", redactClassPath(command)) + "\n");
      return new ChildJvm(spec.name, pb.start(), log);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start child JVM " + spec.name, e);
    }
  }

  private static List<String> redactClassPath(List<String> command) {
    List<String> shown = new ArrayList<>(command);
    int cp = shown.indexOf("-cp");
    if (cp >= 0 && cp + 1 < shown.size()) {
      shown.set(cp + 1, "<test class path>");
    }
    return shown;
  }

  /** {@code target/fault-logs} of the module under test (created if missing). */
  public static Path logDirectory() {
    Path dir = Path.of(System.getProperty("basedir", ".")).resolve("target").resolve("fault-logs");
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return dir;
  }

  /** This program's class path (exec:java runs it in a URLClassLoader of its own). */
  private static String classPath() {
    if (ChildJvm.class.getClassLoader() instanceof URLClassLoader loader) {
      List<String> parts = new ArrayList<>();
      for (URL u : loader.getURLs()) {
        try {
          parts.add(Path.of(u.toURI()).toString());
        } catch (Exception e) {
          parts.add(u.getPath());
        }
      }
      return String.join(File.pathSeparator, parts);
    }
    return System.getProperty("java.class.path");
  }

  private static String javaExecutable() {
    return ProcessHandle.current()
        .info()
        .command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public Process process() {
    return process;
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The child's exit code; fails when it is still running. */
  public int exitCode() {
    return process.exitValue();
  }

  /** SIGKILL, then waits (bounded) until the process is gone. Does nothing when already dead. */
  public void kill9() {
    if (!process.isAlive()) {
      return;
    }
    process.destroyForcibly(); // SIGKILL on Linux and macOS
    waitForExit(EXIT_WAIT);
  }

  /** Sends a signal by name ({@code STOP}, {@code CONT}, {@code TERM}, {@code KILL} …). */
  public void signal(String signal) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(pid()))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
        throw new IllegalStateException("kill -" + signal + " " + pid() + " did not return");
      }
      if (kill.exitValue() != 0) {
        String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        throw new IllegalStateException(
            "kill -" + signal + " " + pid() + " failed (" + kill.exitValue() + "): " + out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling " + name, e);
    }
  }

  /** SIGSTOP: freezes the child (its sockets stay open). */
  public void pause() {
    signal("STOP");
  }

  /** SIGCONT: resumes a paused child. */
  public void resume() {
    signal("CONT");
  }

  /**
   * Graceful stop: closes the child's stdin (a {@link ChildMain} then shuts down cleanly and exits)
   * and waits up to {@code timeout}; kills it after that. Returns the exit code, or -1 when it had
   * to be killed.
   */
  public int stop(Duration timeout) {
    closeStdin();
    if (waitForExit(timeout)) {
      return process.exitValue();
    }
    kill9();
    return -1;
  }

  /** Waits up to {@code timeout} for the process to end; true when it ended. */
  public boolean waitForExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void closeStdin() {
    try {
      stdin.close();
    } catch (IOException ignored) {
      // already closed or the child is gone
    }
  }

  /** The child's output so far. */
  public String output() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "<cannot read " + log + ": " + e + ">";
    }
  }

  /** The last {@code lines} lines of the child's output, for failure messages. */
  public String tail(int lines) {
    List<String> all = output().lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  /**
   * Waits (bounded) until the child printed a line containing {@code text}; fails early, with its
   * output, when the child exits first.
   */
  public void awaitOutput(Duration max, String text) {
    Await.until(
        max,
        name + " prints '" + text + "' (log " + log + ")",
        () -> {
          if (output().contains(text)) {
            return true;
          }
          if (!process.isAlive()) {
            throw new AssertionError(
                name
                    + " exited with "
                    + process.exitValue()
                    + " before printing '"
                    + text
                    + "'; its output:\n"
                    + tail(60));
          }
          return false;
        });
  }

  /** Kills the child if it still runs. */
  @Override
  public void close() {
    kill9();
    closeStdin();
  }

  @Override
  public String toString() {
    return name + "(pid " + process.pid() + (process.isAlive() ? ", running" : ", exited") + ")";
  }

  /** What to start. */
  public static final class Spec {
    private final String name;
    private final Class<?> mainClass;
    private final List<String> args = new ArrayList<>();
    private final List<String> jvmArgs = new ArrayList<>();
    private final Map<String, String> environment = new java.util.LinkedHashMap<>();
    private Path logDirectory;

    public Spec(String name, Class<?> mainClass) {
      if (!name.matches("[A-Za-z0-9._-]{1,64}")) {
        throw new IllegalArgumentException("child name must be a plain file name: " + name);
      }
      this.name = name;
      this.mainClass = mainClass;
    }

    public Spec args(String... values) {
      args.addAll(List.of(values));
      return this;
    }

    public Spec jvmArgs(String... values) {
      jvmArgs.addAll(List.of(values));
      return this;
    }

    public Spec env(String key, String value) {
      environment.put(key, value);
      return this;
    }

    /** Where the child's log goes (default: {@link ChildJvm#logDirectory()}). */
    public Spec logDirectory(Path dir) {
      logDirectory = dir;
      return this;
    }
  }
}
