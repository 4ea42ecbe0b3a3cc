package io.boxline.demo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** The verification's checks: one "[ok]" or "[FAIL]" line each, and the failures collected. */
final class Verdicts {
  private final PrintStream out;
  private final List<String> failures = new ArrayList<>();

  Verdicts(PrintStream out) {
    this.out = out;
  }

  /** Prints {@code success} when {@code ok}, else {@code failure}, which is also remembered. */
  boolean check(boolean ok, String success, String failure) {
    out.println((ok ? "  [ok]   " : "  [FAIL] ") + (ok ? success : failure));
    if (!ok) {
      failures.add(failure);
    }
    return ok;
  }

  List<String> failures() {
    return List.copyOf(failures);
  }

  /** Prints {@code verified} when every check passed, else the failures; the exit code. */
  int report(String verified) {
    out.println();
    if (failures.isEmpty()) {
      out.println(verified);
      return Demo.OK;
    }
    out.println("FAILED: " + failures.size() + " check(s) failed:");
    for (String f : failures) {
      out.println("  - " + f);
    }
    return Demo.VERIFICATION_FAILED;
  }
}
