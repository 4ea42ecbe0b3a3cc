package io.boxline;

import java.time.Duration;

/**
 * How the consumers of a subscription share its partitions. A cluster-wide default is stored with
 * the coordination data and can be changed at runtime ({@link Admin#setGroupPolicy}); a
 * subscription may override it. Consumers pick up changes at their next check-in.
 *
 * @param checkInRate target check-ins per second for the whole group (0.1 to 1000, default {@value
 *     #DEFAULT_CHECK_IN_RATE}). Each consumer checks in every {@code max(minCheckInInterval,
 *     members / checkInRate)}, so a group of any size costs the coordination store about this many
 *     writes per second once it has more members than {@code checkInRate × minCheckInInterval}.
 * @param minCheckInInterval shortest time between two check-ins of one consumer (default 2 s)
 * @param deadlineMultiplier a consumer is dead when it misses this many of its own check-in
 *     intervals (1.5 to 20, default {@value #DEFAULT_DEADLINE_MULTIPLIER})
 * @param slack tolerance around the fair share before leases move (0 to 1, default {@value
 *     #DEFAULT_SLACK})
 * @param releaseGrace how long a lease may stay RELEASING while its in-flight batch finishes before
 *     others may take it (default 10 s)
 * @param idleRelease how long a partition with no backlog stays leased before it is released
 *     (default 10 s)
 * @param batchSize events per batch for every consumer of the group, 1 to 10,000, overriding each
 *     consumer's {@link ConsumerBuilder#batchSize}; 0 (the default) leaves it to the consumers
 * @param maxCheckInInterval longest time between two check-ins of one consumer, however large the
 *     group (default 30 s): it bounds how long a dead consumer's partitions wait (this times {@code
 *     deadlineMultiplier}), at the price of more than {@code checkInRate} writes per second in
 *     groups of more than {@code checkInRate × maxCheckInInterval} members
 * @param maxMembers how many consumers the group admits (1 to 100,000); a consumer that would be
 *     one too many fails to start with {@link GroupFullException}; 0 (the default): no limit
 */
public record GroupPolicy(
    double checkInRate,
    Duration minCheckInInterval,
    double deadlineMultiplier,
    double slack,
    Duration releaseGrace,
    Duration idleRelease,
    int batchSize,
    Duration maxCheckInInterval,
    int maxMembers) {

  public static final double DEFAULT_CHECK_IN_RATE = 8;
  public static final double DEFAULT_DEADLINE_MULTIPLIER = 3;
  public static final double DEFAULT_SLACK = 0.1;

  public static final GroupPolicy DEFAULT =
      new GroupPolicy(
          DEFAULT_CHECK_IN_RATE,
          Duration.ofSeconds(2),
          DEFAULT_DEADLINE_MULTIPLIER,
          DEFAULT_SLACK,
          Duration.ofSeconds(10),
          Duration.ofSeconds(10),
          0,
          Duration.ofSeconds(30),
          0);

  public GroupPolicy {
    // Stores keep milliseconds: the policy holds what reads back (a duration under a millisecond
    // would read back as zero and make the stored policy unreadable).
    minCheckInInterval = millis(minCheckInInterval);
    releaseGrace = millis(releaseGrace);
    idleRelease = millis(idleRelease);
    maxCheckInInterval = millis(maxCheckInInterval);
    slack = slack == 0 ? 0.0 : slack; // -0.0 reads back as 0.0
    if (!(checkInRate >= 0.1 && checkInRate <= 1000)) {
      throw new ValidationException(
          "checkInRate must be between 0.1 and 1000 per second, got " + checkInRate);
    }
    requirePositive("minCheckInInterval", minCheckInInterval);
    if (minCheckInInterval.compareTo(Duration.ofMillis(50)) < 0) {
      throw new ValidationException(
          "minCheckInInterval must be at least 50 ms, got " + minCheckInInterval);
    }
    if (!(deadlineMultiplier >= 1.5 && deadlineMultiplier <= 20)) {
      throw new ValidationException(
          "deadlineMultiplier must be between 1.5 and 20, got " + deadlineMultiplier);
    }
    if (!(slack >= 0 && slack <= 1)) {
      throw new ValidationException("slack must be between 0 and 1, got " + slack);
    }
    requirePositive("releaseGrace", releaseGrace);
    requirePositive("idleRelease", idleRelease);
    if (batchSize < 0 || batchSize > 10_000) {
      throw new ValidationException(
          "batchSize must be between 1 and 10,000 (or 0 to leave it to each consumer), got "
              + batchSize);
    }
    requirePositive("maxCheckInInterval", maxCheckInInterval);
    if (maxCheckInInterval.compareTo(minCheckInInterval) < 0) {
      throw new ValidationException(
          "maxCheckInInterval ("
              + maxCheckInInterval
              + ") must not be shorter than minCheckInInterval ("
              + minCheckInInterval
              + ")");
    }
    if (maxMembers < 0 || maxMembers > 100_000) {
      throw new ValidationException(
          "maxMembers must be between 1 and 100,000 (or 0 for no limit), got " + maxMembers);
    }
  }

  /** A policy with the default check-in cap and no member limit. */
  public GroupPolicy(
      double checkInRate,
      Duration minCheckInInterval,
      double deadlineMultiplier,
      double slack,
      Duration releaseGrace,
      Duration idleRelease,
      int batchSize) {
    this(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        max(Duration.ofSeconds(30), minCheckInInterval),
        0);
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** A policy that leaves the batch size to each consumer. */
  public GroupPolicy(
      double checkInRate,
      Duration minCheckInInterval,
      double deadlineMultiplier,
      double slack,
      Duration releaseGrace,
      Duration idleRelease) {
    this(checkInRate, minCheckInInterval, deadlineMultiplier, slack, releaseGrace, idleRelease, 0);
  }

  /** The batch size a consumer configured with {@code own} uses under this policy. */
  public int batchSizeFor(int own) {
    return batchSize > 0 ? batchSize : own;
  }

  private static void requirePositive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new ValidationException(
          name + " must be at least 1 ms (kept in whole milliseconds), got " + d);
    }
    Names.requireStorable(name, d);
  }

  private static Duration millis(Duration d) {
    return d == null ? null : d.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
  }

  /** Check-in interval of one consumer in a group of {@code members}. */
  public Duration checkInInterval(int members) {
    long byRate = (long) (Math.max(1, members) / checkInRate * 1000);
    long interval = Math.max(minCheckInInterval.toMillis(), byRate);
    return Duration.ofMillis(Math.min(maxCheckInInterval.toMillis(), interval));
  }

  /** Time after its last check-in when a consumer of a group of {@code members} counts as dead. */
  public Duration deadline(int members) {
    return Duration.ofMillis((long) (checkInInterval(members).toMillis() * deadlineMultiplier));
  }

  public GroupPolicy withCheckInRate(double v) {
    return new GroupPolicy(
        v,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withMinCheckInInterval(Duration v) {
    return new GroupPolicy(
        checkInRate,
        v,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        max(maxCheckInInterval, v), // a longer minimum raises the cap with it
        maxMembers);
  }

  public GroupPolicy withDeadlineMultiplier(double v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        v,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withSlack(double v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        v,
        releaseGrace,
        idleRelease,
        batchSize,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withReleaseGrace(Duration v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        v,
        idleRelease,
        batchSize,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withIdleRelease(Duration v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        v,
        batchSize,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withBatchSize(int v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        v,
        maxCheckInInterval,
        maxMembers);
  }

  public GroupPolicy withMaxCheckInInterval(Duration v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        v,
        maxMembers);
  }

  public GroupPolicy withMaxMembers(int v) {
    return new GroupPolicy(
        checkInRate,
        minCheckInInterval,
        deadlineMultiplier,
        slack,
        releaseGrace,
        idleRelease,
        batchSize,
        maxCheckInInterval,
        v);
  }
}
