package io.boxline.chaos;

/**
 * One step of the fault schedule: wait {@code gapMillis} after the previous step, then inject.
 * {@code index} picks the child of the role, {@code millis} is the restart delay after a kill or
 * the length of a pause.
 */
record Fault(int number, long gapMillis, Kind kind, Role role, int index, long millis) {
  enum Kind {
    KILL("SIGKILL + restart"),
    PAUSE("SIGSTOP past the lease deadline + SIGCONT"),
    RESTART_DATABASE("database immediate shutdown + start"),
    RESTART_BROKER("broker SIGKILL + start"),
    NET_CUT(
        "one process's link to the database blackholed for 2–30 s (the first past the member deadline), then healed"),
    NET_RESET("every database connection of one process reset"),
    NET_COMMIT_LOST("a COMMIT of one process reaches the database, its answer is lost (reset)"),
    NET_SLOW("one process's link slowed: 50–500 ms per chunk and 20–200 KB/s, for 2–6 s");

    final String description;

    Kind(String description) {
      this.description = description;
    }
  }

  /** Table label, e.g. {@code KILL consumer} or {@code RESTART_DATABASE}. */
  String label() {
    return role == null ? kind.name() : kind.name() + " " + role.label;
  }

  @Override
  public String toString() {
    return "#"
        + number
        + " +"
        + gapMillis
        + "ms "
        + label()
        + (role == null ? "" : "-" + index)
        + (millis > 0 ? " (" + millis + " ms)" : "");
  }
}
