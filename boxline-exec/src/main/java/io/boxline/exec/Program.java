package io.boxline.exec;

import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.HandlerDecision;
import io.boxline.exec.internal.DefaultProgram;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A program in any language that handles events, as an {@link EventHandler}: each event goes to it
 * as one JSON line, and it answers {@code ok}, {@code retry [reason]} or {@code dead [reason]}.
 *
 * <ul>
 *   <li><b>One long-running process</b> (default): started at the first event; each event is one
 *       line on its standard input, each answer one line on its standard output (logs belong on
 *       standard error). A process that exits, gives no answer within {@link Builder#replyTimeout}
 *       or answers anything else fails that attempt and is stopped; the next one starts after a
 *       backoff that doubles with each crash in a row, from {@link Builder#restartBackoff} up to
 *       its maximum, and resets at the first good answer.
 *   <li><b>{@link Builder#perEvent}</b>: a process per event, the event on its standard input; exit
 *       status 0 is ok, 65 (EX_DATAERR) is dead, anything else a failed attempt.
 * </ul>
 *
 * <p>The command runs under {@code sh -c}, in {@link Builder#directory} with the caller's
 * environment plus {@link Builder#environment}, under {@link Builder#limits}. One {@code Program}
 * handles one event at a time, so a consumer using it as its handler should have a concurrency of
 * 1; run several programs as several group members for more. {@link #close()} ends the process: its
 * standard input closes, and after {@link Builder#stopTimeout} it and its children are terminated,
 * then killed.
 */
public interface Program extends EventHandler, AutoCloseable {
  /** A program running {@code command} with {@code sh -c}. */
  static Builder builder(String command) {
    return new DefaultProgram.Builder(command);
  }

  /**
   * Hands {@code event} to the program and returns its answer; never throws for the program's
   * faults.
   */
  Answer ask(Event event);

  /**
   * {@link #ask} as a handler: returns on {@code ok}, throws {@link HandlerDecision#deadLetter} on
   * {@code dead} and {@link ProgramException} on anything else.
   */
  @Override
  default void handle(Event event) {
    Answer a = ask(event);
    switch (a.kind()) {
      case OK:
        return;
      case DEAD:
        throw HandlerDecision.deadLetter(a.reason());
      default:
        throw new ProgramException(a.reason());
    }
  }

  /** The command as given. */
  String command();

  ProgramStats stats();

  /** Stops the process (bounded by the stop timeout, then terminated); safe to call twice. */
  @Override
  void close();

  /** Configures a {@link Program}. */
  interface Builder {
    /** The name in thread names and log lines (default: the command's first word). */
    Builder name(String name);

    /** The working directory (default: the caller's). */
    Builder directory(Path directory);

    /** Variables added to (or replacing those of) the caller's environment. */
    Builder environment(Map<String, String> variables);

    /** A process per event instead of one long-running process (default false). */
    Builder perEvent(boolean perEvent);

    /** How long the program may take to answer one event (default 60 s). */
    Builder replyTimeout(Duration timeout);

    /**
     * The wait before a crashed program starts again, doubling with each crash in a row up to
     * {@code max} (default 1 s up to 1 min).
     */
    Builder restartBackoff(Duration initial, Duration max);

    /** How long {@link #close()} waits for the process to end at end of input (default 5 s). */
    Builder stopTimeout(Duration timeout);

    /** Resource limits (default none). */
    Builder limits(ProgramLimits limits);

    /**
     * Where the program's standard error goes, line by line (default: the caller's standard error,
     * unchanged). A per-event program's standard output goes there too.
     */
    Builder errorLines(Consumer<String> lines);

    /** Checks the settings; nothing starts until the first event. */
    Program build();
  }
}
