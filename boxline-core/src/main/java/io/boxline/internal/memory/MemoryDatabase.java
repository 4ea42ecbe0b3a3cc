package io.boxline.internal.memory;

import io.boxline.internal.InMemoryCoordination;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The data of one in-memory "database", shared by every {@link InMemoryStore} made for it (as
 * processes share a database): the parts, the one lock that guards them all, the row locks of open
 * transactions, the clock, the coordination store and the wake-up hub.
 */
final class MemoryDatabase {
  final Clock clock;

  /**
   * The one store-wide lock: every call runs under it, so each is atomic and all are serialised.
   * Reentrant, because a partition assigner may call back into the store.
   */
  private final ReentrantLock lock = new ReentrantLock();

  final RowLocks locks = new RowLocks(lock.newCondition());
  final Catalog catalog = new Catalog();
  final EventLog log = new EventLog(locks);
  final Cursors cursors = new Cursors(locks);
  final Parking parking = new Parking(locks);
  final InMemoryCoordination coordination;
  final Wakeups wakeups = new Wakeups();

  MemoryDatabase(Clock clock) {
    this.clock = clock;
    this.coordination = new InMemoryCoordination(clock);
  }

  /** The store's clock now, in microseconds as the SQL dialects keep times. */
  Instant now() {
    return clock.instant().truncatedTo(ChronoUnit.MICROS);
  }

  <T> T locked(Supplier<T> work) {
    lock.lock();
    try {
      return work.get();
    } finally {
      lock.unlock();
    }
  }

  void locked(Runnable work) {
    lock.lock();
    try {
      work.run();
    } finally {
      lock.unlock();
    }
  }

  /** Applies the transaction's writes at once; then sends the wake-ups it asked for. */
  void commit(MemoryTransaction tx) {
    List<Runnable> after;
    lock.lock();
    try {
      tx.applyLocked();
      after = new ArrayList<>(tx.afterCommit);
      tx.afterCommit.clear();
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
  }

  void rollback(MemoryTransaction tx) {
    locked(
        () -> {
          tx.forgetLocked();
          tx.afterCommit.clear();
        });
  }

  /** Closes the transaction; what it did not commit is dropped. Safe to call twice. */
  void close(MemoryTransaction tx) {
    locked(
        () -> {
          if (!tx.closed()) {
            tx.forgetLocked();
            tx.afterCommit.clear();
            tx.markClosed();
          }
        });
  }
}
