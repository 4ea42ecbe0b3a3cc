package io.boxline.internal;

import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import io.boxline.spi.SubscriptionSettlement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Group commit of the cursor moves of one instance's consumers ({@link #across}, one {@link Lane}
 * per subscription), or of one consumer's. Every subscription reads the same log, so the consumers
 * of an instance finish their batches of one sequencer batch at nearly the same moment: committed
 * together, the primary sees one statement and one transaction per moment instead of one per
 * subscription. Within a consumer, likewise: The workers of a consumer finish their partitions'
 * batches at nearly the same moment (one sequencer batch usually feeds several partitions), and
 * each used to commit its cursor in its own round trip. Here a worker that finds no commit running
 * becomes the leader and commits every move waiting at that moment in one {@link
 * io.boxline.spi.Store#settle} call; moves that arrive meanwhile wait and go together in the next
 * call, committed by one of their own workers. A leader waits for company only when more moves are
 * known to be on their way (partitions handed to workers and not yet committed, {@link #expect}),
 * and then at most {@link #COMPANY_WAIT_NANOS}: a lone move commits at once.
 *
 * <p>Each worker still waits for its own outcome before it goes on, so fencing and the
 * compare-and-set on the cursor keep their meaning. A failed call fails every move in it. The wait
 * ignores interrupts (a stopping consumer abandons no commit halfway); it is bounded by the store
 * call under way.
 */
final class CursorCommitter {
  private final Function<List<SubscriptionSettlement>, List<CommitOutcome>> commitAll;

  /**
   * How long a leader waits at most for the moves of deliveries still under way (see {@link
   * #expect}) before it commits without them.
   */
  static final long COMPANY_WAIT_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Condition arrived = lock.newCondition();
  private final List<Request> waiting = new ArrayList<>();
  private boolean committing;

  /** Deliveries under way whose move has not arrived yet. */
  private int expected;

  private final AtomicLong calls;
  private final AtomicLong moves;
  private final long companyWaitNanos;

  /**
   * @param commitAll commits moves together, outcomes in input order (Store#settle)
   */
  CursorCommitter(Function<List<Settlement>, List<CommitOutcome>> commitAll) {
    this(commitAll, new AtomicLong(), new AtomicLong());
  }

  /**
   * The group commit of several subscriptions' moves ({@link
   * io.boxline.spi.CursorStore#settleAcross}); each consumer commits through its {@link #lane}.
   */
  static CursorCommitter across(
      Function<List<SubscriptionSettlement>, List<CommitOutcome>> commitAll,
      AtomicLong calls,
      AtomicLong moves) {
    return new CursorCommitter(COMPANY_WAIT_NANOS, commitAll, calls, moves);
  }

  /**
   * @param calls counts the store calls made (shared by the consumers of one instance)
   * @param moves counts the moves those calls carried
   */
  CursorCommitter(
      Function<List<Settlement>, List<CommitOutcome>> commitAll,
      AtomicLong calls,
      AtomicLong moves) {
    this(commitAll, calls, moves, COMPANY_WAIT_NANOS);
  }

  /**
   * @param companyWaitNanos how long a leader waits at most for expected moves
   */
  CursorCommitter(
      Function<List<Settlement>, List<CommitOutcome>> commitAll,
      AtomicLong calls,
      AtomicLong moves,
      long companyWaitNanos) {
    this(
        companyWaitNanos,
        all -> {
          List<Settlement> moveList = new ArrayList<>(all.size());
          all.forEach(m -> moveList.add(m.settlement()));
          return commitAll.apply(moveList);
        },
        calls,
        moves);
  }

  private CursorCommitter(
      long companyWaitNanos,
      Function<List<SubscriptionSettlement>, List<CommitOutcome>> commitAll,
      AtomicLong calls,
      AtomicLong moves) {
    this.commitAll = commitAll;
    this.calls = calls;
    this.moves = moves;
    this.companyWaitNanos = companyWaitNanos;
  }

  private static final class Request {
    final long subscription;
    final Settlement move;
    CommitOutcome outcome;
    RuntimeException failure;
    boolean done;

    Request(long subscription, Settlement move) {
      this.subscription = subscription;
      this.move = move;
    }
  }

  /** One subscription's way into this group commit. */
  Lane lane(long subscriptionId) {
    return new Lane(subscriptionId);
  }

  /** What a consumer commits through: its subscription's moves, with every other lane's. */
  final class Lane {
    private final long subscriptionId;

    private Lane(long subscriptionId) {
      this.subscriptionId = subscriptionId;
    }

    /** See {@link CursorCommitter#expect}. */
    Expected expect() {
      return CursorCommitter.this.expect();
    }

    /** See {@link CursorCommitter#commit(Settlement, Expected)}. */
    CommitOutcome commit(Settlement move, Expected of) {
      return CursorCommitter.this.commit(subscriptionId, move, of);
    }
  }

  /**
   * A delivery that will commit its move here has begun. Deliveries fed by one sequencer batch run
   * side by side and finish within moments of each other; a leader that knows more moves are on
   * their way waits for them (at most {@link #COMPANY_WAIT_NANOS} by default), so that they share
   * one call instead of the first going alone and the rest in a second. Close it when the delivery
   * ends.
   */
  Expected expect() {
    lock.lock();
    try {
      expected++;
    } finally {
      lock.unlock();
    }
    return new Expected();
  }

  /** A delivery's move, expected until it arrives ({@link #commit}) or the delivery ends. */
  final class Expected implements AutoCloseable {
    private boolean pending = true;

    /** Under the lock. */
    private void arrive() {
      if (pending) {
        pending = false;
        expected--;
        arrived.signal();
      }
    }

    @Override
    public void close() {
      lock.lock();
      try {
        arrive();
      } finally {
        lock.unlock();
      }
    }
  }

  /** Commits {@code move} together with whatever else is waiting; blocks until it is decided. */
  CommitOutcome commit(Settlement move) {
    return commit(move, null);
  }

  /**
   * Commits the move of delivery {@code of} (may be null) together with whatever else is waiting;
   * blocks until it is decided.
   */
  CommitOutcome commit(Settlement move, Expected of) {
    return commit(0, move, of);
  }

  private CommitOutcome commit(long subscription, Settlement move, Expected of) {
    Request mine = new Request(subscription, move);
    lock.lock();
    try {
      waiting.add(mine);
      if (of != null) {
        of.arrive();
      }
      while (true) {
        while (!mine.done && committing) {
          changed.awaitUninterruptibly();
        }
        if (mine.done) {
          return result(mine);
        }
        committing = true; // this worker leads the next call
        awaitCompany();
        List<Request> batch = takeBatch();
        lock.unlock();
        try {
          run(batch);
        } finally {
          lock.lock();
          committing = false;
          changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** The leader, under the lock: gives the moves still expected a moment to join this call. */
  private void awaitCompany() {
    long left = companyWaitNanos;
    while (expected > 0 && left > 0) {
      try {
        left = arrived.awaitNanos(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // a stopping consumer: commit what is here
        return;
      }
    }
  }

  /** A subscription's partition: one cursor row. */
  private record Cursor(long subscription, PartitionKey partition) {}

  /** At most one move per cursor per call (a partition's next move needs this one's result). */
  private List<Request> takeBatch() {
    List<Request> batch = new ArrayList<>(waiting.size());
    List<Request> later = new ArrayList<>();
    Set<Cursor> seen = new HashSet<>();
    for (Request r : waiting) {
      (seen.add(new Cursor(r.subscription, r.move.partition())) ? batch : later).add(r);
    }
    waiting.clear();
    waiting.addAll(later);
    // One lock order for every caller, so two calls never wait on each other's cursor rows.
    batch.sort(
        Comparator.comparingLong((Request r) -> r.subscription)
            .thenComparingLong(r -> r.move.partition().topicId())
            .thenComparingInt(r -> r.move.partition().partition()));
    return batch;
  }

  private void run(List<Request> batch) {
    if (batch.stream().mapToLong(r -> r.subscription).distinct().count() > 1) {
      // Several subscriptions in one call: if it fails, each subscription's moves are tried alone,
      // so that one subscription's failure (say, it was just deleted) fails no other's.
      List<CommitOutcome> together = null;
      boolean failed = false;
      try {
        together = call(batch);
      } catch (RuntimeException e) {
        failed = true;
      } finally {
        if (!failed) {
          decide(batch, together, null);
        }
      }
      if (failed) {
        calls.incrementAndGet();
        java.util.Map<Long, List<Request>> bySubscription = new java.util.LinkedHashMap<>();
        batch.forEach(
            r -> bySubscription.computeIfAbsent(r.subscription, s -> new ArrayList<>()).add(r));
        bySubscription.values().forEach(this::runAlone);
      }
      return;
    }
    runAlone(batch);
  }

  /** The store call of {@code batch}; fails when it returns the wrong number of outcomes. */
  private List<CommitOutcome> call(List<Request> batch) {
    List<SubscriptionSettlement> list = new ArrayList<>(batch.size());
    for (Request r : batch) {
      list.add(new SubscriptionSettlement(r.subscription, r.move));
    }
    List<CommitOutcome> outcomes = commitAll.apply(list);
    if (outcomes.size() != list.size()) {
      throw new IllegalStateException(
          "the store's settle returned "
              + outcomes.size()
              + " outcomes for "
              + list.size()
              + " moves");
    }
    return outcomes;
  }

  private void runAlone(List<Request> batch) {
    List<CommitOutcome> outcomes = null;
    RuntimeException failure = null;
    try {
      outcomes = call(batch);
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      decide(batch, outcomes, failure);
    }
  }

  /** Counts the call and hands each request its outcome, or the failure. */
  private void decide(List<Request> batch, List<CommitOutcome> outcomes, RuntimeException failed) {
    RuntimeException failure = failed;
    // Even when an Error escapes (called from a finally): every request of the call is decided, or
    // its worker, no longer in the waiting list, would wait for good.
    if (outcomes == null && failure == null) {
      failure = new IllegalStateException("the cursor commit failed with an error");
    }
    calls.incrementAndGet();
    moves.addAndGet(batch.size());
    lock.lock(); // the waiting workers read their request under the lock
    try {
      for (int i = 0; i < batch.size(); i++) {
        Request r = batch.get(i);
        if (failure != null) {
          r.failure = failure;
        } else {
          r.outcome = outcomes.get(i);
        }
        r.done = true;
      }
    } finally {
      lock.unlock();
    }
  }

  private static CommitOutcome result(Request r) {
    if (r.failure != null) {
      throw r.failure;
    }
    return r.outcome;
  }

  /** Moves waiting for a call (for tests). */
  int waiting() {
    lock.lock();
    try {
      return waiting.size();
    } finally {
      lock.unlock();
    }
  }

  /** Store calls made so far (by every committer sharing the counter). */
  long calls() {
    return calls.get();
  }

  /** Cursor moves committed (or refused) through those calls. */
  long moves() {
    return moves.get();
  }
}
