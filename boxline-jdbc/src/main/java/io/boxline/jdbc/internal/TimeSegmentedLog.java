package io.boxline.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A log partitioned by the time its events were sequenced, in segments: each retention run drops
 * the closed segments whose events may all go and splits the open (newest, unbounded) segment so
 * that the next events land in a segment of bounded width. Segments are only made while some
 * topic's retention by age is at least {@link #MIN_WIDTHS_PER_RETENTION} widths long: without one
 * the log stays one segment, as cheap to read as a plain table. What differs per database (how a
 * segment is split, checked and dropped, and under which locks) is in the subclasses.
 *
 * <p>A user who may not change the tables (least privilege) gets one warning, and retention goes on
 * row by row. A step that cannot get its lock in time gives up until the next run.
 */
abstract class TimeSegmentedLog implements LogSegments {
  private static final System.Logger LOG = System.getLogger(TimeSegmentedLog.class.getName());

  /**
   * Bounds of the default width, and the share of the longest retention a default segment spans.
   */
  static final Duration MIN_AUTO_WIDTH = Duration.ofMinutes(1);

  static final Duration MAX_AUTO_WIDTH = Duration.ofDays(7);
  static final int AUTO_WIDTHS_PER_RETENTION = 4;

  /** A retention shorter than this many widths is cleaned row by row. */
  static final int MIN_WIDTHS_PER_RETENTION = 2;

  final JdbcSql db;
  final SqlDialect dialect;
  private final Duration width;
  private final VacuumSkips denied = new VacuumSkips();
  private volatile boolean disabled;

  /**
   * @param width the width of new segments; null: a quarter of the longest retention by age,
   *     between 1 minute and 7 days
   */
  TimeSegmentedLog(JdbcSql db, SqlDialect dialect, Duration width) {
    this.db = db;
    this.dialect = dialect;
    this.width = width;
  }

  /** A segment: events sequenced in {@code [lower, upper)}; null bounds are open. */
  record Segment(long number, Instant lower, Instant upper) {}

  /**
   * The segments oldest first (the last one open), the database's clock, the longest and the
   * shortest retention by age of any topic (0: none), and whether a split was left half done.
   */
  record Layout(
      List<Segment> segments,
      Instant now,
      long longestRetentionMs,
      long shortestRetentionMs,
      boolean unfinished) {
    Segment open() {
      return segments.get(segments.size() - 1);
    }
  }

  /** The width segments get under the longest retention by age ({@code <= 0}: none). */
  long widthMs(long longestRetentionMs) {
    if (width != null) {
      return width.toMillis();
    }
    if (longestRetentionMs <= 0) {
      return MIN_AUTO_WIDTH.toMillis();
    }
    long auto = longestRetentionMs / AUTO_WIDTHS_PER_RETENTION;
    return Math.max(MIN_AUTO_WIDTH.toMillis(), Math.min(MAX_AUTO_WIDTH.toMillis(), auto));
  }

  abstract Layout layout() throws StepFailed;

  /** Takes back what a split left half done (a crash between its steps). */
  abstract void finishUnfinished() throws StepFailed;

  /** Rows in the open segment, counted up to {@code limit}. */
  abstract long openRows(Segment open, long limit) throws StepFailed;

  /** Rows an open segment may hold and still be split directly (its rows are checked or copied). */
  abstract long smallOpenSegment();

  /** Ends the open segment at {@code upper} and opens the next one from there. */
  abstract void split(Segment open, Instant upper) throws StepFailed;

  /**
   * Ends an open segment that holds more than {@link #smallOpenSegment()} rows, without holding
   * readers and writers up for a scan; returns where it now ends, or null where the database cannot
   * (its rows are then trimmed row by row until it is small).
   */
  abstract Instant splitLarge(Segment open, Instant now, long widthMs) throws StepFailed;

  /** Whether every event of a closed segment may go (the same rules as the row-by-row purge). */
  abstract boolean expired(Segment closed) throws StepFailed;

  /** Drops a closed segment whose events may all go; about how many it held, -1 if it did not. */
  abstract long drop(Segment closed) throws StepFailed;

  /** A failure that the next run may not have (a lock not granted in time, a bounded scan cut). */
  abstract boolean transientFailure(SQLException e);

  @Override
  public Run maintain() {
    if (disabled) {
      return Run.ROWS_ONLY;
    }
    Layout layout;
    try {
      layout = layout();
    } catch (StepFailed e) {
      return failed(e);
    }
    long w = widthMs(layout.longestRetentionMs());
    long segmentedFrom = MIN_WIDTHS_PER_RETENTION * w;
    boolean active = layout.longestRetentionMs() >= segmentedFrom;
    long events = 0;
    int dropped = 0;
    boolean rowsOnly = !active;
    // The row purge by age has work only for topics the segments do not serve, or in a segment
    // held back past its time; otherwise it would read the old events only to leave them.
    boolean rowsByAge = !active || layout.shortestRetentionMs() < segmentedFrom;
    try {
      if (layout.unfinished()) {
        finishUnfinished();
      }
      Instant heldBack = layout.now().minusMillis(layout.shortestRetentionMs() + 2 * w);
      for (Segment s : layout.segments()) {
        if (s.upper() != null && !s.upper().isAfter(layout.now())) {
          long n = expired(s) ? drop(s) : -1;
          if (n >= 0) {
            events += n;
            dropped++;
          } else if (s.upper().isBefore(heldBack)) {
            rowsByAge = true;
          }
        }
      }
      if (active) {
        rowsOnly = !extend(layout, w);
      }
    } catch (StepFailed e) {
      Run fallback = failed(e);
      if (fallback == Run.ROWS_ONLY) {
        return new Run(events, dropped, Long.MAX_VALUE, 0, true);
      }
      rowsByAge = true;
    }
    if (dropped > 0) {
      LOG.log(System.Logger.Level.DEBUG, "dropped {0} log segments, {1} events", dropped, events);
    }
    return rowsOnly
        ? new Run(events, dropped, Long.MAX_VALUE, 0, true)
        : new Run(events, dropped, segmentedFrom, 2 * w, rowsByAge);
  }

  /**
   * Splits the open segment until segments cover the next width from now; false when it is too
   * large to split here.
   */
  private boolean extend(Layout layout, long w) throws StepFailed {
    Instant now = layout.now();
    Instant target = now.plusMillis(w);
    Segment open = layout.open();
    for (int i = 0; i < 8 && (open.lower() == null || open.lower().isBefore(target)); i++) {
      Instant upper;
      boolean current = open.lower() == null || !open.lower().isAfter(now);
      if (current && openRows(open, smallOpenSegment() + 1) > smallOpenSegment()) {
        upper = splitLarge(open, now, w);
        if (upper == null) {
          return false;
        }
      } else {
        upper = current ? now.plusMillis(w) : open.lower().plusMillis(w);
        split(open, upper);
      }
      open = new Segment(open.number() + 1, upper, null);
    }
    return true;
  }

  /** ROWS_ONLY when segments are off from now on (denied), null for a failure to retry. */
  private Run failed(StepFailed e) {
    if (JdbcSql.isPermissionDenied(e.cause)) {
      disabled = true;
      denied.warnOnce(
          "the retention loop may not split or drop the log's segments as this database user ("
              + e.cause.getMessage()
              + "): retention deletes events row by row instead, which leaves dead rows for"
              + " vacuum or purge. Run Boxline's retention as the tables' owner to drop whole"
              + " segments");
      return Run.ROWS_ONLY;
    }
    if (!transientFailure(e.cause)) {
      throw db.fail(e.step, e.cause);
    }
    LOG.log(System.Logger.Level.DEBUG, "log segments: {0} put off: {1}", e.step, e.cause);
    return null;
  }

  /** A step's failure, kept apart so that a lock timeout or a denied DDL is handled once. */
  static final class StepFailed extends Exception {
    private static final long serialVersionUID = 1L;
    final String step;
    final transient SQLException cause;

    StepFailed(String step, SQLException cause) {
      super(step, cause, false, false);
      this.step = step;
      this.cause = cause;
    }
  }

  /** Runs one step in a transaction of its own. */
  final <T> T step(String name, JdbcSql.Work<T> work) throws StepFailed {
    try (Connection c = db.connect()) {
      return JdbcSql.inTransaction(c, work);
    } catch (SQLException e) {
      throw new StepFailed(name, e);
    }
  }

  /** Reads a query's whole result set (positioned before its first row). */
  @FunctionalInterface
  private interface ResultReader<T> {
    T read(java.sql.ResultSet rs) throws SQLException;
  }

  /** A step of one query, its result read by {@code reader}. */
  private <T> T query(String name, JdbcSql.Binder binder, ResultReader<T> reader)
      throws StepFailed {
    return step(
        name,
        c -> {
          try (java.sql.PreparedStatement ps = c.prepareStatement(db.sql(name))) {
            binder.bind(ps);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
              return reader.read(rs);
            }
          }
        });
  }

  /** A step of one statement that returns one number (a count, an estimate). */
  final long number(String name, JdbcSql.Binder binder) throws StepFailed {
    return query(
        name,
        binder,
        rs -> {
          rs.next();
          return rs.getLong(1);
        });
  }

  /** A step of one statement that returns whether (false when it returns no row). */
  final boolean whether(String name, JdbcSql.Binder binder) throws StepFailed {
    return query(name, binder, rs -> rs.next() && rs.getBoolean(1));
  }

  /** A step of one statement whose result does not matter (a function that changes the tables). */
  final void run(String name, JdbcSql.Binder binder) throws StepFailed {
    step(
        name,
        c -> {
          try (java.sql.PreparedStatement ps = c.prepareStatement(db.sql(name))) {
            binder.bind(ps);
            ps.execute();
          }
          return null;
        });
  }

  /** Runs one step in auto-commit mode (DDL that commits by itself). */
  final <T> T autoCommitStep(String name, JdbcSql.Work<T> work) throws StepFailed {
    try (Connection c = db.connect()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new StepFailed(name, e);
    }
  }
}
