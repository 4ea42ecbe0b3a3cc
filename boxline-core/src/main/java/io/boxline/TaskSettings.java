package io.boxline;

import java.time.Duration;
import java.util.Objects;

/**
 * Instance-wide settings of {@link Tasks}, given to {@link Boxline.Builder#tasks}. Immutable; each
 * method returns a changed copy and refuses a bad value at once.
 *
 * <pre>{@code
 * Boxline.builder()
 *     .tasks(TaskSettings.defaults()
 *         .partitions(32)
 *         .retention(RetentionPolicy.byAge(Duration.ofDays(14)))
 *         .autoUnblockAfter(Duration.ofHours(1)))
 * }</pre>
 */
public final class TaskSettings {
  /** Default age after which finished tasks are deleted (as Kotbox does). */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  /** Default time between two runs of the automatic unblock loop. */
  public static final Duration DEFAULT_AUTO_UNBLOCK_INTERVAL = Duration.ofMinutes(1);

  /** Default most blocked tasks one automatic unblock run lets go. */
  public static final int DEFAULT_AUTO_UNBLOCK_BATCH = 100;

  private static final TaskSettings DEFAULTS =
      new TaskSettings(
          Tasks.PARTITIONS,
          RetentionPolicy.byAge(DEFAULT_RETENTION),
          PayloadCodec.json(),
          null,
          DEFAULT_AUTO_UNBLOCK_INTERVAL,
          DEFAULT_AUTO_UNBLOCK_BATCH);

  private final int partitions;
  private final RetentionPolicy retention;
  private final PayloadCodec codec;
  private final Duration autoUnblockAfter;
  private final Duration autoUnblockInterval;
  private final int autoUnblockBatch;

  private TaskSettings(
      int partitions,
      RetentionPolicy retention,
      PayloadCodec codec,
      Duration autoUnblockAfter,
      Duration autoUnblockInterval,
      int autoUnblockBatch) {
    this.partitions = partitions;
    this.retention = retention;
    this.codec = codec;
    this.autoUnblockAfter = autoUnblockAfter;
    this.autoUnblockInterval = autoUnblockInterval;
    this.autoUnblockBatch = autoUnblockBatch;
  }

  /**
   * {@value Tasks#PARTITIONS} partitions, finished tasks kept 7 days, JSON payloads, no automatic
   * unblock.
   */
  public static TaskSettings defaults() {
    return DEFAULTS;
  }

  /**
   * Partitions of the tasks topic, 1 to 65,536 (default {@value Tasks#PARTITIONS}): how many
   * ordering keys can run at once across all workers. Applies when the topic is created (on first
   * use of {@link Boxline#tasks()}); a topic that exists with another count is an error then, since
   * a partition count never changes (keys would move).
   */
  public TaskSettings partitions(int n) {
    if (n < 1 || n > 65_536) {
      throw new ValidationException(
          "TaskSettings.partitions must be between 1 and 65536, got " + n);
    }
    return new TaskSettings(
        n, retention, codec, autoUnblockAfter, autoUnblockInterval, autoUnblockBatch);
  }

  /**
   * Retention of the tasks topic, set when the topic is created (default {@code
   * RetentionPolicy.byAge(7 days)}; {@link RetentionPolicy#forever()} keeps every task). Only
   * finished tasks go: a task no worker has reached yet, or one waiting for a retry or blocked, is
   * kept however old (unless the policy says {@link RetentionPolicy#deleteUnconsumed()}). An
   * existing topic keeps its retention; change it with {@code admin().setRetention(TopicName
   * .parse(Tasks.TOPIC), policy)}.
   */
  public TaskSettings retention(RetentionPolicy policy) {
    return new TaskSettings(
        partitions,
        Objects.requireNonNull(policy, "policy: use RetentionPolicy.forever() to keep all tasks"),
        codec,
        autoUnblockAfter,
        autoUnblockInterval,
        autoUnblockBatch);
  }

  /**
   * How {@link Tasks#schedule} encodes payloads, and how workers decode them unless a worker sets
   * its own {@link Tasks.Worker#codec} (default {@link PayloadCodec#json()}: the JSON codec module
   * on the class path, {@code boxline-jackson} or {@code boxline-jackson3}).
   */
  public TaskSettings codec(PayloadCodec codec) {
    return new TaskSettings(
        partitions,
        retention,
        Objects.requireNonNull(codec, "codec"),
        autoUnblockAfter,
        autoUnblockInterval,
        autoUnblockBatch);
  }

  /**
   * Unblocks tasks automatically once they have been blocked this long, 1 s to 365 days (default:
   * never). A background loop ({@code boxline-task-unblock}) on the sequencer leader looks every
   * {@link #autoUnblockInterval} and lets at most {@link #autoUnblockBatch} tasks go per run, the
   * longest-blocked first. A task that fails again is blocked again and unblocked again after the
   * same time: this is a slow, endless retry, not a way to give up.
   */
  public TaskSettings autoUnblockAfter(Duration blockedFor) {
    Objects.requireNonNull(blockedFor, "blockedFor");
    if (blockedFor.compareTo(Duration.ofSeconds(1)) < 0
        || blockedFor.compareTo(Duration.ofDays(365)) > 0) {
      throw new ValidationException(
          "TaskSettings.autoUnblockAfter must be between 1 s and 365 days, got " + blockedFor);
    }
    return new TaskSettings(
        partitions, retention, codec, blockedFor, autoUnblockInterval, autoUnblockBatch);
  }

  /** Time between two automatic unblock runs, 100 ms to 1 day (default 1 min). */
  public TaskSettings autoUnblockInterval(Duration interval) {
    Objects.requireNonNull(interval, "interval");
    if (interval.compareTo(Duration.ofMillis(100)) < 0
        || interval.compareTo(Duration.ofDays(1)) > 0) {
      throw new ValidationException(
          "TaskSettings.autoUnblockInterval must be between 100 ms and 1 day, got " + interval);
    }
    return new TaskSettings(
        partitions, retention, codec, autoUnblockAfter, interval, autoUnblockBatch);
  }

  /** Most tasks one automatic unblock run lets go, 1 to 10,000 (default 100). */
  public TaskSettings autoUnblockBatch(int n) {
    if (n < 1 || n > 10_000) {
      throw new ValidationException(
          "TaskSettings.autoUnblockBatch must be between 1 and 10000, got " + n);
    }
    return new TaskSettings(partitions, retention, codec, autoUnblockAfter, autoUnblockInterval, n);
  }

  public int partitions() {
    return partitions;
  }

  public RetentionPolicy retention() {
    return retention;
  }

  public PayloadCodec codec() {
    return codec;
  }

  /** How long a task stays blocked before it is unblocked automatically, or null for never. */
  public Duration autoUnblockAfter() {
    return autoUnblockAfter;
  }

  public Duration autoUnblockInterval() {
    return autoUnblockInterval;
  }

  public int autoUnblockBatch() {
    return autoUnblockBatch;
  }
}
