package io.boxline.internal;

import io.boxline.Consumer;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One member of a subscription's consumer group: the façade that owns the threads and wires the
 * parts.
 *
 * <ul>
 *   <li>{@code boxline-group-<id>} runs {@link GroupMembership}: check-ins, leases, fair share,
 *       fencing of newly acquired partitions; it fills the map of held partitions.
 *   <li>{@code boxline-consumer-<id>} (this class) dispatches held partitions that have work to
 *       workers, one worker slot and the partition's draining flag per claim; wake-ups start a free
 *       worker at once, or the committing thread when the handler runs there.
 *   <li>{@code boxline-worker-<id>-N} (this class's pool) drain one partition at a time with {@link
 *       PartitionDrain}: read after the cursor, hand the batch to {@link PlainDelivery} or {@link
 *       TransactionalDelivery}, give due parked events a {@link RetryPass}. Every failed attempt
 *       goes through {@link ConsumerContext#decide} to its outcome.
 * </ul>
 */
final class DefaultConsumer implements Consumer, WakeupListener, ConsumerContext.Host {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /** How long start() waits for the first check-in to learn whether the group admits it. */
  private static final Duration ADMISSION_WAIT = Duration.ofSeconds(10);

  /** Set while this thread runs a partition for one of the consumer's workers. */
  private static final ThreadLocal<DefaultConsumer> WORKER = new ThreadLocal<>();

  /** Null without a handler timeout. */
  private HandlerWatchdog watchdog;

  /** Set on the consumer's key threads ({@code parallelByKey}). */
  private static final ThreadLocal<DefaultConsumer> KEY_WORKER = new ThreadLocal<>();

  /** Handle the groups of keys of a batch; null without {@code parallelByKey}. */
  private ExecutorService keyWorkers;

  private final TopicCache topics;
  private final WakeupBus bus;
  private final RecentEvents recent;
  private final SubscriptionInfo subscription;
  private final ConsumerContext ctx;
  private final GroupMembership membership;
  private final PartitionDrain drain;
  private final ConsumerSettings s;
  private final String id;
  private final String group;
  private final Set<Long> topicIds = new HashSet<>();
  private final Runnable onClose;

  private final Map<PartitionKey, LeasedPartition> held = new ConcurrentHashMap<>();

  private final Signal dispatchSignal = new Signal();

  /**
   * Held partitions beyond which the dispatcher stops walking all of them on every wake-up: it
   * takes the partitions named by new heads and by workers that finished with work left ({@link
   * #hinted}), and walks all of them at most every {@link #FULL_SCAN_NANOS} for what nothing named
   * (due retries, partitions just taken, backlogs a check-in found). With 65,536 partitions the
   * walk on every wake-up kept the dispatcher busy for a whole core.
   */
  static final int LARGE_CONSUMER_PARTITIONS = 1024;

  static final long FULL_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** Partitions that may have work, in the order they were named; see {@link #hint}. */
  private final java.util.concurrent.ConcurrentLinkedQueue<LeasedPartition> hinted =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private long lastFullScanNanos;
  private long nextRetryAtMillis = Long.MAX_VALUE;

  /**
   * Whether a worker that ends its turn must wake the dispatcher although its own partition has no
   * more work: a partition with work was left without a worker (no slot was free). Set before each
   * dispatch pass and whenever a wake-up finds such a partition, cleared by a pass that left none
   * behind. Without it every turn of every worker woke the dispatcher (twice), and so did every
   * head the listener repeated after the local sequencer had already signalled it: one thread
   * wake-up and one pass over the held partitions per partition and batch, for nothing.
   */
  private volatile boolean dispatchWanted = true;

  private java.util.concurrent.Semaphore freeWorkers;
  private int rotation;
  private final CountDownLatch stopLatch = new CountDownLatch(1);
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean stopping;
  private volatile boolean abandoned;
  private Thread dispatcher;

  /** The consumer's own worker pool; null when the application gave an executor. */
  private ExecutorService workers;

  /** Where partitions are drained: {@link #workers}, or the application's executor. */
  private java.util.concurrent.Executor runner;

  /** The threads draining a partition now, to interrupt at the shutdown timeout. */
  private final java.util.Set<Thread> draining = java.util.concurrent.ConcurrentHashMap.newKeySet();

  DefaultConsumer(
      Store store,
      CoordinationStore coordination,
      TopicCache topics,
      WakeupBus bus,
      RecentEvents recent,
      SubscriptionInfo subscription,
      ConsumerSettings settings,
      CursorCommitter cursorCommits,
      Runnable onClose) {
    // A transactional handler commits its cursor inside its own transaction, where the check that
    // handed-over events are still in the log is not made; it always reads from the log.
    this.recent = settings.txHandler() == null ? recent : null;
    this.topics = topics;
    this.bus = bus;
    this.subscription = subscription;
    this.s = settings;
    this.ctx =
        new ConsumerContext(
            store,
            settings,
            subscription,
            this.recent,
            cursorCommits.lane(subscription.id()),
            this);
    Delivery delivery =
        settings.txHandler() != null ? new TransactionalDelivery(ctx) : new PlainDelivery(ctx);
    RetryPass retries = new RetryPass(ctx, delivery);
    this.membership = new GroupMembership(ctx, coordination, topics, held, dispatchSignal);
    this.drain = new PartitionDrain(ctx, delivery, retries, membership);
    this.id = settings.id();
    this.group = subscription.name();
    this.onClose = onClose;
    for (TopicName t : subscription.topics()) {
      topicIds.add(topics.get(t).id());
    }
  }

  @Override
  public Consumer start() {
    if (!started.compareAndSet(false, true)) {
      return this;
    }
    AtomicInteger n = new AtomicInteger();
    freeWorkers = new java.util.concurrent.Semaphore(s.concurrency());
    // The semaphore bounds the workers; the pool may grow past it only by threads the watchdog left
    // behind in a handler that ignored its interrupt.
    if (s.executor() != null) {
      runner = s.executor();
    } else {
      workers =
          Executors.newCachedThreadPool(
              r -> {
                Thread t = new Thread(r, "boxline-worker-" + id + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      runner = workers;
    }
    if (recent != null) {
      recent.register(topicIds);
    }
    bus.add(this);
    if (s.keyConcurrency() > 1) {
      AtomicInteger k = new AtomicInteger();
      keyWorkers =
          Executors.newFixedThreadPool(
              s.keyConcurrency(),
              r -> {
                Thread t =
                    new Thread(
                        () -> {
                          KEY_WORKER.set(this);
                          r.run();
                        },
                        "boxline-key-" + id + "-" + k.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
    }
    if (s.handlerTimeout() != null) {
      watchdog = new HandlerWatchdog(id, s.handlerTimeout(), this::giveUp);
      ctx.watchdog(watchdog);
      watchdog.start();
    }
    dispatcher = new Thread(this::dispatch, "boxline-consumer-" + id);
    dispatcher.setDaemon(true);
    membership.start();
    dispatcher.start();
    io.boxline.GroupFullException full;
    try {
      full = membership.awaitAdmission(ADMISSION_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      full = null;
    }
    if (full != null) {
      stop(s.shutdownTimeout());
      throw full;
    }
    LOG.log(
        Level.INFO,
        "consumer {0} joined subscription {1} (weight {2}, coordination: {3})",
        id,
        group,
        s.weight(),
        membership.describeCoordination());
    return this;
  }

  @Override
  public String subscription() {
    return group;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public long handledCount() {
    return ctx.handled.get();
  }

  @Override
  public long fencedCount() {
    return ctx.fenced.get();
  }

  @Override
  public long lostCount() {
    return membership.lost.get();
  }

  @Override
  public long checkInCount() {
    return membership.checkIns.get();
  }

  @Override
  public long committingThreadBatches() {
    return drain.committingThreadBatches.get();
  }

  @Override
  public Set<TopicPartition> assignedPartitions() {
    Set<TopicPartition> out = new LinkedHashSet<>();
    for (LeasedPartition p : held.values()) {
      if (p.state == LeasedPartition.State.ACTIVE) {
        out.add(p.ref());
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ wake-ups
  @Override
  public void outboxChanged() {}

  @Override
  public void resynchronize() {
    membership.resynchronize();
  }

  @Override
  public void logAppended(List<PartitionHead> heads) {
    if (heads == null) {
      resynchronize();
      return;
    }
    boolean dispatch = false;
    boolean pickup = false;
    for (PartitionHead h : heads) {
      if (!topicIds.contains(h.topicId())) {
        continue;
      }
      PartitionKey key = PartitionKey.of(h.topicId(), h.partition());
      LeasedPartition p = held.get(key);
      if (p != null) {
        p.knownLast.accumulateAndGet(h.lastSequence(), Math::max);
        if (stopping) {
          continue;
        }
        // The thread that committed these events runs the handler once its connection is closed.
        // Claimed now, so that no worker takes the partition in between.
        if (s.onCommittingThread() && CommittingThread.collecting() && claim(p)) {
          CommittingThread.defer(
              new CommittingThread.Delivery() {
                @Override
                public void run() {
                  drainClaimed(p);
                }

                @Override
                public void cancel() {
                  unclaim(p);
                }
              });
          continue;
        }
        // Start a free worker from here rather than through the dispatcher: one thread hand-off
        // less between the sequencer's commit and the handler. The dispatcher is needed only when
        // no worker slot was free; a worker draining the partition looks at the new head itself
        // when its turn ends (waitsForWorker after it let go of the partition).
        if (!tryStart(p) && waitsForWorker(p)) {
          hint(p);
          dispatch = true;
        }
        continue;
      }
      if (membership.noteHead(key, h.lastSequence())) {
        pickup = true;
      }
    }
    if (dispatch) {
      dispatchWanted = true;
      dispatchSignal.raise();
    }
    if (pickup) {
      membership.wake();
    }
  }

  @Override
  public boolean stopping() {
    return stopping;
  }

  @Override
  public boolean abandoned() {
    return abandoned;
  }

  @Override
  public void lose(LeasedPartition p, String why) {
    membership.lose(p, why);
  }

  @Override
  public boolean onWorker() {
    return WORKER.get() == this;
  }

  /**
   * The watchdog's last resort for a handler that ignores interrupts: the partition goes back to
   * the group (another member, or this one under a new epoch, takes it; the stuck thread's commit
   * is fenced) and its worker slot goes to the other partitions.
   */
  private void giveUp(HandlerWatchdog.Call call, String why) {
    membership.giveUp(call.partition, why);
    if (call.holdsSlot) {
      freeWorkers.release(); // a key thread holds none: its partition worker stops waiting for it
    }
    dispatchSignal.raise();
  }

  @Override
  public boolean onKeyWorker() {
    return KEY_WORKER.get() == this;
  }

  @Override
  public java.util.concurrent.ExecutorService keyWorkers() {
    return keyWorkers;
  }

  /** Handler calls the watchdog interrupted, and partitions it gave up; for tests and stats. */
  long[] watchdogCounts() {
    HandlerWatchdog w = watchdog;
    return w == null ? new long[2] : new long[] {w.interrupts.get(), w.givenUp.get()};
  }

  // ------------------------------------------------------------------ delivery
  /** Names {@code p} to the dispatcher of a large consumer (once until it takes it). */
  private void hint(LeasedPartition p) {
    if (held.size() > LARGE_CONSUMER_PARTITIONS && p.queued.compareAndSet(false, true)) {
      hinted.add(p);
    }
  }

  private void dispatch() {
    while (!stopping) {
      try {
        if (held.size() > LARGE_CONSUMER_PARTITIONS
            && System.nanoTime() - lastFullScanNanos < FULL_SCAN_NANOS) {
          dispatchHinted();
          continue;
        }
        lastFullScanNanos = System.nanoTime();
        for (LeasedPartition q; (q = hinted.poll()) != null; ) {
          q.queued.set(false); // the walk below looks at every partition
        }
        // Hand a partition to a worker only when one is free, so "draining" always means "running"
        // (a
        // release never waits behind a queue), walking from a rotating start so no partition
        // starves.
        // Set before trying: a worker that frees its slot from now on wakes this loop again.
        dispatchWanted = true;
        List<LeasedPartition> candidates = new ArrayList<>(held.values());
        int n = candidates.size();
        int start = n == 0 ? 0 : Math.floorMod(rotation++, n);
        boolean left = false;
        boolean large = n > LARGE_CONSUMER_PARTITIONS;
        for (int i = 0; i < n; i++) {
          LeasedPartition c = candidates.get((start + i) % n);
          if (freeWorkers.availablePermits() == 0) {
            left = true; // the rest may need a slot: the next worker to free one wakes this loop
            if (!large) {
              break;
            }
            if (waitsForWorker(c)) {
              hint(c); // a large consumer's passes until the next walk take the named ones
            }
            continue;
          }
          if (!tryStart(c) && waitsForWorker(c)) {
            hint(c);
            left = true;
          }
        }
        if (!left) {
          dispatchWanted = false; // a wake-up that finds work again sets it (and raises the signal)
        }
        long next = Long.MAX_VALUE;
        for (LeasedPartition p : held.values()) {
          next = Math.min(next, p.nextRetryAtMillis);
        }
        nextRetryAtMillis = next;
        long untilRetry = Math.min(TimeUnit.SECONDS.toMillis(1), next - s.clock().millis());
        if (held.size() > LARGE_CONSUMER_PARTITIONS) {
          untilRetry = Math.min(untilRetry, TimeUnit.NANOSECONDS.toMillis(FULL_SCAN_NANOS));
        }
        dispatchSignal.await(TimeUnit.MILLISECONDS.toNanos(Math.max(1, untilRetry)));
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "consumer " + id + " dispatcher failed; continuing", e);
        if (waitForStop(TimeUnit.MILLISECONDS.toNanos(100))) {
          return;
        }
      }
    }
  }

  /**
   * A large consumer's pass between two full walks: the named partitions, in order, while workers
   * are free; one that has work and finds no free worker keeps its place. Then waits for the next
   * name, a due retry, or the next full walk.
   */
  private void dispatchHinted() throws InterruptedException {
    dispatchWanted = true;
    boolean left = false;
    for (int budget = hinted.size(); budget > 0; budget--) {
      if (freeWorkers.availablePermits() == 0) {
        left = true;
        break;
      }
      LeasedPartition p = hinted.poll();
      if (p == null) {
        break;
      }
      p.queued.set(false);
      if (!tryStart(p) && waitsForWorker(p)) {
        hint(p);
        left = true;
      }
    }
    if (!left && hinted.isEmpty()) {
      dispatchWanted = false;
    }
    long now = System.nanoTime();
    long untilScan = Math.max(0, FULL_SCAN_NANOS - (now - lastFullScanNanos));
    long untilRetry =
        TimeUnit.MILLISECONDS.toNanos(Math.max(0, nextRetryAtMillis - s.clock().millis()));
    dispatchSignal.await(
        Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(untilScan, untilRetry)));
  }

  /**
   * Hands {@code p} to a free worker if it has work and nobody drains it; false when it did not.
   * Safe from any thread: the semaphore and the draining flag decide who wins.
   */
  private boolean tryStart(LeasedPartition p) {
    if (!claim(p)) {
      return false;
    }
    // Counted from here, not from when the worker gets going: partitions started together finish
    // together, and the first to commit waits a moment for the others' moves (CursorCommitter).
    CursorCommitter.Expected expected = ctx.cursorCommits.expect();
    try {
      runner.execute(
          () -> {
            Thread self = Thread.currentThread();
            draining.add(self);
            WORKER.set(this);
            try {
              CommittingThread.runAsWorker(() -> drain.run(p, false, expected));
            } finally {
              draining.remove(self);
              expected.close();
              WORKER.remove();
              if (!HandlerWatchdog.takeSlotGivenUp()) {
                freeWorkers.release();
              }
              // After the slot is free: a head that arrived while the partition was busy, or a
              // partition left without a worker meanwhile, needs the dispatcher; otherwise nothing
              // does.
              boolean more = waitsForWorker(p);
              if (more) {
                hint(p);
              }
              if (dispatchWanted || more) {
                dispatchSignal.raise();
              }
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      expected.close();
      p.draining.set(false); // shutting down
      freeWorkers.release();
      return false;
    }
    return true;
  }

  /**
   * Whether {@code p} has work that nobody drains, so that it waits for a free worker slot. Read
   * after a failed {@link #tryStart}: a worker that lets go of a partition clears its draining flag
   * before it reads the head (here, in the worker's last step), and a wake-up moves the head before
   * it tries the flag, so one of the two always sees the other's write.
   */
  private boolean waitsForWorker(LeasedPartition p) {
    return p.state == LeasedPartition.State.ACTIVE && !p.draining.get() && drain.hasWork(p);
  }

  /**
   * Takes one of the free slots and the partition's draining flag if {@code p} has work and nobody
   * drains it; false when it did not. Safe from any thread.
   */
  private boolean claim(LeasedPartition p) {
    if (p.state != LeasedPartition.State.ACTIVE || !drain.hasWork(p) || !freeWorkers.tryAcquire()) {
      return false;
    }
    if (!p.draining.compareAndSet(false, true)) {
      freeWorkers.release();
      return false;
    }
    if (p.state != LeasedPartition.State.ACTIVE) {
      freeWorkers.release();
      membership.stopDraining(p); // a release may have started between the check and the claim
      return false;
    }
    return true;
  }

  /**
   * {@code handleOnCommittingThread}: one batch of the claimed {@code p} on the thread that
   * committed it; whatever is left goes to the workers.
   */
  private void drainClaimed(LeasedPartition p) {
    try {
      drain.run(p, true, null);
    } catch (RuntimeException e) {
      ctx.workerError("could not deliver " + p.ref() + " on the committing thread", e);
    } finally {
      freeWorkers.release();
      dispatchSignal.raise(); // more may be waiting
    }
  }

  /**
   * Gives back a claim that was not used (the committing thread's transaction failed after all).
   */
  private void unclaim(LeasedPartition p) {
    membership.stopDraining(p);
    freeWorkers.release();
    dispatchSignal.raise();
  }

  /** Waits up to {@code nanos}; true when the consumer is stopping. */
  @Override
  public boolean waitForStop(long nanos) {
    try {
      return stopLatch.await(nanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  @Override
  public boolean stop(Duration timeout) {
    if (!stopped.compareAndSet(false, true)) {
      return true;
    }
    stopping = true;
    stopLatch.countDown();
    bus.remove(this);
    if (recent != null) {
      recent.unregister(topicIds);
    }
    boolean clean = true;
    if (dispatcher != null) {
      membership.wake();
      dispatchSignal.raise();
      try {
        membership.join(timeout);
        dispatcher.join(timeout.toMillis());
        if (workers != null) {
          workers.shutdown();
        }
        clean = quiet(timeout);
        if (!clean) {
          // The graceful time is over: what is in flight commits nothing more (its events are
          // delivered again), and its handlers are interrupted and get the hard timeout to end.
          abandoned = true;
          interruptWorkers();
          boolean ended = quiet(s.hardShutdownTimeout());
          LOG.log(
              Level.WARNING,
              "consumer {0}: in-flight batches did not finish within {1}; abandoned them (they will be"
                  + " delivered again), and their handlers, interrupted, {2}",
              id,
              timeout,
              ended
                  ? "ended"
                  : "were still running "
                      + s.hardShutdownTimeout()
                      + " later (hardShutdownTimeout)");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        abandoned = true;
        interruptWorkers();
        clean = false;
      }
      if (keyWorkers != null) {
        keyWorkers.shutdownNow(); // the partition workers that used them have ended
      }
      if (watchdog != null) {
        watchdog.stop();
      }
      membership.leave();
    }
    onClose.run();
    LOG.log(Level.INFO, "consumer {0} stopped; handled {1} events", id, ctx.handled.get());
    return clean;
  }

  /**
   * Whether every worker ended within {@code timeout}: the own pool's threads (a thread the
   * watchdog gave up on included) and every slot back, since batches on committing threads hold
   * slots too.
   */
  private boolean quiet(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean ended =
        workers == null || workers.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
    return ended
        && freeWorkers.tryAcquire(
            s.concurrency(), Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
  }

  /** Interrupts every handler in flight on a worker (the consumer's own, or the executor's). */
  private void interruptWorkers() {
    if (workers != null) {
      workers.shutdownNow();
    }
    draining.forEach(Thread::interrupt);
  }

  @Override
  public void close() {
    stop(s.shutdownTimeout());
  }
}
