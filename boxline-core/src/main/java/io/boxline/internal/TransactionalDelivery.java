package io.boxline.internal;

import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.FencedTransaction;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Delivery for transactional handlers: the handler's writes and the cursor (or the parked row)
 * commit in one fenced transaction; a batch runs in one transaction, and when an event of it fails
 * it is redone one event per transaction so the culprit is retried or parked on its own.
 */
final class TransactionalDelivery {
  private final ConsumerContext c;
  private final DefaultConsumer.Settings s;
  private final Store store;
  private final SubscriptionInfo subscription;

  TransactionalDelivery(ConsumerContext c) {
    this.c = c;
    this.s = c.s;
    this.store = c.store;
    this.subscription = c.subscription;
  }

  /**
   * In a transactional handler's transaction: false when the event is a duplicate (skip the
   * handler).
   */
  private boolean claimInbox(java.sql.Connection tx, Event e) {
    String dedup = c.inboxKeyOf(e);
    return dedup == null || store.inboxClaim(tx, subscription.id(), dedup);
  }

  /** Result of one attempt in a fenced transaction. */
  static final class TxResult {
    static final TxResult FENCED = new TxResult(false, null);
    static final TxResult MOVED = new TxResult(false, null);
    static final TxResult COMMITTED = new TxResult(true, null);
    final boolean committed;
    final RuntimeException failure;

    TxResult(boolean committed, RuntimeException failure) {
      this.committed = committed;
      this.failure = failure;
    }
  }

  /**
   * One attempt of a transactional handler: the handler's writes and the bookkeeping (the cursor
   * advance for an event at the cursor, or the removal from the retry store for a parked one)
   * commit together. The transaction holds the cursor row, checked against the epoch, so a fenced
   * consumer commits nothing.
   */
  TxResult attemptTransactional(LeasedPartition p, Event e, int attempt, boolean parked) {
    FencedTransaction begun = store.beginFenced(subscription.id(), p.key, p.epoch, p.position);
    if (begun.connection() == null) {
      return begun.refusal() == CommitOutcome.CURSOR_MOVED ? TxResult.MOVED : TxResult.FENCED;
    }
    java.sql.Connection tx = begun.connection();
    try {
      c.requireWellFormed(p, e);
      c.hook(() -> s.hooks().beforeEvent(e, attempt));
      long start = System.nanoTime();
      if (claimInbox(tx, e)) {
        c.callTxHandler(p, List.of(e), () -> s.txHandler().handle(e, tx));
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      if (parked) {
        store.finishParkedFenced(tx, subscription.id(), p.key, e.sequence());
      } else {
        store.commitFenced(tx, subscription.id(), p.key, e.sequence(), List.of());
        p.position = e.sequence();
      }
      c.hook(() -> s.hooks().afterEvent(e, took));
      return TxResult.COMMITTED;
    } catch (java.sql.SQLException | RuntimeException failure) {
      rollbackQuietly(tx);
      RuntimeException f =
          failure instanceof RuntimeException
              ? (RuntimeException) failure
              : new io.boxline.StoreException(
                  "transactional handler failed: " + failure.getMessage(), failure);
      if (!(f instanceof HandlerDecision)) {
        c.hook(() -> s.hooks().onError(e, f, attempt));
      }
      return new TxResult(false, f);
    }
  }

  private static void rollbackQuietly(java.sql.Connection tx) {
    try {
      if (!tx.isClosed()) {
        tx.rollback();
        tx.close();
      }
    } catch (java.sql.SQLException ignored) {
      // the connection is broken; the pool discards it and the transaction is gone either way
    }
  }

  /**
   * Transactional delivery: the whole batch in one fenced transaction (one commit for many events);
   * if any event fails, that transaction rolls back and the batch is redone one event per
   * transaction, so the culprit is retried or parked on its own and the others' effects still
   * commit exactly once.
   */
  boolean deliver(LeasedPartition p, List<Event> batch) {
    java.sql.Connection tx = beginFencedOrGiveUp(p);
    if (tx == null) {
      return false;
    }
    List<Park> parks = new ArrayList<>();
    int succeeded = 0;
    try {
      for (Event e : batch) {
        if (c.notYetDue(e)) {
          throw new IllegalStateException("scheduled event in batch"); // redo one by one below
        }
        if (e.key() != null && p.blockedKeys.contains(e.key())) {
          parks.add(c.park(p, e, c.waiting()));
          continue;
        }
        c.requireWellFormed(p, e); // rolls back and redoes the batch one event at a time
        c.hook(() -> s.hooks().beforeEvent(e, 1));
        long start = System.nanoTime();
        if (claimInbox(tx, e)) {
          c.callTxHandler(p, List.of(e), () -> s.txHandler().handle(e, tx));
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        c.hook(() -> s.hooks().afterEvent(e, took));
        succeeded++;
      }
      long last = batch.get(batch.size() - 1).sequence();
      store.commitFenced(tx, subscription.id(), p.key, last, parks);
      p.position = last;
      c.handled.addAndGet(succeeded);
      return true;
    } catch (java.sql.SQLException | RuntimeException failure) {
      rollbackQuietly(tx);
    }
    for (Event e : batch) {
      if (c.stopping() || p.state != LeasedPartition.State.ACTIVE) {
        return false;
      }
      Outcome outcome;
      if (e.key() != null && p.blockedKeys.contains(e.key())) {
        outcome = c.waiting();
      } else if (c.notYetDue(e)) {
        outcome = new Outcome(ParkState.RETRY, 0, e.deliverAt(), "scheduled");
      } else {
        outcome = attemptTransactionalInPlace(p, e);
        if (outcome == null) {
          return false;
        }
        if (outcome == Outcome.DONE) {
          c.handled.incrementAndGet();
          continue; // committed with its effects
        }
      }
      // Parked (or ignored): move the cursor past it, with the park, in a transaction of its own.
      java.sql.Connection parkTx = beginFencedOrGiveUp(p);
      if (parkTx == null) {
        return false;
      }
      List<Park> one = new ArrayList<>();
      if (outcome.park() != null) {
        one.add(c.park(p, e, outcome));
      }
      store.commitFenced(parkTx, subscription.id(), p.key, e.sequence(), one);
      p.position = e.sequence();
    }
    return true;
  }

  /**
   * A transaction holding the partition's cursor at this consumer's epoch and position, or null
   * after losing the partition (fenced) or going back to a cursor moved underneath.
   */
  private java.sql.Connection beginFencedOrGiveUp(LeasedPartition p) {
    FencedTransaction t = store.beginFenced(subscription.id(), p.key, p.epoch, p.position);
    if (t.connection() != null) {
      return t.connection();
    }
    if (t.refusal() == CommitOutcome.CURSOR_MOVED) {
      c.cursorMovedUnderneath(p);
    } else {
      c.fencedOut(p, "cursor is fenced");
    }
    return null;
  }

  /**
   * In-place attempts of a transactional handler. Returns {@link Outcome#DONE} when committed, an
   * outcome to park (or an ignore, as a park-less non-DONE outcome), or null when stopping or
   * fenced.
   */
  private Outcome attemptTransactionalInPlace(LeasedPartition p, Event e) {
    RetryPolicy policy = c.policyFor(e);
    long deadline = System.nanoTime() + policy.inPlaceTime().toNanos();
    for (int attempt = 1; ; attempt++) {
      TxResult t = attemptTransactional(p, e, attempt, false);
      if (t == TxResult.MOVED) {
        c.cursorMovedUnderneath(p);
        return null;
      }
      if (t == TxResult.FENCED) {
        c.fencedOut(p, "cursor is fenced");
        return null;
      }
      if (t.committed) {
        return Outcome.DONE;
      }
      Outcome o = c.decide(e, t.failure, attempt, policy);
      if (o.park() == null) {
        return Outcome
            .IGNORED; // the handler ignored it: its writes were rolled back, the cursor moves on
      }
      if (o.park() != ParkState.RETRY
          || t.failure instanceof HandlerDecision
          || attempt >= policy.inPlaceAttempts()) {
        return o;
      }
      long delayNanos = Duration.between(s.clock().instant(), o.nextAttemptAt()).toNanos();
      if (System.nanoTime() + delayNanos > deadline) {
        return o;
      }
      if (c.waitForStop(delayNanos)) {
        return null;
      }
    }
  }
}
