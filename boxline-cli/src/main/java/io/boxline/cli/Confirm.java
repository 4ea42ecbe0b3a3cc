package io.boxline.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * Asks before a destructive action: on a terminal "… [y/N]"; without one the command refuses unless
 * {@code --yes} was given, so that a script never hangs on a prompt it cannot see.
 */
final class Confirm {
  private Confirm() {}

  static void orRefuse(boolean yes, PrintWriter out, String question, String what) {
    if (yes) {
      return;
    }
    if (System.console() == null) {
      throw new CliException(
          ExitCodes.REFUSED,
          what + "; not a terminal, so nothing was done: pass --yes to go ahead without a prompt");
    }
    out.print(question + " [y/N] ");
    out.flush();
    String answer;
    try {
      answer =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    } catch (IOException e) {
      answer = null;
    }
    if (answer == null
        || !(answer.strip().equalsIgnoreCase("y") || answer.strip().equalsIgnoreCase("yes"))) {
      throw new CliException(ExitCodes.REFUSED, "not confirmed: nothing was done");
    }
  }
}
