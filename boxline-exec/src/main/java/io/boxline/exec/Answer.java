package io.boxline.exec;

/**
 * A program's answer to one event: {@link Kind#OK} (done), {@link Kind#RETRY} (a failed attempt,
 * retried under the consumer's retry policy and dead-lettered after its last) or {@link Kind#DEAD}
 * (dead-lettered now). Everything that goes wrong around the program (it exits, hangs, answers
 * something else) is a {@code RETRY} whose reason says what happened.
 *
 * @param kind what to do with the event
 * @param reason why, for a retry or a dead letter; null for {@code OK}
 */
public record Answer(Kind kind, String reason) {
  /** What a program may answer. */
  public enum Kind {
    OK,
    RETRY,
    DEAD
  }

  private static final Answer OK = new Answer(Kind.OK, null);

  public Answer {
    if (kind == null) {
      throw new IllegalArgumentException("an answer needs a kind");
    }
  }

  public static Answer ok() {
    return OK;
  }

  public static Answer retry(String reason) {
    return new Answer(Kind.RETRY, reason);
  }

  public static Answer dead(String reason) {
    return new Answer(Kind.DEAD, reason);
  }

  /**
   * One line of a program's standard output: {@code ok}, {@code retry [reason]} or {@code dead
   * [reason]}; anything else is null (the program answered something the protocol does not have).
   */
  public static Answer parse(String line) {
    String s = line.strip();
    int space = s.indexOf(' ');
    String word = space < 0 ? s : s.substring(0, space);
    String reason = space < 0 ? null : s.substring(space + 1).strip();
    switch (word) {
      case "ok":
        return reason == null ? OK : null;
      case "retry":
        return retry(reason == null || reason.isEmpty() ? "the program said retry" : reason);
      case "dead":
        return dead(reason == null || reason.isEmpty() ? "the program said dead" : reason);
      default:
        return null;
    }
  }
}
