package io.boxline.cli;

import io.boxline.BusySubscriptionException;
import io.boxline.GroupFullException;
import io.boxline.NotFoundException;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Turns every failure into one line on standard error, {@code boxline: error: …}, that names the
 * problem and the fix, and into an exit code from {@link ExitCodes}. Stack traces only with {@code
 * BOXLINE_LOG=FINE}.
 */
final class Failures implements CommandLine.IExecutionExceptionHandler {

  @Override
  public int handleExecutionException(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    PrintWriter err = cl.getErr();
    int code = codeOf(e);
    err.println("boxline: error: " + oneLine(messageOf(e)));
    if ("FINE".equalsIgnoreCase(System.getenv("BOXLINE_LOG"))) {
      e.printStackTrace(err);
    }
    err.flush();
    return code;
  }

  /** Bad flags: the reason and where to read more, exit 2. */
  static int usage(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    PrintWriter err = cl.getErr();
    err.println("boxline: error: " + oneLine(e.getMessage()));
    err.println("Try '" + cl.getCommandSpec().qualifiedName() + " --help' for the options.");
    err.flush();
    return ExitCodes.USAGE;
  }

  static int codeOf(Throwable e) {
    if (e instanceof CliException c) {
      return c.code;
    }
    if (e instanceof NotFoundException) {
      return ExitCodes.NOT_FOUND;
    }
    if (e instanceof BusySubscriptionException || e instanceof GroupFullException) {
      return ExitCodes.REFUSED;
    }
    if (e instanceof ValidationException || e instanceof IllegalArgumentException) {
      return ExitCodes.USAGE;
    }
    return ExitCodes.FAILED;
  }

  static String messageOf(Throwable e) {
    if (e instanceof StoreException s && s.getCause() != null) {
      return s.getMessage() + ": " + s.getCause().getMessage();
    }
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }

  static String oneLine(String s) {
    return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ").strip();
  }
}
