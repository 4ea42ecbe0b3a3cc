package io.boxline.cli;

/** A failure the command explains itself: printed as one line, exits with {@link #code}. */
final class CliException extends RuntimeException {
  final int code;

  CliException(int code, String message) {
    super(message);
    this.code = code;
  }
}
