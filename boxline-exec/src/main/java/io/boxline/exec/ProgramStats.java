package io.boxline.exec;

import java.time.Instant;

/**
 * What a {@link Program} has done so far, for metrics and the server's console.
 *
 * @param state what it is doing now
 * @param pid the running process's id, or 0 when none runs
 * @param starts processes started (one per event with {@code perEvent})
 * @param crashes processes that ended without being asked to: they exited, were stopped after no
 *     answer within the reply timeout, or after an answer the protocol does not have
 * @param ok events answered {@code ok}
 * @param retried events whose attempt failed (a {@code retry} answer or any failure around it)
 * @param dead events answered {@code dead}
 * @param invalid answers that were none of {@code ok}, {@code retry} and {@code dead}
 * @param lastProblem the newest failure around the program (not a {@code retry} it chose), or null
 * @param lastProblemAt when it happened, or null
 * @param restartAt when a crashed program starts again ({@link State#BACKING_OFF}), or null
 */
public record ProgramStats(
    State state,
    long pid,
    long starts,
    long crashes,
    long ok,
    long retried,
    long dead,
    long invalid,
    String lastProblem,
    Instant lastProblemAt,
    Instant restartAt) {
  /** A program's state. */
  public enum State {
    /** Not started yet: a long-running program starts at the first event. */
    IDLE,
    RUNNING,
    /** It crashed and waits for its backoff before it starts again. */
    BACKING_OFF,
    STOPPED
  }
}
