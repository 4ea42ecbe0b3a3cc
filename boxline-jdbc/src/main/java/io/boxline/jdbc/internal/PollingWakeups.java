package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Cross-process wake-ups where the database has no LISTEN/NOTIFY (MariaDB, MySQL, H2). One thread
 * per Boxline instance holds a pooled connection and reads one primary-key row ({@code
 * poll_wakeups}): the sequencer's batch counter, the redrive counter, and whether the outbox holds
 * rows. When the batch counter moved it reads the heads of the partitions those batches advanced
 * ({@code changed_heads}, by index) and hands them to the listener, as a NOTIFY payload would.
 *
 * <p>The interval adapts: right after something happened it polls at {@code fastest}, then doubles
 * the interval on every quiet poll up to {@code slowest}. An idle instance therefore costs one
 * statement per {@code slowest}; in-process signals (same JVM) never wait for it.
 */
final class PollingWakeups {
  private static final System.Logger LOG = System.getLogger(PollingWakeups.class.getName());
  private static final int MAX_HEADS = 1000;

  private final JdbcSql db;
  private final WakeupListener listener;
  private final long fastestNanos;
  private final long slowestNanos;
  private final Thread thread;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private final AtomicLong statements = new AtomicLong();
  private volatile boolean running = true;

  PollingWakeups(
      JdbcSql db, String name, WakeupListener listener, Duration fastest, Duration slowest) {
    this.db = db;
    this.listener = listener;
    this.fastestNanos = fastest.toNanos();
    this.slowestNanos = Math.max(fastest.toNanos(), slowest.toNanos());
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Statements run so far (the poll's whole database cost). */
  long statements() {
    return statements.get();
  }

  private void run() {
    long interval = fastestNanos;
    long errorBackoff = TimeUnit.MILLISECONDS.toNanos(100);
    Connection c = null;
    PreparedStatement poll = null;
    PreparedStatement heads = null;
    boolean connected = false;
    long logVersion = 0;
    long wakeAll = 0;
    boolean outboxHadRows = false;
    while (running) {
      try {
        if (c == null) {
          c = db.connect();
          poll = c.prepareStatement(db.sql("poll_wakeups"));
          heads = c.prepareStatement(db.sql("changed_heads"));
          connected = false;
        }
        long version;
        long redrives;
        boolean outbox;
        statements.incrementAndGet();
        try (ResultSet rs = poll.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException("no sequencer_lease row; has the schema been migrated?");
          }
          version = rs.getLong(1);
          redrives = rs.getLong(2);
          outbox = rs.getBoolean(3);
        }
        boolean activity = false;
        if (!connected) {
          // Wake-ups may have been missed before (or while reconnecting): everyone re-checks.
          connected = true;
          logVersion = version;
          wakeAll = redrives;
          outboxHadRows = outbox;
          listener.resynchronize();
          activity = true;
        } else {
          if (outbox) {
            listener.outboxChanged();
            // Rows that stay (no sequencer anywhere) do not keep the poll fast.
            activity |= !outboxHadRows;
          }
          outboxHadRows = outbox;
          if (redrives != wakeAll) {
            wakeAll = redrives;
            listener.logAppended(null);
            activity = true;
          }
          if (version != logVersion) {
            List<PartitionHead> changed = new ArrayList<>();
            statements.incrementAndGet();
            heads.setLong(1, logVersion);
            heads.setInt(2, MAX_HEADS);
            long newest = version;
            try (ResultSet rs = heads.executeQuery()) {
              while (rs.next()) {
                changed.add(new PartitionHead(rs.getLong(1), rs.getInt(2), rs.getLong(3)));
                newest = Math.max(newest, rs.getLong(4));
              }
            }
            if (changed.size() >= MAX_HEADS) {
              listener.logAppended(null);
            } else if (!changed.isEmpty()) {
              listener.logAppended(changed);
            }
            activity |= !changed.isEmpty();
            logVersion = newest;
          }
        }
        interval = activity ? fastestNanos : Math.min(slowestNanos, interval * 2);
        errorBackoff = TimeUnit.MILLISECONDS.toNanos(100);
        pause(interval);
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          break;
        }
        LOG.log(
            System.Logger.Level.WARNING,
            "wake-up poll failed; reconnecting in " + errorBackoff / 1_000_000 + " ms",
            e);
        closeQuietly(c);
        c = null;
        pause(errorBackoff);
        errorBackoff = Math.min(errorBackoff * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
    closeQuietly(c);
  }

  private void pause(long nanos) {
    lock.lock();
    try {
      long left = nanos;
      while (running && left > 0) {
        left = wake.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      running = false;
    } finally {
      lock.unlock();
    }
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      JdbcSql.closeQuietly(c);
    }
  }

  /** Stops the thread (bounded wait) and returns its connection to the pool. */
  void stop() {
    running = false;
    lock.lock();
    try {
      wake.signalAll();
    } finally {
      lock.unlock();
    }
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      thread.interrupt();
    }
  }

  /** A redrive in this process: wake the local consumers at once instead of at the next poll. */
  void wakeAllLocally() {
    listener.logAppended(null);
  }
}
