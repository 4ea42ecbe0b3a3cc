package io.boxline.exec;

import io.boxline.BoxlineException;

/**
 * A failed attempt at an event: the program answered {@code retry}, exited, hung or answered
 * something else. The consumer retries the event under its retry policy.
 */
public final class ProgramException extends BoxlineException {
  private static final long serialVersionUID = 1L;

  public ProgramException(String message) {
    super(message);
  }
}
