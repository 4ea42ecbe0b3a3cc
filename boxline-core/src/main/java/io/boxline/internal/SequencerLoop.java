package io.boxline.internal;

import io.boxline.Partitioner;
import io.boxline.TopicInfo;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.SequencerStore;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sequencer candidate ({@code boxline-sequencer} thread). Competes for the database-wide
 * sequencer lease; while it holds it, moves committed outbox rows into the log with gap-free
 * per-partition sequences.
 *
 * <p>Waking: an in-process hint from a local publisher starts a short "tail" of quick polls (1, 2,
 * 4 … 64 ms), because the publisher's transaction has not committed yet when it hints; {@code
 * inTransaction} does not hint but reports its commit, so one look finds the events. A wake-up from
 * the store (another process's publisher) polls at once. A full batch drains again immediately;
 * after a smaller one a tail of quick looks follows only when a hint or a remote wake-up came
 * recently (their transactions may still be committing: remote publishers NOTIFY at most every few
 * milliseconds). With no wake-up, it checks the outbox every idle-poll interval with one cheap
 * statement.
 */
final class SequencerLoop implements WakeupListener {
  private static final System.Logger LOG = System.getLogger(SequencerLoop.class.getName());
  private static final long TAIL_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long TAIL_LAST_NANOS = TimeUnit.MILLISECONDS.toNanos(64);

  /** A tail of quick looks lasts about 127 ms; an uncertain wake-up older than that is settled. */
  private static final long UNCERTAIN_WINDOW_NANOS = 2 * TAIL_LAST_NANOS;

  private final SequencerStore store;
  private final String owner;
  private final Duration ttl;
  private final int batchSize;
  private final long idlePollNanos;
  private final long spacingNanos;

  /** The spacing after the last batch: a share of {@link #spacingNanos} by how full it was. */
  private long currentSpacingNanos;

  /**
   * Events beyond the first that earn the whole spacing: each adds a twentieth of it (0.5 ms of the
   * default 10 ms), so the spacing grows with the rate and reaches its cap only under heavy load.
   */
  private static final int SPACING_STEPS = 20;

  /**
   * When the last batch that moved events but was not full ended; 0 when spacing does not apply.
   */
  private long spacedSinceNanos;

  private final WakeupBus bus;
  private final PartitionAssigner assigner;
  private final Observers observers;
  private final RecentEvents recent;
  private final Signal signal = new Signal();
  private final Thread thread;

  private volatile boolean running = true;
  private volatile boolean leader;
  private volatile boolean pending = true;
  private volatile long tailStepNanos;
  private volatile long tailDueNanos;

  /** When the last wake-up came whose transaction may not have committed yet (hint or remote). */
  private volatile long lastUncertainNanos = System.nanoTime() - UNCERTAIN_WINDOW_NANOS;

  final AtomicLong batches = new AtomicLong();
  final AtomicLong events = new AtomicLong();
  final AtomicLong errors = new AtomicLong();

  /** Outbox rows moved to the rejected rows because their topic or partition does not exist. */
  final AtomicLong setAside = new AtomicLong();

  SequencerLoop(
      SequencerStore store,
      String owner,
      Duration ttl,
      int batchSize,
      Duration idlePoll,
      Duration batchSpacing,
      WakeupBus bus,
      TopicCache topics,
      Partitioner partitioner,
      Observers observers,
      RecentEvents recent) {
    this.recent = recent;
    this.store = store;
    this.owner = owner;
    this.ttl = ttl;
    this.batchSize = batchSize;
    this.idlePollNanos = idlePoll.toNanos();
    this.spacingNanos = batchSpacing.toNanos();
    this.bus = bus;
    this.observers = observers;
    this.assigner =
        new PartitionAssigner() {
          @Override
          public int assign(long topicId, String key) {
            TopicInfo t = topics.get(topicId);
            return key == null
                ? ThreadLocalRandom.current().nextInt(t.partitions())
                : partitioner.partition(key, t.partitions());
          }

          @Override
          public boolean kafkaCompatible() {
            return partitioner == io.boxline.Partitioner.kafkaCompatible();
          }
        };
    this.thread = new Thread(this::run, "boxline-sequencer-" + owner);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  boolean isLeader() {
    return leader;
  }

  /**
   * A local publisher wrote to the outbox; its transaction has not committed yet, so looking now
   * would find nothing. Arms the tail of quick looks, the first one step from now.
   */
  void hint() {
    lastUncertainNanos = System.nanoTime();
    if (tailStepNanos == 0) {
      tailDueNanos = System.nanoTime() + TAIL_FIRST_NANOS;
      tailStepNanos = TAIL_FIRST_NANOS;
      signal.raise(); // re-plan the wait; does not make the loop look at once
    }
  }

  /** A local transaction that wrote to the outbox has committed: one look finds its rows. */
  void committedLocally() {
    pending = true;
    signal.raise();
  }

  @Override
  public void outboxChanged() {
    lastUncertainNanos = System.nanoTime();
    pending = true;
    signal.raise();
  }

  @Override
  public void logAppended(List<PartitionHead> heads) {}

  @Override
  public void resynchronize() {
    outboxChanged();
  }

  private void run() {
    // One statement both renews the lease and tells whether the outbox has rows: it is all an idle
    // sequencer does, once per poll interval.
    long pollNanos = Math.min(ttl.toNanos() / 3, idlePollNanos);
    long lastLease = 0;
    long errorBackoffNanos = TimeUnit.MILLISECONDS.toNanos(50);
    while (running) {
      try {
        if (!leader || System.nanoTime() - lastLease >= pollNanos) {
          boolean was = leader;
          LeaseStatus status = store.acquireSequencerLease(owner, ttl);
          lastLease = System.nanoTime();
          leader = status.held();
          if (leader != was) {
            LOG.log(
                Level.INFO, "sequencer {0}: {1}", owner, leader ? "now leading" : "lost the lease");
          }
          if (!leader) {
            signal.await(pollNanos);
            continue;
          }
          if (status == LeaseStatus.HELD_WITH_WORK) {
            pending = true;
          }
        }
        boolean work = pending || (tailStepNanos != 0 && System.nanoTime() >= tailDueNanos);
        if (work && spacedSinceNanos != 0) {
          // Under load, let the commits of the next moment gather into one batch.
          long early = spacedSinceNanos + currentSpacingNanos - System.nanoTime();
          if (early > 0) {
            signal.await(early);
            continue;
          }
        }
        if (work) {
          // Only a batch ends the spacing: a look that finds nothing to do yet (a hint's tail not
          // due) must not, or spacing never applied to plain publish(conn, ...) producers.
          spacedSinceNanos = 0;
          pending = false;
          long started = System.nanoTime();
          SequencedBatch batch = store.sequence(owner, ttl, batchSize, assigner, recent.wanted());
          if (!batch.leaseHeld()) {
            leader = false;
            LOG.log(Level.INFO, "sequencer {0}: lost the lease", owner);
            continue;
          }
          lastLease = System.nanoTime();
          if (batch.events() > 0) {
            batches.incrementAndGet();
            events.addAndGet(batch.events());
            if (observers.active()) {
              observers.sequenced(batch.events(), Duration.ofNanos(System.nanoTime() - started));
            }
            if (!batch.appended().isEmpty()) {
              recent.add(batch.appended()); // before the announcement, so consumers find them
            }
            bus.logAppended(batch.heads());
            if (batch.events() >= batchSize) {
              pending = true; // more waiting: drain again at once
              continue;
            }
            // Space the next batch only when commits already arrive faster than one per batch (a
            // lone event, a quiet system or 200/s, is never held back), and the longer the more
            // events came together: a twentieth of the spacing per event beyond the first, up to
            // all of it from 21 events on. Larger batches cost less per event.
            int extra = Math.min(batch.events() - 1, SPACING_STEPS);
            currentSpacingNanos = spacingNanos * extra / SPACING_STEPS;
            spacedSinceNanos = currentSpacingNanos == 0 ? 0 : System.nanoTime();
            if (System.nanoTime() - lastUncertainNanos < UNCERTAIN_WINDOW_NANOS) {
              // Stragglers that commit just after this batch: look again shortly, backing off.
              tailStepNanos = TAIL_FIRST_NANOS;
              tailDueNanos = System.nanoTime() + TAIL_FIRST_NANOS;
            }
            continue;
          }
        }
        errorBackoffNanos = TimeUnit.MILLISECONDS.toNanos(50);
        long wait;
        if (tailStepNanos != 0) {
          long now = System.nanoTime();
          if (now >= tailDueNanos) {
            // This step's look is done: schedule the next one, twice as far, until the tail ends.
            tailStepNanos = tailStepNanos >= TAIL_LAST_NANOS ? 0 : tailStepNanos * 2;
            tailDueNanos = now + tailStepNanos;
          }
          wait =
              tailStepNanos == 0
                  ? Math.max(0, pollNanos - (now - lastLease))
                  : Math.max(0, tailDueNanos - now);
        } else {
          wait = Math.max(0, pollNanos - (System.nanoTime() - lastLease));
        }
        // Wake-ups that mean "look now" set pending themselves; a hint only re-plans this wait.
        signal.await(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        errors.incrementAndGet();
        recent.clear(); // the database may have restarted and lost what is cached
        if (setAsideUnplaceable()) {
          pending = true;
          continue; // the batch failed on rows nobody could place: try again without them
        }
        LOG.log(Level.WARNING, "sequencer " + owner + " failed; retrying", e);
        try {
          signal.await(errorBackoffNanos);
        } catch (InterruptedException ie) {
          return;
        }
        errorBackoffNanos = Math.min(errorBackoffNanos * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  /**
   * After a failed batch: moves outbox rows whose topic or partition does not exist (written by
   * hand; no publisher writes them) to the rejected rows, so that they cannot stop sequencing for
   * every topic. True when it moved any.
   */
  private boolean setAsideUnplaceable() {
    int n;
    try {
      n = store.setAsideUnplaceable();
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "sequencer " + owner + " could not look for unplaceable rows", e);
      return false;
    }
    if (n > 0) {
      setAside.addAndGet(n);
      LOG.log(
          Level.WARNING,
          "sequencer {0}: set aside {1} outbox row(s) whose topic or partition does not exist"
              + " (written by hand or by a script?) into the outbox_rejected table, with the"
              + " reason; sequencing goes on without them",
          owner,
          n);
    }
    return n > 0;
  }

  /** Stops the loop (bounded wait) and hands the lease back so a standby takes over at once. */
  void stop(Duration timeout) {
    running = false;
    signal.stopLoop(thread, timeout);
    if (leader) {
      leader = false;
      try {
        store.releaseSequencerLease(owner);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "could not release the sequencer lease; it expires in " + ttl, e);
      }
    }
  }
}
