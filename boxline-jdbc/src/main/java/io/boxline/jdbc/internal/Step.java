package io.boxline.jdbc.internal;

/**
 * The statement a multi-statement database call has reached, so that a failure names it (the
 * migration file, the named query). Confined to the thread making the call.
 */
final class Step {
  private String name;

  Step(String first) {
    this.name = first;
  }

  /** Moves on to {@code next}; returns it (for {@code sql(step.at("x"))}). */
  String at(String next) {
    this.name = next;
    return next;
  }

  String name() {
    return name;
  }
}
