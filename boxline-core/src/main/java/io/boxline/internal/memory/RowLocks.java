package io.boxline.internal.memory;

import io.boxline.StoreException;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * What a database's row locks do for the in-memory store: a row (an idempotency key, an inbox key,
 * a partition's head, a cursor) that an open transaction wrote stays its own until it commits or
 * rolls back; other transactions and single calls that touch the row wait for it (at most {@link
 * #TIMEOUT}), and a wait that would close a cycle fails at once as a deadlock. Every method runs
 * with the store's lock held; waiting releases it.
 */
final class RowLocks {
  /** How long a call waits for a row another transaction holds, as a database's lock timeout. */
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Condition released;
  private final Map<Object, MemoryTransaction> owners = new HashMap<>();

  RowLocks(Condition released) {
    this.released = released;
  }

  /** Takes {@code row} for {@code tx}, waiting while another transaction holds it. */
  void acquire(MemoryTransaction tx, Object row) {
    awaitFree(tx, row);
    if (owners.putIfAbsent(row, tx) == null) {
      tx.held.add(row);
    }
  }

  /** The transaction that holds {@code row}, or null. */
  MemoryTransaction owner(Object row) {
    return owners.get(row);
  }

  /**
   * Waits until no transaction but {@code self} (null for a single call outside any transaction)
   * holds {@code row}.
   */
  void awaitFree(MemoryTransaction self, Object row) {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    MemoryTransaction owner;
    while ((owner = owners.get(row)) != null && owner != self) {
      if (self != null) {
        for (MemoryTransaction t = owner; t != null; t = t.waitingFor) {
          if (t == self) {
            throw new StoreException(
                "deadlock: this transaction waits for "
                    + row
                    + ", held by another open transaction that waits for a row this one holds;"
                    + " roll back and retry",
                new SQLTransactionRollbackException("deadlock detected", "40001"));
          }
        }
        self.waitingFor = owner;
      }
      try {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new StoreException(
              "waited "
                  + TIMEOUT.toSeconds()
                  + " s for "
                  + row
                  + ", held by another open transaction of the in-memory store (commit or close it)",
              new SQLException("lock wait timed out", "55P03"));
        }
        released.awaitNanos(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreException("interrupted while waiting for " + row, e);
      } finally {
        if (self != null) {
          self.waitingFor = null;
        }
      }
    }
  }

  /**
   * Waits until no transaction but {@code self} holds any of {@code rows}: all of them are free
   * together when it returns (the store's lock is held from the last check on).
   */
  void awaitAllFree(MemoryTransaction self, java.util.Collection<?> rows) {
    while (true) {
      Object busy = null;
      for (Object row : rows) {
        MemoryTransaction owner = owners.get(row);
        if (owner != null && owner != self) {
          busy = row;
          break;
        }
      }
      if (busy == null) {
        return;
      }
      awaitFree(self, busy);
    }
  }

  /** Frees every row {@code tx} holds and wakes whoever waits. */
  void releaseAll(MemoryTransaction tx) {
    if (!tx.held.isEmpty()) {
      for (Object row : tx.held) {
        owners.remove(row, tx);
      }
      tx.held.clear();
      released.signalAll();
    }
  }
}
