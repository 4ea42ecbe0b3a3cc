package io.boxline.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PublishStore;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells consumers about events of {@link io.boxline.Sequencing#IN_TRANSACTION} topics, which no
 * sequencer announces. Two cases:
 *
 * <ul>
 *   <li><b>The commit is known</b> ({@code inTransaction}): the committing thread hands the events
 *       to local consumers at once ({@link #committed}); other processes hear of the new heads
 *       through one {@link Store#announce} on this thread, at most one per interval: at once when
 *       no consumer in this process reads events, else one interval later, so that it does not
 *       compete with the local hand-over for the CPU.
 *   <li><b>The commit is not known</b> (a plain {@code publish(connection, ...)}): the heads the
 *       transaction will produce are watched ({@link #watch}); this thread reads those partitions'
 *       committed heads 1, 2, 4 … 64 ms later, then every second, and announces each one once it is
 *       visible. A watched head that never shows up (rolled back) is dropped after {@link
 *       #WATCH_LIMIT_NANOS}. {@code committed()} from the application looks at once.
 * </ul>
 */
final class Announcer {
  private static final System.Logger LOG = System.getLogger(Announcer.class.getName());
  private static final long TAIL_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long TAIL_LAST_NANOS = TimeUnit.MILLISECONDS.toNanos(64);
  private static final long SLOW_LOOK_NANOS = TimeUnit.SECONDS.toNanos(1);
  static final long WATCH_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final PublishStore store;
  private final WakeupBus bus;
  private final RecentEvents recent;
  private final long intervalNanos;
  private final Signal signal = new Signal();
  private final Thread thread;
  private final Object lock = new Object();

  /** Heads to tell other processes, and since when the oldest of them waits. */
  private final Map<PartitionKey, Long> toAnnounce = new HashMap<>();

  private long announceDueNanos;
  private volatile long lastAnnounceNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

  /** Heads some uncommitted transaction will produce, and when each was last watched. */
  private final Map<PartitionKey, long[]> watched = new HashMap<>();

  private long tailStepNanos;
  private long lookDueNanos;
  private boolean lookNow;
  private volatile boolean running = true;

  final AtomicLong announcements = new AtomicLong();
  final AtomicLong looks = new AtomicLong();
  final AtomicLong errors = new AtomicLong();

  Announcer(
      PublishStore store,
      WakeupBus bus,
      RecentEvents recent,
      String instanceId,
      Duration interval) {
    this.store = store;
    this.bus = bus;
    this.recent = recent;
    this.intervalNanos = Math.max(1, interval.toNanos());
    this.thread = new Thread(this::run, "boxline-announcer-" + instanceId);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * Whether the publisher may put the announcement into the producer's own transaction (a NOTIFY
   * sent at its commit) instead of leaving it to this thread: only when no consumer in this process
   * reads events (its hand-over must not share the moment with a notification), and at most one per
   * interval with this thread's own. A NOTIFY in a transaction that writes anyway costs the server
   * far less than one in a transaction of its own. Runs {@code announce} (which adds the NOTIFY, or
   * says the store cannot) when that is allowed; true when the transaction now carries it.
   */
  boolean announceInTransaction(java.util.function.BooleanSupplier announce) {
    if (recent.wanted()) {
      return false;
    }
    long previous;
    synchronized (lock) {
      long now = System.nanoTime();
      previous = lastAnnounceNanos;
      if (now - previous < intervalNanos) {
        return false;
      }
      lastAnnounceNanos = now;
    }
    if (!announce.getAsBoolean()) {
      synchronized (lock) {
        lastAnnounceNanos = previous; // the store cannot: this thread will announce after all
      }
      return false;
    }
    announcements.incrementAndGet();
    return true;
  }

  /** Events of a transaction that has committed: local consumers now, other processes soon. */
  void committed(Map<PartitionKey, List<StoredEvent>> events, boolean announcedInTransaction) {
    List<PartitionHead> heads = new ArrayList<>(events.size());
    for (Map.Entry<PartitionKey, List<StoredEvent>> e : events.entrySet()) {
      List<StoredEvent> list = e.getValue();
      heads.add(
          new PartitionHead(
              e.getKey().topicId(), e.getKey().partition(), list.get(list.size() - 1).sequence()));
    }
    recent.add(events); // before the announcement, so consumers find them
    bus.logAppended(heads);
    if (!announcedInTransaction) {
      queueRemote(heads);
    }
  }

  /** Heads a transaction will produce once it commits, which this process cannot see. */
  void watch(List<PartitionHead> heads) {
    synchronized (lock) {
      long now = System.nanoTime();
      for (PartitionHead h : heads) {
        watched.merge(
            PartitionKey.of(h.topicId(), h.partition()),
            new long[] {h.lastSequence(), now},
            (a, b) -> new long[] {Math.max(a[0], b[0]), now});
      }
      tailStepNanos = TAIL_FIRST_NANOS;
      lookDueNanos = now + TAIL_FIRST_NANOS;
    }
    signal.raise();
  }

  /** The application says a transaction committed: look at the watched heads now. */
  void lookNow() {
    synchronized (lock) {
      if (watched.isEmpty()) {
        return;
      }
      lookNow = true;
    }
    signal.raise();
  }

  private void queueRemote(List<PartitionHead> heads) {
    synchronized (lock) {
      if (toAnnounce.isEmpty()) {
        long now = System.nanoTime();
        // With a consumer in this process, wait one interval: the notification would compete with
        // that consumer's hand-over for the CPU. Without one, send it now, or one interval after
        // the
        // last one (what arrives meanwhile goes together). More often made other processes'
        // consumers
        // slower, not faster: at 1,000 events/s a quarter interval took W2's p50 from 2.5 to 6 ms.
        announceDueNanos =
            recent.wanted()
                ? now + intervalNanos
                : Math.max(now, lastAnnounceNanos + intervalNanos);
      }
      for (PartitionHead h : heads) {
        toAnnounce.merge(PartitionKey.of(h.topicId(), h.partition()), h.lastSequence(), Math::max);
      }
    }
    signal.raise();
  }

  private void run() {
    long backoff = TimeUnit.MILLISECONDS.toNanos(50);
    while (running) {
      try {
        long wait = step();
        backoff = TimeUnit.MILLISECONDS.toNanos(50);
        signal.await(wait);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        errors.incrementAndGet();
        LOG.log(Level.WARNING, "announcing new events failed; retrying", e);
        try {
          signal.await(backoff);
        } catch (InterruptedException ie) {
          return;
        }
        backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  /** Does what is due; returns how long to wait for the next thing. */
  private long step() {
    long now = System.nanoTime();
    List<PartitionKey> look = null;
    synchronized (lock) {
      if (!watched.isEmpty() && (lookNow || now >= lookDueNanos)) {
        lookNow = false;
        look = new ArrayList<>(watched.keySet());
        tailStepNanos =
            tailStepNanos == 0 || tailStepNanos >= TAIL_LAST_NANOS
                ? SLOW_LOOK_NANOS
                : tailStepNanos * 2;
        lookDueNanos = now + tailStepNanos;
      }
    }
    if (look != null) {
      looks.incrementAndGet();
      List<PartitionHead> visible = new ArrayList<>();
      for (PartitionHead h : store.heads(look)) {
        PartitionKey k = PartitionKey.of(h.topicId(), h.partition());
        synchronized (lock) {
          long[] w = watched.get(k);
          if (w == null) {
            continue;
          }
          if (h.lastSequence() >= w[0]) {
            watched.remove(k);
            visible.add(h);
          } else if (now - w[1] > WATCH_LIMIT_NANOS) {
            watched.remove(k); // never committed, or a later look by a consumer will tell
          }
        }
      }
      if (!visible.isEmpty()) {
        bus.logAppended(visible);
        queueRemote(visible);
      }
    }
    List<PartitionHead> send = null;
    synchronized (lock) {
      now = System.nanoTime();
      if (!toAnnounce.isEmpty() && now >= announceDueNanos) {
        send = new ArrayList<>(toAnnounce.size());
        for (Map.Entry<PartitionKey, Long> e : toAnnounce.entrySet()) {
          send.add(new PartitionHead(e.getKey().topicId(), e.getKey().partition(), e.getValue()));
        }
        toAnnounce.clear();
      }
    }
    if (send != null) {
      announcements.incrementAndGet();
      lastAnnounceNanos = System.nanoTime();
      store.announce(send);
    }
    synchronized (lock) {
      now = System.nanoTime();
      long wait = Long.MAX_VALUE;
      if (!watched.isEmpty()) {
        wait = lookNow ? 0 : Math.max(0, lookDueNanos - now);
      }
      if (!toAnnounce.isEmpty()) {
        wait = Math.min(wait, Math.max(0, announceDueNanos - now));
      }
      return wait == Long.MAX_VALUE ? TimeUnit.SECONDS.toNanos(60) : wait;
    }
  }

  /** Stops the thread (bounded wait), then tells other processes what is still queued. */
  void stop(Duration timeout) {
    running = false;
    if (!signal.stopLoop(thread, timeout)) {
      return;
    }
    List<PartitionHead> send = new ArrayList<>();
    synchronized (lock) {
      toAnnounce.forEach((k, seq) -> send.add(new PartitionHead(k.topicId(), k.partition(), seq)));
      toAnnounce.clear();
    }
    if (!send.isEmpty()) {
      try {
        store.announce(send);
      } catch (RuntimeException e) {
        LOG.log(Level.DEBUG, "could not announce new events while closing", e);
      }
    }
  }
}
