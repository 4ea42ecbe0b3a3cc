package io.boxline.internal;

import io.boxline.Event;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.ParkingStore;
import io.boxline.spi.Resolution;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The retry pass of a partition: gives due parked events another attempt, the oldest of each key
 * first, and records the outcomes of a page together in one fenced commit.
 */
final class RetryPass {
  /** Least time between two retry passes of a partition that has new events waiting. */
  static final long SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final ConsumerContext c;
  private final ConsumerSettings s;
  private final ParkingStore store;
  private final SubscriptionInfo subscription;
  private final Delivery delivery;

  RetryPass(ConsumerContext c, Delivery delivery) {
    this.c = c;
    this.s = c.s;
    this.store = c.store;
    this.subscription = c.subscription;
    this.delivery = delivery;
  }

  void loadParked(LeasedPartition p) {
    ParkedSummary summary = store.parked(subscription.id(), p.key, s.deadLetterBlocksKey());
    p.blockedKeys = new HashSet<>(summary.blockedKeys());
    p.nextRetryAtMillis =
        summary.nextDue() == null ? Long.MAX_VALUE : summary.nextDue().toEpochMilli();
    p.parkedLoaded = true;
  }

  /**
   * Gives due parked events another attempt, oldest of each key first. Handling or dead-lettering
   * one makes the next of its key due at once, so this loops until nothing more is due.
   */
  void run(LeasedPartition p) {
    p.retryDue = false;
    boolean again = true;
    p.lastRetryPassNanos = System.nanoTime();
    while (again && !c.stopping() && p.state == LeasedPartition.State.ACTIVE) {
      again = false;
      // Outcomes of one page are recorded together (one commit); the page holds at most one event
      // per key, so none of them depends on another's outcome.
      Map<Long, Resolution> outcomes = new LinkedHashMap<>();
      for (ParkedEvent pe :
          store.dueParked(
              subscription.id(), p.key, s.deadLetterBlocksKey(), s.clock().instant(), 100)) {
        if (c.stopping() || p.state != LeasedPartition.State.ACTIVE) {
          break;
        }
        Event e = c.toEvent(p, pe.event());
        int attempt = pe.attempts() + 1;
        Delivery.Retry tried = delivery.retry(p, e, attempt);
        if (tried.lost()) {
          return;
        }
        if (tried.handled()) {
          c.handled.incrementAndGet();
          again = true;
          continue;
        }
        Resolution r = tried.toRecord();
        if (r.kind() == Resolution.Kind.DEAD) {
          c.settled(p, e, ParkState.DEAD);
        }
        outcomes.put(e.sequence(), r);
      }
      if (outcomes.isEmpty()) {
        continue;
      }
      if (!store.resolveParked(subscription.id(), p.key, p.epoch, outcomes)) {
        c.fencedOut(p, "retry outcomes rejected");
        return;
      }
      for (Resolution r : outcomes.values()) {
        if (r.kind() != Resolution.Kind.RETRY) {
          if (r.kind() == Resolution.Kind.DONE) {
            c.handled.incrementAndGet();
          }
          again = true;
        }
      }
    }
    loadParked(p);
  }
}
