package io.boxline.internal;

import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Delivery for transactional handlers: the handler's writes and the cursor (or the parked row)
 * commit in one fenced transaction; a batch runs in one transaction, and when an event of it fails
 * it is redone one event per transaction so the culprit is retried or parked on its own.
 */
final class TransactionalDelivery implements Delivery {
  private final ConsumerContext c;
  private final ConsumerSettings s;
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
    long[] took = new long[1];
    TxResult r =
        fenced(
            p,
            tx -> {
              c.requireWellFormed(p, e);
              c.hook(() -> s.hooks().beforeEvent(e, attempt));
              long start = System.nanoTime();
              if (claimInbox(tx, e)) {
                c.callTxHandler(p, List.of(e), () -> s.txHandler().handle(e, tx));
              }
              took[0] = System.nanoTime() - start;
              return parked ? finishing(p, e.sequence()) : moveTo(p, e.sequence(), List.of());
            });
    if (r.committed) {
      if (!parked) {
        p.position = e.sequence();
      }
      c.hook(() -> s.hooks().afterEvent(e, Duration.ofNanos(took[0])));
    } else if (r.failure != null && !(r.failure instanceof HandlerDecision)) {
      c.hook(() -> s.hooks().onError(e, r.failure, attempt));
    }
    return r;
  }

  /** A settlement that moves the cursor of {@code p} to {@code position}, parking {@code parks}. */
  private static Settlement moveTo(LeasedPartition p, long position, List<Park> parks) {
    return Settlement.move(p.key, p.epoch, p.position, position).parking(parks);
  }

  /** A settlement that leaves the cursor of {@code p} and removes its parked event {@code seq}. */
  private static Settlement finishing(LeasedPartition p, long seq) {
    return Settlement.move(p.key, p.epoch, p.position, p.position).finishing(List.of(seq));
  }

  /** The work of a fenced transaction, on its connection: what it settles. */
  @FunctionalInterface
  private interface FencedWork {
    Settlement run(java.sql.Connection tx) throws java.sql.SQLException;
  }

  /** Thrown inside a runner's transaction when the cursor is not this consumer's to move. */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient TxResult result;

    Refused(TxResult result) {
      super(null, null, false, false);
      this.result = result;
    }
  }

  /**
   * Runs {@code work} in a transaction and ends it with its settlement ({@link Store#settleIn}):
   * the cursor moves (or the parked event is removed) only if it still carries this consumer's
   * epoch and position, with the handler's writes. Boxline's own transaction, or the {@link
   * io.boxline.TransactionRunner}'s when the consumer has one (which commits it). A refused
   * settlement, a failure of {@code work} or of the commit rolls everything back.
   */
  private TxResult fenced(LeasedPartition p, FencedWork work) {
    io.boxline.TransactionRunner runner = s.txRunner();
    if (runner != null) {
      try {
        return runner.inNewTransaction(
            tx -> {
              CommitOutcome o = store.settleIn(tx, subscription.id(), work.run(tx));
              if (o != CommitOutcome.COMMITTED) {
                throw new Refused(refused(o));
              }
              return TxResult.COMMITTED;
            });
      } catch (Refused r) {
        return r.result;
      } catch (RuntimeException failure) {
        return new TxResult(false, failure);
      }
    }
    java.sql.Connection tx = store.openTransaction();
    try {
      CommitOutcome o = store.settleIn(tx, subscription.id(), work.run(tx));
      if (o != CommitOutcome.COMMITTED) {
        rollbackQuietly(tx);
        return refused(o);
      }
      tx.commit();
    } catch (java.sql.SQLException | RuntimeException failure) {
      rollbackQuietly(tx);
      return new TxResult(false, unchecked(failure));
    }
    try {
      tx.close();
    } catch (java.sql.SQLException ignored) {
      // committed; the pool discards a connection that fails to close
    }
    return TxResult.COMMITTED;
  }

  /**
   * A refused settlement: fenced, or the cursor is not where this consumer left it (transactional
   * deliveries read the log, so a changed log means the same: go back to the stored cursor).
   */
  private static TxResult refused(CommitOutcome o) {
    return o == CommitOutcome.FENCED ? TxResult.FENCED : TxResult.MOVED;
  }

  private static RuntimeException unchecked(Exception failure) {
    return failure instanceof RuntimeException r
        ? r
        : new io.boxline.StoreException(
            "transactional handler failed: " + failure.getMessage(), failure);
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
  @Override
  public boolean deliver(
      LeasedPartition p, List<Event> batch, boolean handedOver, CursorCommitter.Expected started) {
    if (started != null) {
      started.close(); // its own transaction settles the cursor, not the group commit
    }
    return deliver(p, batch);
  }

  /**
   * One attempt in a transaction that removes the parked event with the handler's writes; a failure
   * comes back as the resolution to record.
   */
  @Override
  public Retry retry(LeasedPartition p, Event e, int attempt) {
    TxResult t = attemptTransactional(p, e, attempt, true);
    if (t == TxResult.MOVED) {
      c.cursorMovedUnderneath(p);
      return Retry.LOST;
    }
    if (t == TxResult.FENCED) {
      c.fencedOut(p, "retry rejected");
      return Retry.LOST;
    }
    if (t.committed) {
      return Retry.HANDLED;
    }
    return Retry.record(c.toResolution(c.decide(e, t.failure, attempt, c.policyFor(e))));
  }

  private boolean deliver(LeasedPartition p, List<Event> batch) {
    int[] succeeded = new int[1];
    long last = batch.get(batch.size() - 1).sequence();
    TxResult whole =
        fenced(
            p,
            tx -> {
              List<Park> parks = new ArrayList<>();
              succeeded[0] = 0;
              for (Event e : batch) {
                if (c.notYetDue(e)) {
                  throw new IllegalStateException("scheduled event in batch"); // redo one by one
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
                succeeded[0]++;
              }
              return moveTo(p, last, parks);
            });
    if (whole.committed) {
      p.position = last;
      c.handled.addAndGet(succeeded[0]);
      return true;
    }
    if (!giveUpIfRefused(p, whole)) {
      return false;
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
      Outcome parked = outcome;
      TxResult t =
          fenced(
              p,
              tx ->
                  moveTo(
                      p,
                      e.sequence(),
                      parked.park() != null ? List.of(c.park(p, e, parked)) : List.of()));
      if (!t.committed) {
        if (giveUpIfRefused(p, t)) {
          throw t.failure; // the park could not be written: the partition's batch fails
        }
        return false;
      }
      p.position = e.sequence();
    }
    return true;
  }

  /**
   * After a transaction that did not commit: false (and the partition given up or re-read) when it
   * was refused because the cursor is not this consumer's to move; true for a failure.
   */
  private boolean giveUpIfRefused(LeasedPartition p, TxResult t) {
    if (t == TxResult.MOVED) {
      c.cursorMovedUnderneath(p);
      return false;
    }
    if (t == TxResult.FENCED) {
      c.fencedOut(p, "cursor is fenced");
      return false;
    }
    return true;
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
