package io.boxline.internal;

import io.boxline.Event;
import io.boxline.MalformedEventException;
import io.boxline.PartitionLag;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.Resolution;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the parts of one consumer share: its settings, its store, its counters, the callbacks into
 * the consumer that owns the partitions, and the one path from a failed attempt to its outcome
 * (retry, park, dead letter) that every delivery strategy uses.
 */
final class ConsumerContext {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /** What the consumer that owns the partitions does for its parts. */
  interface Host {
    /** True once the consumer is stopping. */
    boolean stopping();

    /** True once the consumer gave up its in-flight batches (shutdown timeout passed). */
    boolean abandoned();

    /** Forgets {@code p}: another member took it. */
    void lose(LeasedPartition p, String why);

    /** Waits up to {@code nanos}; true when the consumer is stopping. */
    boolean waitForStop(long nanos);

    /**
     * Whether this thread is one of the consumer's workers (the watchdog interrupts only those).
     */
    boolean onWorker();

    /** Whether this thread is one of the consumer's key threads ({@code parallelByKey}). */
    boolean onKeyWorker();

    /** The consumer's key threads, or null without {@code parallelByKey}. */
    java.util.concurrent.ExecutorService keyWorkers();
  }

  /** A transactional handler's call. */
  interface TxCall {
    void run() throws java.sql.SQLException;
  }

  /** Handler calls in progress, by thread: reported at check-ins for operators. */
  private final Map<Thread, MemberStatus.Running> running = new ConcurrentHashMap<>();

  /** Set when the consumer has a handler timeout. */
  private volatile HandlerWatchdog watchdog;

  final Store store;
  final ConsumerSettings s;
  final SubscriptionInfo subscription;
  final String id;
  final String group;
  final RecentEvents recent;
  final CursorCommitter.Lane cursorCommits;
  final FailurePolicy failures;
  final AtomicLong handled = new AtomicLong();
  final AtomicLong fenced = new AtomicLong();
  private final Host host;

  ConsumerContext(
      Store store,
      ConsumerSettings s,
      SubscriptionInfo subscription,
      RecentEvents recent,
      CursorCommitter.Lane cursorCommits,
      Host host) {
    this.store = store;
    this.s = s;
    this.subscription = subscription;
    this.id = s.id();
    this.group = subscription.name();
    this.recent = recent;
    this.cursorCommits = cursorCommits;
    this.failures = FailurePolicy.of(s, subscription.name());
    this.host = host;
  }

  boolean stopping() {
    return host.stopping();
  }

  /** The consumer's key threads, or null without {@code parallelByKey}. */
  java.util.concurrent.ExecutorService keyWorkers() {
    return host.keyWorkers();
  }

  void watchdog(HandlerWatchdog w) {
    this.watchdog = w;
  }

  /** Runs a handler call on {@code events}; on a worker, under the handler timeout. */
  void callHandler(LeasedPartition p, List<Event> events, Runnable call) {
    try {
      callTxHandler(p, events, call::run);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("a plain handler cannot throw SQLException", e);
    }
  }

  /**
   * Runs a handler call; on a worker, under the handler timeout: a call the watchdog interrupted
   * fails with {@link io.boxline.HandlerTimeoutException}, whether it threw or returned then.
   */
  void callTxHandler(LeasedPartition p, List<Event> events, TxCall call)
      throws java.sql.SQLException {
    Thread me = Thread.currentThread();
    running.put(me, runningCall(p, events));
    try {
      callWatched(p, call);
    } finally {
      running.remove(me);
    }
  }

  private MemberStatus.Running runningCall(LeasedPartition p, List<Event> events) {
    return new MemberStatus.Running(
        p.key.topicId(),
        p.key.partition(),
        events.get(0).sequence(),
        events.get(events.size() - 1).sequence(),
        events.size(),
        s.clock().instant());
  }

  /**
   * What this member reports at its check-in: where it runs and its handler calls in progress,
   * oldest first.
   */
  MemberStatus status() {
    List<MemberStatus.Running> calls = new ArrayList<>(running.values());
    calls.sort(java.util.Comparator.comparing(MemberStatus.Running::startedAt));
    return new MemberStatus(ProcessInfo.HOST, ProcessInfo.PROCESS, calls);
  }

  private void callWatched(LeasedPartition p, TxCall call) throws java.sql.SQLException {
    HandlerWatchdog w = watchdog;
    boolean worker = host.onWorker();
    if (w == null || !(worker || host.onKeyWorker())) {
      call.run();
      return;
    }
    HandlerWatchdog.Call c = w.enter(p, worker);
    try {
      call.run();
    } catch (java.sql.SQLException | RuntimeException e) {
      if (c.interrupted) {
        throw new io.boxline.HandlerTimeoutException(id, s.handlerTimeout(), e);
      }
      throw e;
    } finally {
      w.exit(c);
    }
    if (c.interrupted) {
      // It returned, but only after the timeout (most likely because of the interrupt): the
      // attempt fails like one that threw.
      throw new io.boxline.HandlerTimeoutException(id, s.handlerTimeout(), null);
    }
  }

  boolean abandoned() {
    return host.abandoned();
  }

  /**
   * The store refused {@code what} because this consumer's epoch for {@code p} is stale (another
   * consumer took the partition): counted, and the partition given up.
   */
  void fencedOut(LeasedPartition p, String what) {
    fenced.incrementAndGet();
    lose(p, what + ": epoch " + p.epoch + " is stale (another consumer took it)");
  }

  void lose(LeasedPartition p, String why) {
    host.lose(p, why);
  }

  boolean waitForStop(long nanos) {
    return host.waitForStop(nanos);
  }

  Event toEvent(LeasedPartition p, StoredEvent r) {
    Event e = event(p, r);
    if (r.malformed() != null && p.malformed.put(r.sequence(), r.malformed()) == null) {
      LOG.log(
          Level.WARNING,
          "consumer {0}: {1} cannot be delivered as stored ({2}); each attempt fails, so it will be"
              + " dead-lettered under the retry policy while the other keys of {3} flow",
          id,
          e,
          r.malformed(),
          p.ref());
      if (s.observers().active()) {
        s.observers().malformed(group, e, r.malformed());
      }
    }
    return e;
  }

  static Event event(LeasedPartition p, StoredEvent r) {
    return r.toEvent(p.topic.name(), p.key.partition());
  }

  /**
   * An event with a deliver-at time in the future: parked until then instead of holding up the
   * partition.
   */
  boolean notYetDue(Event e) {
    return e.deliverAt() != null && e.deliverAt().isAfter(s.clock().instant());
  }

  RetryPolicy policyFor(Event e) {
    return failures.policyFor(e);
  }

  /**
   * The stored cursor is not where this consumer left it (a rewind while it ran, or a database
   * crash that lost asynchronous commits): go back to it, so nothing behind it is skipped.
   */
  void cursorMovedUnderneath(LeasedPartition p) {
    long stored = storedPosition(p);
    LOG.log(
        Level.WARNING,
        "consumer {0}: the stored cursor of {1} is at {2}, not at {3} (rewound while it ran,"
            + " or the database restarted and lost asynchronous commits); delivering again from"
            + " there",
        id,
        p.ref(),
        stored,
        p.position);
    if (recent != null) {
      recent.clear();
    }
    p.position = stored;
  }

  long storedPosition(LeasedPartition p) {
    for (PartitionLag lag : store.lag(subscription.id())) {
      if (lag.topic().equals(p.topic.name()) && lag.partition() == p.key.partition()) {
        return lag.position();
      }
    }
    throw new IllegalStateException("no cursor for " + p.ref() + " of " + group);
  }

  /**
   * Fails an attempt at an event read from a row that cannot be delivered as it is; the handler is
   * never called with it.
   */
  static void requireWellFormed(LeasedPartition p, Event e) {
    String why = p.malformed.get(e.sequence());
    if (why != null) {
      throw new MalformedEventException(e + " cannot be delivered: " + why);
    }
  }

  /** Forgets what is known about a malformed event once it is settled (dead-lettered). */
  static void settled(LeasedPartition p, Event e, ParkState park) {
    if (park == ParkState.DEAD) {
      p.malformed.remove(e.sequence());
    }
  }

  /**
   * The parked row for {@code e} with parked outcome {@code o}, noting on {@code p} what it means:
   * later events of the key wait behind it (a dead letter only holds its key when dead letters
   * block keys), and the partition's next retry is due no later than its next attempt.
   */
  Park park(LeasedPartition p, Event e, Outcome o) {
    settled(p, e, o.park());
    if (e.key() != null && failures.holdsKey(o.park())) {
      p.blockedKeys.add(e.key());
    }
    if (o.park() == ParkState.RETRY) {
      p.nextRetryAtMillis = Math.min(p.nextRetryAtMillis, o.nextAttemptAt().toEpochMilli());
    }
    return FailurePolicy.park(e, o);
  }

  /** The outcome of an event that waits behind an earlier one of its key. */
  Outcome waiting() {
    return failures.waiting();
  }

  /** The handler's inbox key for the event, or null; a key the database cannot store fails. */
  String inboxKeyOf(Event e) {
    return s.inboxKey() == null
        ? null
        : io.boxline.Names.requireStorable(
            "inbox key", s.inboxKey().apply(e), io.boxline.Names.MAX_KEY_LENGTH);
  }

  /** The outcome of a failed attempt: the handler's decision, or the retry policy's. */
  Outcome decide(Event e, RuntimeException failure, int attempt, RetryPolicy policy) {
    return failures.decide(e, failure, attempt, policy);
  }

  static String describe(Throwable t) {
    return FailurePolicy.describe(t);
  }

  static Resolution toResolution(Outcome o) {
    return FailurePolicy.toResolution(o);
  }

  void hook(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a hook of consumer " + id + " failed", e);
    }
  }

  void workerError(String what, RuntimeException e) {
    LOG.log(Level.WARNING, "consumer " + id + " " + what + "; retrying", e);
    hook(() -> s.hooks().onWorkerError(e));
  }
}
