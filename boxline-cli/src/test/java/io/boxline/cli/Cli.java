package io.boxline.cli;

import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Runs the real launcher script ({@code src/main/dist/boxline}) in a child process, with the
 * module's classes on {@code BOXLINE_CLI_CLASSPATH} (the tests run before the jar is packaged), and
 * collects its output.
 */
final class Cli {
  static final Path LAUNCHER = Path.of(System.getProperty("boxline.cli.launcher"));

  private final Map<String, String> env;

  Cli(Map<String, String> env) {
    this.env = env;
  }

  static String classpath() {
    try {
      return System.getProperty("boxline.cli.classes")
          + ":"
          + Files.readString(Path.of(System.getProperty("boxline.cli.classpath.file"))).strip();
    } catch (IOException e) {
      throw new IllegalStateException("run the tests through Maven (it writes the classpath)", e);
    }
  }

  /** A finished run. */
  record Result(int exit, String out, String err) {
    List<String> outLines() {
      return out.isEmpty() ? List.of() : List.of(out.split("\n"));
    }
  }

  /** Runs {@code boxline args…} with {@code stdin} as standard input; waits up to 60 s. */
  Result input(String stdin, String... args) {
    Running r = start(args);
    r.write(stdin == null ? "" : stdin);
    r.closeInput();
    return r.await(Duration.ofSeconds(60));
  }

  Result run(String... args) {
    return input(null, args);
  }

  Running start(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add("sh");
    cmd.add(LAUNCHER.toString());
    cmd.addAll(List.of(args));
    return startCommand(cmd);
  }

  /** Any command with the CLI's environment (e.g. {@code script} for a pseudo-terminal). */
  Running startCommand(List<String> cmd) {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().putAll(env);
    pb.environment().put("BOXLINE_CLI_CLASSPATH", classpath());
    try {
      return new Running(pb.start());
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + cmd, e);
    }
  }

  /** A child still running: its output so far, its input, signals. */
  static final class Running {
    final Process process;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Thread outPump;
    private final Thread errPump;

    Running(Process p) {
      this.process = p;
      outPump = pump(p.getInputStream(), out);
      errPump = pump(p.getErrorStream(), err);
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream to) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[4096];
                try {
                  int n;
                  while ((n = in.read(buf)) >= 0) {
                    synchronized (to) {
                      to.write(buf, 0, n);
                    }
                  }
                } catch (IOException ignored) {
                  // the process ended
                }
              },
              "cli-output");
      t.setDaemon(true);
      t.start();
      return t;
    }

    String out() {
      synchronized (out) {
        return out.toString(StandardCharsets.UTF_8);
      }
    }

    String err() {
      synchronized (err) {
        return err.toString(StandardCharsets.UTF_8);
      }
    }

    void write(String text) {
      try {
        OutputStream in = process.getOutputStream();
        in.write(text.getBytes(StandardCharsets.UTF_8));
        in.flush();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }

    void closeInput() {
      try {
        process.getOutputStream().close();
      } catch (IOException ignored) {
        // gone already
      }
    }

    /** Waits (bounded) until standard output satisfies {@code done}. */
    void awaitOut(Duration max, String what, Predicate<String> done) {
      awaitText(max, what, this::out, done);
    }

    /** Waits (bounded) until standard error satisfies {@code done}. */
    void awaitErr(Duration max, String what, Predicate<String> done) {
      awaitText(max, what, this::err, done);
    }

    private void awaitText(
        Duration max,
        String what,
        java.util.function.Supplier<String> text,
        Predicate<String> done) {
      long end = System.nanoTime() + max.toNanos();
      while (!done.test(text.get())) {
        if (!process.isAlive() && !done.test(text.get())) {
          fail(
              "the command ended (exit "
                  + process.exitValue()
                  + ") before "
                  + what
                  + "; out:\n"
                  + out()
                  + "\nerr:\n"
                  + err());
        }
        if (System.nanoTime() > end) {
          fail(
              "timed out after "
                  + max
                  + " waiting for "
                  + what
                  + "; out:\n"
                  + out()
                  + "\nerr:\n"
                  + err());
        }
        try {
          Thread.sleep(20); // polling a condition with a deadline
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          fail("interrupted");
        }
      }
    }

    void signal(String name) {
      try {
        new ProcessBuilder("kill", "-" + name, Long.toString(javaPid()))
            .inheritIO()
            .start()
            .waitFor(10, TimeUnit.SECONDS);
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }

    /** The launcher execs java, so the process is the JVM itself. */
    private long javaPid() {
      return process.pid();
    }

    Result await(Duration max) {
      try {
        if (!process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly();
          fail("the command did not end within " + max + "; out:\n" + out() + "\nerr:\n" + err());
        }
        outPump.join(5000);
        errPump.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted");
      }
      return new Result(process.exitValue(), out(), err());
    }
  }
}
