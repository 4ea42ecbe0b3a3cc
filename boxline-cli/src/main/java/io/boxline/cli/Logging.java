package io.boxline.cli;

import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Boxline logs through {@code System.Logger} (java.util.logging by default); a command line shows
 * only warnings, so that its output stays readable and parseable. {@code BOXLINE_LOG=INFO} (or
 * FINE) shows more, on standard error.
 */
final class Logging {
  private Logging() {}

  static void quiet() {
    String wanted = System.getenv("BOXLINE_LOG");
    Level level;
    try {
      level = wanted == null ? Level.WARNING : Level.parse(wanted.toUpperCase());
    } catch (IllegalArgumentException e) {
      level = Level.WARNING;
    }
    // One line per record: "WARNING: consumer …: dead-lettered …".
    System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s: %5$s%6$s%n");
    LogManager.getLogManager().reset();
    Logger root = Logger.getLogger("");
    java.util.logging.ConsoleHandler h = new java.util.logging.ConsoleHandler();
    h.setLevel(level);
    root.addHandler(h);
    root.setLevel(level);
  }
}
