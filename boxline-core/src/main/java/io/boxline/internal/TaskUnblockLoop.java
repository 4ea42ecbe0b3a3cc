package io.boxline.internal;

import io.boxline.TaskSettings;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The {@code boxline-task-unblock} thread: every interval, if this instance leads the sequencer (so
 * one instance of a deployment does it, as with retention), lets tasks blocked for longer than
 * {@link TaskSettings#autoUnblockAfter} run again, at most a batch per run so a flood of blocked
 * tasks is released gradually rather than all at once.
 */
final class TaskUnblockLoop extends LeaderLoop {
  private static final System.Logger LOG = System.getLogger(TaskUnblockLoop.class.getName());

  /** Redrives up to {@code limit} tasks blocked before {@code cutoff}; returns how many. */
  interface Step {
    int unblock(Instant cutoff, int limit);
  }

  private final Step unblock;
  private final Clock clock;
  private final Duration after;
  private final int batch;
  final AtomicLong unblocked = new AtomicLong();

  TaskUnblockLoop(
      Step unblock, BooleanSupplier leading, Clock clock, String owner, TaskSettings settings) {
    super(
        leading,
        settings.autoUnblockInterval(),
        "boxline-task-unblock-" + owner,
        "automatic task unblock");
    this.unblock = unblock;
    this.clock = clock;
    this.after = settings.autoUnblockAfter();
    this.batch = settings.autoUnblockBatch();
  }

  @Override
  void step() {
    int n = unblock.unblock(clock.instant().minus(after), batch);
    unblocked.addAndGet(n);
    if (n > 0) {
      LOG.log(Level.INFO, "unblocked {0} task(s) blocked for more than {1}", n, after);
    }
  }
}
