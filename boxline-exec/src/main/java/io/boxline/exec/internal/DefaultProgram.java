package io.boxline.exec.internal;

import io.boxline.Event;
import io.boxline.exec.Answer;
import io.boxline.exec.Program;
import io.boxline.exec.ProgramLimits;
import io.boxline.exec.ProgramStats;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** {@link Program}: the long-running process with its restart backoff, or a process per event. */
public final class DefaultProgram implements Program {
  private static final System.Logger LOG = System.getLogger("io.boxline.exec");

  /** The reader's marker for the end of the program's output (compared by identity). */
  private static final String EOF = new String("<end of output>");

  /** Answers kept that nobody asked for yet; past this a talkative program's lines are dropped. */
  private static final int MAX_QUEUED_LINES = 1024;

  private final Settings settings;
  private final Processes processes;
  private final Object asking = new Object(); // one event at a time
  private final Object lock = new Object(); // the process, the backoff and the counters below
  private Running running;
  private Process perEventProcess;

  /** Every process started and perhaps alive: {@link #close} ends what another thread left. */
  private final java.util.Set<Process> started = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private int crashesInRow;
  private long restartAtNanos;
  private Instant restartAt;
  private String lastProblem;
  private Instant lastProblemAt;
  private boolean closed;
  private final AtomicLong starts = new AtomicLong();
  private final AtomicLong crashes = new AtomicLong();
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();
  private final AtomicLong dead = new AtomicLong();
  private final AtomicLong invalid = new AtomicLong();

  /** A started long-running process: its input, and the lines it answered. */
  private record Running(Process process, OutputStream input, BlockingQueue<String> replies) {}

  private DefaultProgram(Settings settings) {
    this.settings = settings;
    this.processes = new Processes(settings);
  }

  @Override
  public String command() {
    return settings.command;
  }

  @Override
  public Answer ask(Event event) {
    String line = EventLine.json(event);
    synchronized (asking) {
      Answer a = settings.perEvent ? once(line) : overLine(line);
      switch (a.kind()) {
        case OK -> ok.incrementAndGet();
        case DEAD -> dead.incrementAndGet();
        default -> retried.incrementAndGet();
      }
      return a;
    }
  }

  private Answer overLine(String line) {
    Running r;
    try {
      r = runningProcess();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Answer.retry("interrupted while the program waited to start again");
    } catch (IOException e) {
      String why = "cannot start '" + settings.command + "': " + e.getMessage();
      problem(why, true);
      return Answer.retry(why);
    }
    if (r == null) {
      return Answer.retry("the program is stopping");
    }
    try {
      r.input.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      r.input.flush();
    } catch (IOException e) {
      return crashed(r, "the program " + exited(r.process) + " before it read the event");
    }
    String reply;
    try {
      reply = r.replies.poll(settings.replyTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      // Its answer to this event would be taken for the next one's: it starts again.
      stop(r);
      return Answer.retry("interrupted while the program handled the event");
    }
    if (reply == null) {
      return crashed(
          r, "no answer within the reply timeout of " + settings.replyTimeout + "; it was stopped");
    }
    if (reply == EOF) {
      return crashed(r, "the program " + exited(r.process) + " without answering");
    }
    Answer a = Answer.parse(reply);
    if (a == null) {
      invalid.incrementAndGet();
      return crashed(
          r,
          "the program answered '"
              + cut(reply)
              + "', not ok, retry [reason] or dead [reason] (logs belong on standard error); it"
              + " was stopped, since its later lines could not be matched to events");
    }
    synchronized (lock) {
      crashesInRow = 0;
    }
    return a;
  }

  /** The running process, started when there is none, after the backoff of a crash. */
  private Running runningProcess() throws IOException, InterruptedException {
    synchronized (lock) {
      if (running != null && !running.process.isAlive()) {
        crashedLocked(running, "the program " + exited(running.process) + " between events");
      }
      while (running == null && !closed) {
        long wait = restartAtNanos - System.nanoTime();
        if (crashesInRow == 0 || wait <= 0) {
          break;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, wait);
      }
      if (closed) {
        return null;
      }
      if (running == null) {
        Process p = processes.start(true);
        track(p);
        starts.incrementAndGet();
        restartAt = null;
        BlockingQueue<String> replies = new LinkedBlockingQueue<>(MAX_QUEUED_LINES);
        Lines.pump(
            "boxline-exec-" + settings.name + "-out-" + p.pid(),
            p.getInputStream(),
            replies::offer,
            () -> {
              replies.clear(); // unasked lines go; the end must be seen
              replies.offer(EOF);
            });
        running = new Running(p, p.getOutputStream(), replies);
      }
      return running;
    }
  }

  private Answer crashed(Running r, String why) {
    synchronized (lock) {
      if (closed) {
        running = null;
        return Answer.retry("the program was stopped");
      }
      crashedLocked(r, why);
    }
    return Answer.retry(why);
  }

  private void crashedLocked(Running r, String why) {
    if (running == r) {
      running = null;
    }
    processes.kill(r.process);
    crashes.incrementAndGet();
    crashesInRow++;
    Duration backoff = backoff(crashesInRow);
    restartAtNanos = System.nanoTime() + backoff.toNanos();
    restartAt = Instant.now().plus(backoff);
    problemLocked(why + "; it starts again in " + backoff.toMillis() + " ms");
  }

  /** {@code initial × 2^(n−1)}, at most the maximum. */
  Duration backoff(int crashesInRow) {
    Duration d = settings.restartBackoff.multipliedBy(1L << Math.min(crashesInRow - 1, 30));
    return d.compareTo(settings.maxRestartBackoff) > 0 ? settings.maxRestartBackoff : d;
  }

  private void problem(String why, boolean crash) {
    synchronized (lock) {
      if (crash) {
        crashes.incrementAndGet();
      }
      problemLocked(why);
    }
  }

  private void problemLocked(String why) {
    lastProblem = why;
    lastProblemAt = Instant.now();
    LOG.log(Level.WARNING, "program " + settings.name + ": " + why);
  }

  /** A process for this event alone: its exit status answers. */
  private Answer once(String line) {
    Process p;
    synchronized (lock) {
      if (closed) {
        return Answer.retry("the program is stopping");
      }
      try {
        p = processes.start(false);
        track(p);
      } catch (IOException e) {
        String why = "cannot start '" + settings.command + "': " + e.getMessage();
        problemLocked(why);
        return Answer.retry(why);
      }
      starts.incrementAndGet();
      perEventProcess = p;
    }
    try (OutputStream in = p.getOutputStream()) {
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // it did not read its input: its exit status still answers
    }
    try {
      if (!p.waitFor(settings.replyTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
        processes.kill(p);
        String why = "the program ran past the reply timeout of " + settings.replyTimeout;
        problem(why, true);
        return Answer.retry(why);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      processes.kill(p);
      return Answer.retry("interrupted while the program handled the event");
    } finally {
      synchronized (lock) {
        perEventProcess = null;
      }
    }
    int code = p.exitValue();
    if (code == 0) {
      return Answer.ok();
    }
    if (code == 65) {
      return Answer.dead("the program exited with status 65 (EX_DATAERR)");
    }
    String why = "the program exited with status " + code;
    problem(why, false);
    return Answer.retry(why);
  }

  private static String exited(Process p) {
    try {
      return p.waitFor(2, TimeUnit.SECONDS)
          ? "exited with status " + p.exitValue()
          : "closed its output";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "ended";
    }
  }

  private static String cut(String s) {
    String one = s.replaceAll("\\p{Cntrl}", "?");
    return one.length() > 200 ? one.substring(0, 200) + "…" : one;
  }

  /** Ends {@code r} without counting a crash (an interrupt, or a stop). */
  private void stop(Running r) {
    synchronized (lock) {
      if (running == r) {
        running = null;
      }
    }
    processes.stop(r.process, r.input, settings.stopTimeout);
  }

  @Override
  public ProgramStats stats() {
    synchronized (lock) {
      ProgramStats.State state;
      long pid = 0;
      if (closed) {
        state = ProgramStats.State.STOPPED;
      } else if (running != null && running.process.isAlive()) {
        state = ProgramStats.State.RUNNING;
        pid = running.process.pid();
      } else if (perEventProcess != null) {
        state = ProgramStats.State.RUNNING;
        pid = perEventProcess.pid();
      } else if (restartAt != null && running == null && crashesInRow > 0) {
        state = ProgramStats.State.BACKING_OFF;
      } else {
        state = ProgramStats.State.IDLE;
      }
      return new ProgramStats(
          state,
          pid,
          starts.get(),
          crashes.get(),
          ok.get(),
          retried.get(),
          dead.get(),
          invalid.get(),
          lastProblem,
          lastProblemAt,
          state == ProgramStats.State.BACKING_OFF ? restartAt : null);
    }
  }

  @Override
  public void close() {
    Running r;
    Process p;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      lock.notifyAll(); // a wait for the backoff ends now
      r = running;
      running = null;
      p = perEventProcess;
    }
    if (r != null) {
      processes.stop(r.process, r.input, settings.stopTimeout);
    }
    if (p != null) {
      processes.stop(p, null, settings.stopTimeout);
    }
    // A crash or an interrupt may be ending one in another thread right now; it ends before this
    // returns all the same.
    for (Process left : started) {
      if (left.isAlive()) {
        processes.kill(left);
      }
    }
  }

  private void track(Process p) {
    started.add(p);
    p.onExit().thenRun(() -> started.remove(p));
  }

  @Override
  public String toString() {
    return "Program[" + settings.name + ": " + settings.command + "]";
  }

  /** The builder's settings, checked. */
  static final class Settings {
    String command;
    String name;
    Path directory;
    Map<String, String> environment = Map.of();
    boolean perEvent;
    Duration replyTimeout = Duration.ofSeconds(60);
    Duration restartBackoff = Duration.ofSeconds(1);
    Duration maxRestartBackoff = Duration.ofMinutes(1);
    Duration stopTimeout = Duration.ofSeconds(5);
    ProgramLimits limits = ProgramLimits.NONE;
    Consumer<String> errorLines;
  }

  /** {@link Program.Builder}. */
  public static final class Builder implements Program.Builder {
    private final Settings s = new Settings();

    public Builder(String command) {
      if (command == null || command.isBlank()) {
        throw new IllegalArgumentException("a program needs a command, e.g. 'python3 handle.py'");
      }
      s.command = command;
      s.name = command.strip().split("\\s+")[0];
    }

    @Override
    public Builder name(String name) {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("a program's name must not be empty");
      }
      s.name = name;
      return this;
    }

    @Override
    public Builder directory(Path directory) {
      s.directory = directory;
      return this;
    }

    @Override
    public Builder environment(Map<String, String> variables) {
      s.environment = Map.copyOf(variables);
      return this;
    }

    @Override
    public Builder perEvent(boolean perEvent) {
      s.perEvent = perEvent;
      return this;
    }

    @Override
    public Builder replyTimeout(Duration timeout) {
      s.replyTimeout = positive("replyTimeout", timeout);
      return this;
    }

    @Override
    public Builder restartBackoff(Duration initial, Duration max) {
      positive("restartBackoff", initial);
      positive("maxRestartBackoff", max);
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "the longest restart backoff ("
                + max
                + ") is shorter than the first ("
                + initial
                + ")");
      }
      s.restartBackoff = initial;
      s.maxRestartBackoff = max;
      return this;
    }

    @Override
    public Builder stopTimeout(Duration timeout) {
      s.stopTimeout = positive("stopTimeout", timeout);
      return this;
    }

    @Override
    public Builder limits(ProgramLimits limits) {
      s.limits = limits == null ? ProgramLimits.NONE : limits;
      return this;
    }

    @Override
    public Builder errorLines(Consumer<String> lines) {
      s.errorLines = lines;
      return this;
    }

    @Override
    public Program build() {
      if (s.directory != null && !s.directory.toFile().isDirectory()) {
        throw new IllegalArgumentException(
            "the program's directory " + s.directory + " is not a directory");
      }
      return new DefaultProgram(s);
    }

    private static Duration positive(String what, Duration d) {
      if (d == null || d.isZero() || d.isNegative()) {
        throw new IllegalArgumentException(what + " must be positive, got " + d);
      }
      return d;
    }
  }
}
