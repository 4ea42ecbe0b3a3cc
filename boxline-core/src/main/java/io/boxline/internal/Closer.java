package io.boxline.internal;

import java.lang.System.Logger.Level;

/**
 * Runs the steps of a shutdown one after another, each even when one before it failed, as Jdbi's
 * {@code Handle.close} does: every failure is logged with its step's name, the first one is thrown
 * at {@link #finish()} and the later ones ride on it as suppressed exceptions.
 */
final class Closer {
  private static final System.Logger LOG = System.getLogger(Closer.class.getName());

  private final String what;
  private RuntimeException first;

  Closer(String what) {
    this.what = what;
  }

  /** Runs one step; a failure is kept for {@link #finish()} and the next step runs anyway. */
  void step(String name, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, what + ": closing step '" + name + "' failed; going on", e);
      if (first == null) {
        first = e;
      } else {
        first.addSuppressed(e);
      }
    }
  }

  /** Throws the first failure, carrying the later ones; returns when every step succeeded. */
  void finish() {
    if (first != null) {
      throw first;
    }
  }
}
