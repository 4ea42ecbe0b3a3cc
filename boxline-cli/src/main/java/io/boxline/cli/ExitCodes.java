package io.boxline.cli;

/** What {@code boxline} exits with; the README's "Command line" section lists them too. */
public final class ExitCodes {
  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int USAGE = 2;
  public static final int NOT_FOUND = 3;
  public static final int REFUSED = 4;
  public static final int CANNOT_CONNECT = 5;

  private ExitCodes() {}
}
