package io.boxline;

/**
 * Counters of this instance's task machinery, for health checks and tests.
 *
 * @param unknownTasks tasks of a type no handler of this instance's workers knew (each attempt)
 * @param unknownIgnored of those, the ones dropped ({@link UnknownTaskPolicy#IGNORE} or a custom
 *     policy that decided to ignore)
 * @param autoUnblockRuns runs of the automatic unblock loop that looked for blocked tasks (only on
 *     the sequencer leader, only when {@link TaskSettings#autoUnblockAfter} is set)
 * @param autoUnblocked blocked tasks those runs let run again
 * @param autoUnblockErrors runs that failed (logged; tried again next interval)
 */
public record TaskStats(
    long unknownTasks,
    long unknownIgnored,
    long autoUnblockRuns,
    long autoUnblocked,
    long autoUnblockErrors) {
  public static final TaskStats NONE = new TaskStats(0, 0, 0, 0, 0);
}
