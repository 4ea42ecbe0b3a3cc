package io.boxline.cli;

/** A failure the command explains itself: printed as one line, exits with {@link #code}. */
public class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The exit code, one of {@link ExitCodes}. */
  public final int code;

  public CliException(int code, String message) {
    super(message);
    this.code = code;
  }
}
