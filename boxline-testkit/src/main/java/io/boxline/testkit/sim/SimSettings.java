package io.boxline.testkit.sim;

import java.time.Duration;

/**
 * What one simulated run does.
 *
 * @param steps scheduler steps with faults on; then a fault-free drain of at most {@code
 *     drainSteps} runs until every event is settled
 * @param drainSteps the longest the drain may take before the run counts as stuck
 * @param producers producers, each writing its own keys
 * @param members consumer group members of the one subscription
 * @param partitions the topic's partitions
 * @param keysPerProducer keys each producer writes
 * @param faultRate the chance that a store call is lost (before or after it ran), that an actor
 *     stalls, crashes, or that the clock jumps, each per step
 * @param transactional handlers write their effects in the transaction that moves the cursor
 *     (exactly once); otherwise effects happen before the settlement (at least once)
 * @param leaseTtl group and sequencer lease deadlines
 */
public record SimSettings(
    int steps,
    int drainSteps,
    int producers,
    int members,
    int partitions,
    int keysPerProducer,
    double faultRate,
    boolean transactional,
    Duration leaseTtl) {

  public SimSettings {
    if (steps < 1 || drainSteps < 1 || producers < 1 || members < 1 || partitions < 1) {
      throw new IllegalArgumentException("a simulation needs at least one of each: " + this);
    }
    if (faultRate < 0 || faultRate > 0.5) {
      throw new IllegalArgumentException(
          "faultRate is a chance per step in [0, 0.5]: " + faultRate);
    }
  }

  /** A small world, many faults: what CI runs for thousands of seeds. */
  public static SimSettings small(boolean transactional) {
    return new SimSettings(300, 20_000, 2, 3, 4, 3, 0.04, transactional, Duration.ofSeconds(2));
  }

  /** The settings for seed {@code seed} in a sweep: half transactional, sizes varied by seed. */
  public static SimSettings forSeed(long seed) {
    java.util.Random r = new java.util.Random(seed ^ 0x5DEECE66DL);
    return new SimSettings(
        200 + r.nextInt(300),
        20_000,
        1 + r.nextInt(3),
        1 + r.nextInt(4),
        1 + r.nextInt(6),
        1 + r.nextInt(4),
        0.01 + r.nextDouble() * 0.06,
        (seed & 1) == 0,
        Duration.ofSeconds(2));
  }
}
