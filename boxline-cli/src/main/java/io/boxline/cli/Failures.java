package io.boxline.cli;

import io.boxline.BusySubscriptionException;
import io.boxline.GroupFullException;
import io.boxline.NotFoundException;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.client.CannotConnectException;
import io.boxline.client.ServerException;
import io.boxline.client.UnauthorizedException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Turns every failure into one line on standard error, {@code boxline: error: …}, that names the
 * problem and the fix, and into an exit code from {@link ExitCodes}. Stack traces only with {@code
 * BOXLINE_LOG=FINE}. The one place where a failure of the server's client ({@code boxline-client}:
 * {@link ServerException} and the core exceptions it throws with one as their cause) becomes the
 * command line's: {@link #fromServer}.
 */
final class Failures implements CommandLine.IExecutionExceptionHandler {

  @Override
  public int handleExecutionException(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    PrintWriter err = cl.getErr();
    CliException server = fromServer(e);
    Exception shown = server != null ? server : e;
    int code = codeOf(shown);
    err.println("boxline: error: " + oneLine(messageOf(shown)));
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

  /**
   * A failure of a request to a Boxline server as the command says it, or null when {@code e} is
   * not one: 400 and 413 are bad usage (2), 401 cannot connect (5), 403 and 409 refused (4), 404
   * not found (3), no answer cannot connect (5), anything else failed (1). Where the fix is a flag
   * or a variable, the message names it.
   */
  static CliException fromServer(Throwable e) {
    ServerException s = ServerException.of(e).orElse(null);
    if (s == null) {
      return null;
    }
    String message = e.getMessage();
    int code;
    if (s instanceof CannotConnectException) {
      code = ExitCodes.CANNOT_CONNECT;
      message += " (check --server or BOXLINE_SERVER)";
    } else if (s instanceof UnauthorizedException u) {
      code = ExitCodes.CANNOT_CONNECT;
      message +=
          u.tokenSent()
              ? "; check BOXLINE_TOKEN or --token"
              : ": set BOXLINE_TOKEN, or pass --token to type it";
    } else {
      switch (s.status()) {
        case 400:
        case 413:
          code = ExitCodes.USAGE;
          break;
        case 403:
        case 409:
          code = ExitCodes.REFUSED;
          break;
        case 404:
          code = ExitCodes.NOT_FOUND;
          break;
        default:
          code = ExitCodes.FAILED;
      }
    }
    return new CliException(code, message);
  }

  /**
   * The HTTP status of a failed request to a server (0: no answer), or -1 when {@code e} is not
   * one.
   */
  static int serverStatus(Throwable e) {
    return ServerException.of(e).map(ServerException::status).orElse(-1);
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
