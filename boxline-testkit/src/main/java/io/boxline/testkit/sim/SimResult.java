package io.boxline.testkit.sim;

import java.util.List;
import java.util.Map;

/**
 * What one seed did.
 *
 * @param seed the seed; {@code Simulation.run(seed, settings, …)} replays it exactly
 * @param settings the settings it ran with
 * @param steps steps taken, drain included
 * @param published events whose producer saw the commit succeed
 * @param unknown events whose commit answer was lost (each is in the log once or not at all)
 * @param logged events in the log at the end
 * @param handled distinct events handled successfully
 * @param deadLettered events dead-lettered (exactly the poison ones)
 * @param duplicates handlings beyond the first (at-least-once runs; 0 in transactional ones)
 * @param duplicateBound how many duplicates the faults of the run allow
 * @param faults faults injected, by kind
 * @param recoveries what the members went through because of them, by kind (stale settlements
 *     refused, leases lost, calls lost…)
 * @param trace a hash of every step's actor, action and outcome: equal for a replay
 * @param violations invariants that failed, with the step; empty when the seed passed
 */
public record SimResult(
    long seed,
    SimSettings settings,
    int steps,
    int published,
    int unknown,
    int logged,
    int handled,
    int deadLettered,
    int duplicates,
    int duplicateBound,
    Map<String, Integer> faults,
    Map<String, Integer> recoveries,
    long trace,
    List<String> violations) {

  public boolean passed() {
    return violations.isEmpty();
  }

  /** One line: the seed and, when it failed, its first violation and how to replay it. */
  public String summary() {
    return passed()
        ? "seed " + seed + " passed: " + published + " published, " + handled + " handled"
        : "seed "
            + seed
            + " FAILED: "
            + violations.get(0)
            + " (replay: Simulation.run("
            + seed
            + "L, "
            + settings
            + ", …))";
  }
}
