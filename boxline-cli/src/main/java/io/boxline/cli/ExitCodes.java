package io.boxline.cli;

/** What {@code boxline} exits with; the README's "Command line" section lists them too. */
final class ExitCodes {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int USAGE = 2;
  static final int NOT_FOUND = 3;
  static final int REFUSED = 4;
  static final int CANNOT_CONNECT = 5;

  private ExitCodes() {}
}
