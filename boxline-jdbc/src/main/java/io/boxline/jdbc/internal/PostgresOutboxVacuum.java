package io.boxline.jdbc.internal;

import io.boxline.spi.StoreStats;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Vacuums the PostgreSQL outbox after every {@code every} events sequenced, on a thread of its own
 * ({@code boxline-outbox-vacuum-<schema>.<prefix>}), and then names a transaction left open long
 * enough to keep the vacuum from clearing anything. Counted in {@link #stats()}; {@link #close()}
 * waits a bounded time for a running vacuum.
 */
final class PostgresOutboxVacuum {
  private static final System.Logger LOG =
      // Under the store's name, which operators configure (and the tests watch).
      System.getLogger(SqlStore.class.getName());

  /**
   * At most one long-transaction warning per this interval, however often the outbox is vacuumed.
   */
  private static final long LONG_TRANSACTION_WARNING_EVERY_NANOS = Duration.ofMinutes(5).toNanos();

  /** How long {@link #close} waits for a running outbox vacuum. */
  private static final long VACUUM_CLOSE_WAIT_MILLIS = 10_000;

  private final JdbcSql db;
  private final String threadName;
  private final int outboxVacuumEvery;
  private final Duration longTransactionWarning;

  /** Events sequenced since the outbox was last vacuumed. */
  private final AtomicLong sequencedSinceVacuum = new AtomicLong();

  private final AtomicBoolean vacuuming = new AtomicBoolean();
  private final VacuumSkips vacuumSkips = new VacuumSkips();
  private final AtomicLong outboxVacuums = new AtomicLong();
  private final AtomicLong outboxVacuumFailures = new AtomicLong();
  private final AtomicLong longTransactionWarnings = new AtomicLong();
  private volatile Thread vacuumThread;

  /** No long-transaction warning before this (System.nanoTime); one per interval at most. */
  private long longTransactionQuietUntilNanos = System.nanoTime();

  /**
   * @param every vacuum after this many events (0: never)
   * @param longTransactionWarning after a vacuum, warn about transactions open longer than this
   *     (zero: never)
   */
  PostgresOutboxVacuum(
      JdbcSql db, String schema, String prefix, int every, Duration longTransactionWarning) {
    this.db = db;
    this.threadName = "boxline-outbox-vacuum-" + schema + "." + prefix;
    this.outboxVacuumEvery = every;
    this.longTransactionWarning = longTransactionWarning;
  }

  private String sql(String name) {
    return db.sql(name);
  }

  private Connection connect() throws SQLException {
    return db.connect();
  }

  /** {@code events} more were sequenced: starts a vacuum when enough have been since the last. */
  void sequenced(int events) {
    if (outboxVacuumEvery > 0
        && events > 0
        && sequencedSinceVacuum.addAndGet(events) >= outboxVacuumEvery
        && vacuuming.compareAndSet(false, true)) {
      // On a thread of its own: under load a vacuum can wait seconds for the pages producers are
      // inserting into (W1 saw 1.5 s), and sequencing must not wait with it.
      Thread t = new Thread(this::vacuumOutboxWhileDue, threadName);
      t.setDaemon(true);
      vacuumThread = t;
      t.start();
    }
  }

  /**
   * Every sequencer batch finds its rows by scanning the outbox's primary key from the start, and
   * the rows it deleted stay in that index until a vacuum: without one the scan grows by every
   * event sequenced (W1 measured 7 ms per batch after 150,000 events, autovacuum off) and even
   * autovacuum only comes by once a minute. Vacuuming just the outbox this often keeps the scan
   * short for about 1 µs per event. A vacuum that fails only logs, and one the server skips (the
   * user does not own the table: a warning, not an error) logs once: sequencing goes on.
   */
  private void vacuumOutboxWhileDue() {
    while (true) {
      sequencedSinceVacuum.set(0);
      vacuumOutbox();
      warnOfLongTransaction();
      vacuuming.set(false);
      // A batch that reached the threshold while this ran could not start a vacuum: do it here
      // (or that batch's next sibling does, if it wins the flag).
      if (sequencedSinceVacuum.get() < outboxVacuumEvery || !vacuuming.compareAndSet(false, true)) {
        return;
      }
    }
  }

  private void vacuumOutbox() {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute(sql("vacuum_outbox"));
      String skipped = VacuumSkips.skipped(st);
      if (skipped == null) {
        outboxVacuums.incrementAndGet();
        return;
      }
      // The server skipped the outbox (a warning, not an error): not the owner.
      outboxVacuumFailures.incrementAndGet();
      vacuumSkips.warnOnce(
          "the sequencer cannot vacuum the outbox as database user '"
              + c.getMetaData().getUserName()
              + "' ("
              + skipped
              + "): sequencing goes on, but its batches slow down until autovacuum comes by."
              + " Vacuum it as its owner, or (PostgreSQL 17+) GRANT MAINTAIN on it to this user;"
              + " JdbcStore.builder(..).outboxVacuumEvery(0) stops the attempts");
    } catch (SQLException | RuntimeException e) {
      outboxVacuumFailures.incrementAndGet();
      LOG.log(
          System.Logger.Level.WARNING,
          "could not vacuum the outbox (sequencing goes on, but its batches slow down until"
              + " autovacuum or the retention loop vacuums it): "
              + e.getMessage());
    }
  }

  /**
   * Runs on the vacuum thread, one at a time (the vacuuming flag). A transaction that stays open
   * keeps every row version newer than its snapshot, so the vacuum that just ran could not clear
   * the outbox's index, and sequencing slows until that transaction ends: say who it is.
   */
  private void warnOfLongTransaction() {
    if (longTransactionWarning.isZero()) {
      return;
    }
    long now = System.nanoTime();
    if (now - longTransactionQuietUntilNanos < 0) {
      return;
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("oldest_open_transaction"))) {
      ps.setDouble(1, longTransactionWarning.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          longTransactionQuietUntilNanos = now + LONG_TRANSACTION_WARNING_EVERY_NANOS;
          longTransactionWarnings.incrementAndGet();
          LOG.log(
              System.Logger.Level.WARNING,
              "a transaction has been open for {0} s in this database (pid {1}, application"
                  + " ''{2}'', state ''{3}'', statement: {4}): while it lasts no vacuum can clear"
                  + " the outbox, and each sequencer batch gets slower. End it (or set"
                  + " idle_in_transaction_session_timeout); this warning repeats at most every"
                  + " 5 minutes",
              String.format(java.util.Locale.ROOT, "%.1f", rs.getDouble(4)),
              String.valueOf(rs.getInt(1)),
              rs.getString(2),
              rs.getString(3),
              rs.getString(5));
        }
      }
    } catch (SQLException | RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not look for long transactions: " + e.getMessage());
    }
  }

  StoreStats stats() {
    return new StoreStats(
        outboxVacuums.get(), outboxVacuumFailures.get(), longTransactionWarnings.get());
  }

  /** Waits up to ten seconds for a running vacuum (it holds a pooled connection). */
  void close() {
    Thread vacuum = vacuumThread;
    if (vacuum != null) {
      try {
        vacuum.join(VACUUM_CLOSE_WAIT_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (vacuum.isAlive()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "closing while the outbox vacuum still runs after "
                + VACUUM_CLOSE_WAIT_MILLIS
                + " ms; it ends with its connection");
      }
    }
  }
}
