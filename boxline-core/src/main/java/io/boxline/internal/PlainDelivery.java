package io.boxline.internal;

import io.boxline.BatchFailure;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Delivery for plain and batch handlers: a batch read at the cursor is handled (a batch handler
 * gets it whole first), failures are retried in place and then parked, and the cursor moves past
 * everything with the parks in one commit.
 */
final class PlainDelivery implements Delivery {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  private final ConsumerContext c;
  private final ConsumerSettings s;
  private final Store store;
  private final SubscriptionInfo subscription;
  private final RecentEvents recent;
  private final String id;

  PlainDelivery(ConsumerContext c) {
    this.c = c;
    this.s = c.s;
    this.store = c.store;
    this.subscription = c.subscription;
    this.recent = c.recent;
    this.id = c.id;
  }

  /** Progress through one batch: what is done, what is parked, and what is already committed. */
  final class Progress {
    final LeasedPartition p;
    final List<Event> batch;
    final List<Park> parks = new ArrayList<>();
    int done;
    int committed;

    /** Events handled successfully (not parked), and how many of them are already counted. */
    int succeeded;

    int counted;

    /** The events came from the sequencer's hand-over, not from a read of the log. */
    final boolean handedOver;

    /** The log did not hold the handed-over events: nothing more of this batch may commit. */
    boolean stale;

    /** This delivery's move, expected by the group commit until it arrives. */
    final CursorCommitter.Expected expected;

    Progress(
        LeasedPartition p,
        List<Event> batch,
        boolean handedOver,
        CursorCommitter.Expected expected) {
      this.p = p;
      this.batch = batch;
      this.handedOver = handedOver;
      this.expected = expected;
    }

    void record(Event e, Outcome o) {
      if (o.park() != null) {
        parks.add(c.park(p, e, o));
      } else {
        succeeded++;
      }
      done++;
    }

    /** Commits handled and parked events so far; false when fenced. */
    boolean commit() {
      if (stale || done == committed || c.abandoned() || !parks.isEmpty()) {
        expected.close(); // no move of this delivery joins the group commit now
      }
      if (stale) {
        return false;
      }
      if (done == committed || c.abandoned()) {
        return true;
      }
      CommitOutcome outcome;
      long position = batch.get(done - 1).sequence();
      // Handed-over events commit only if the log still holds them: name them.
      List<Settlement.HeldEvent> held = List.of();
      if (handedOver) {
        List<Settlement.HeldEvent> named = new ArrayList<>(done - committed);
        for (int i = committed; i < done; i++) {
          Event e = batch.get(i);
          named.add(new Settlement.HeldEvent(e.sequence(), e.id()));
        }
        held = named;
      }
      Settlement settlement =
          Settlement.move(p.key, p.epoch, p.position, position)
              .parking(List.copyOf(parks))
              .holding(held);
      outcome =
          parks.isEmpty()
              // The common case: committed together with the other partitions' moves of this
              // moment.
              ? c.cursorCommits.commit(settlement, expected)
              : store.settle(subscription.id(), List.of(settlement)).get(0);
      if (outcome == CommitOutcome.CURSOR_MOVED) {
        // A database crash lost cursor commits (they are asynchronous) and maybe the sequencer
        // batches behind them, which are then sequenced again. Go back to the stored cursor, so
        // that nothing sequenced anew behind this consumer's in-memory position is skipped.
        stale = true;
        c.cursorMovedUnderneath(p);
        return false;
      }
      if (outcome == CommitOutcome.LOG_CHANGED) {
        // The database lost the sequencer batch these came from (a crash before its asynchronous
        // commit reached the disk) and sequenced the outbox again. Nothing was committed: forget
        // the hand-over and read the log from the cursor; the events handled are delivered again.
        stale = true;
        recent.clear();
        LOG.log(
            Level.WARNING,
            "consumer {0}: {1} no longer holds the events handed over by the sequencer (database"
                + " restarted, or retention removed them?); reading them again from the log",
            id,
            p.ref());
        return false;
      }
      if (outcome == CommitOutcome.FENCED) {
        c.fencedOut(p, "cursor commit rejected");
        return false;
      }
      p.position = batch.get(done - 1).sequence();
      c.handled.addAndGet(succeeded - counted);
      counted = succeeded;
      committed = done;
      parks.clear();
      return true;
    }
  }

  /**
   * Delivers a batch read at the cursor: events of blocked keys are parked behind their
   * predecessors, the others are handled (retried in place per the policy, then parked), and the
   * cursor moves past all of them with the parked ones in the same transaction. Returns true when
   * the whole batch was committed.
   */
  @Override
  public boolean deliver(
      LeasedPartition p, List<Event> batch, boolean handedOver, CursorCommitter.Expected started) {
    try (CursorCommitter.Expected expected = c.cursorCommits.expect()) {
      if (started != null) {
        started.close(); // taken over by this delivery's own, with no moment expecting neither
      }
      return deliver(new Progress(p, batch, handedOver, expected));
    }
  }

  private boolean deliver(Progress progress) {
    LeasedPartition p = progress.p;
    List<Event> batch = progress.batch;
    if (s.batchHandler() != null && deliverAsBatch(progress)) {
      return progress.commit() && progress.done == batch.size();
    }
    if (c.keyWorkers() != null && s.handler() != null) {
      return deliverByKey(progress);
    }
    for (int i = progress.done; i < batch.size(); i++) {
      if (c.stopping() || p.state != LeasedPartition.State.ACTIVE) {
        break;
      }
      Event e = batch.get(i);
      if (e.key() != null && p.blockedKeys.contains(e.key())) {
        progress.record(e, c.waiting());
        continue;
      }
      if (c.notYetDue(e)) {
        progress.record(e, new Outcome(ParkState.RETRY, 0, e.deliverAt(), "scheduled"));
        continue;
      }
      Outcome o = attemptInPlace(progress, e, true);
      if (o == null) {
        break; // stopping, or fenced while committing before a wait
      }
      progress.record(e, o);
    }
    return progress.commit() && progress.done == batch.size();
  }

  /**
   * {@code parallelByKey}: the batch's events grouped by key (each keyless event on its own), the
   * groups handled at once on the key threads, each group in sequence order as the per-event path
   * would (a key that fails parks the rest of its events behind it). The outcomes are recorded in
   * sequence order and the cursor moves only up to the first event without one (the lowest
   * unfinished), so a stop or a lost partition never skips an event.
   */
  private boolean deliverByKey(Progress progress) {
    List<Event> batch = progress.batch;
    LeasedPartition p = progress.p;
    Map<String, List<Integer>> groups = new java.util.LinkedHashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      String key = batch.get(i).key();
      groups.computeIfAbsent(key == null ? "\0" + i : "k" + key, k -> new ArrayList<>()).add(i);
    }
    Outcome[] outcomes = new Outcome[batch.size()];
    List<java.util.concurrent.Future<?>> running = new ArrayList<>(groups.size());
    try {
      for (List<Integer> group : groups.values()) {
        running.add(c.keyWorkers().submit(() -> handleGroup(progress, group, outcomes)));
      }
    } catch (java.util.concurrent.RejectedExecutionException stopping) {
      // shutting down: what was handled is committed below
    }
    for (java.util.concurrent.Future<?> f : running) {
      // A partition given up (its handler hangs) is not waited for: nothing more of it commits.
      while (!f.isDone()) {
        if (p.state == LeasedPartition.State.LOST || c.abandoned()) {
          return false;
        }
        try {
          f.get(50, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException notYet) {
          // look again
        } catch (java.util.concurrent.ExecutionException e) {
          c.workerError("could not handle a key of " + p.ref(), new IllegalStateException(e));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    for (int i = 0; i < batch.size() && outcomes[i] != null; i++) {
      progress.record(batch.get(i), outcomes[i]); // parks, blocks keys: on this thread only
    }
    return progress.commit() && progress.done == batch.size();
  }

  /** One key's events of the batch, in order, on a key thread; fills their outcomes. */
  private void handleGroup(Progress progress, List<Integer> group, Outcome[] outcomes) {
    LeasedPartition p = progress.p;
    boolean parkRest = false;
    for (int i : group) {
      if (c.stopping() || p.state != LeasedPartition.State.ACTIVE) {
        return;
      }
      Event e = progress.batch.get(i);
      Outcome o;
      if (parkRest || (e.key() != null && p.blockedKeys.contains(e.key()))) {
        o = c.waiting();
      } else if (c.notYetDue(e)) {
        o = new Outcome(ParkState.RETRY, 0, e.deliverAt(), "scheduled");
      } else {
        o = attemptInPlace(progress, e, false);
        if (o == null) {
          return; // stopping
        }
      }
      // A parked event holds its key's later events behind it, as the per-event path does by
      // blocking the key (ConsumerContext.park): a dead letter only when dead letters block.
      parkRest |=
          e.key() != null
              && o.park() != null
              && (o.park() != ParkState.DEAD || s.deadLetterBlocksKey());
      outcomes[i] = o;
    }
  }

  /**
   * Gives the whole batch to the batch handler once. Returns true when that settled every event
   * (handled, or reported failed through {@link BatchFailure}); false after any other exception,
   * and then the events go one by one through the per-event path so the culprit is isolated.
   */
  private boolean deliverAsBatch(Progress progress) {
    if (s.inboxKey() != null) {
      return false; // the per-event path checks and records the inbox for each event
    }
    List<Event> eligible = new ArrayList<>();
    Map<UUID, Event> byId = new HashMap<>();
    for (Event e : progress.batch) {
      if (c.notYetDue(e) || progress.p.malformed.containsKey(e.sequence())) {
        return false; // the per-event path parks it until due, or fails it without the handler
      }
      if (e.key() == null || !progress.p.blockedKeys.contains(e.key())) {
        eligible.add(e);
        byId.put(e.id(), e);
      }
    }
    Map<UUID, RuntimeException> failed;
    try {
      eligible.forEach(e -> c.hook(() -> s.hooks().beforeEvent(e, 1)));
      long start = System.nanoTime();
      if (!eligible.isEmpty()) {
        c.callHandler(progress.p, eligible, () -> s.batchHandler().handle(eligible));
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      eligible.forEach(e -> c.hook(() -> s.hooks().afterEvent(e, took)));
      failed = Map.of();
    } catch (BatchFailure bf) {
      failed = bf.failed();
    } catch (RuntimeException e) {
      eligible.forEach(ev -> c.hook(() -> s.hooks().onError(ev, e, 1)));
      return false;
    }
    for (Event e : progress.batch) {
      if (!byId.containsKey(e.id())) {
        progress.record(e, c.waiting());
      } else if (failed.containsKey(e.id())) {
        RuntimeException cause = failed.get(e.id());
        if (!(cause instanceof HandlerDecision)) {
          c.hook(() -> s.hooks().onError(e, cause, 1));
        }
        progress.record(e, c.decide(e, cause, 1, c.policyFor(e)));
      } else {
        progress.record(e, Outcome.DONE);
      }
    }
    return true;
  }

  /** The handler once, outside any transaction; the retry pass records the resolution. */
  @Override
  public Retry retry(LeasedPartition p, Event e, int attempt) {
    try {
      invoke(p, e, attempt);
      return Retry.record(io.boxline.spi.Resolution.done());
    } catch (RuntimeException failure) {
      if (!(failure instanceof HandlerDecision)) {
        c.hook(() -> s.hooks().onError(e, failure, attempt));
      }
      return Retry.record(c.toResolution(c.decide(e, failure, attempt, c.policyFor(e))));
    }
  }

  void invoke(LeasedPartition p, Event e, int attempt) {
    c.requireWellFormed(p, e);
    String dedup = c.inboxKeyOf(e);
    if (dedup != null && store.inboxSeen(subscription.id(), dedup)) {
      return; // handled before under the same key: skip
    }
    c.hook(() -> s.hooks().beforeEvent(e, attempt));
    long start = System.nanoTime();
    if (s.batchHandler() != null) {
      c.callHandler(p, List.of(e), () -> handleAlone(e));
    } else {
      c.callHandler(p, List.of(e), () -> s.handler().handle(e));
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    if (dedup != null) {
      store.inboxRecord(subscription.id(), dedup);
    }
    c.hook(() -> s.hooks().afterEvent(e, took));
  }

  /**
   * Gives one event to the batch handler (the per-event path: retries, isolating a culprit). A
   * {@link BatchFailure} naming the event fails it with the cause given for it, as on the batch
   * path, so its dead letter says why and a {@code HandlerDecision} given that way is honoured; one
   * that does not name it leaves it handled.
   */
  private void handleAlone(Event e) {
    try {
      s.batchHandler().handle(List.of(e));
    } catch (BatchFailure bf) {
      RuntimeException cause = bf.failed().get(e.id());
      if (cause != null) {
        throw cause;
      }
    }
  }

  /**
   * Attempts in place until handled, decided, or the in-place budget is spent; null when stopping.
   */
  private Outcome attemptInPlace(Progress progress, Event e, boolean commitBeforeWait) {
    RetryPolicy policy = c.policyFor(e);
    long deadline = System.nanoTime() + policy.inPlaceTime().toNanos();
    for (int attempt = 1; ; attempt++) {
      try {
        invoke(progress.p, e, attempt);
        return Outcome.DONE;
      } catch (RuntimeException failure) {
        if (!(failure instanceof HandlerDecision)) {
          int a = attempt;
          c.hook(() -> s.hooks().onError(e, failure, a));
        }
        Outcome o = c.decide(e, failure, attempt, policy);
        if (o.park() != ParkState.RETRY
            || failure instanceof HandlerDecision
            || attempt >= policy.inPlaceAttempts()) {
          return o;
        }
        long delayNanos = Duration.between(s.clock().instant(), o.nextAttemptAt()).toNanos();
        if (System.nanoTime() + delayNanos > deadline) {
          return o;
        }
        // Keep what succeeded before waiting, so a crash during the wait does not redeliver it.
        // (With parallelByKey other keys are still running: the commit waits for the batch's end.)
        if ((commitBeforeWait && !progress.commit()) || c.waitForStop(delayNanos)) {
          return null;
        }
      }
    }
  }
}
