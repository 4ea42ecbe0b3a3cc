package io.boxline.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The PostgreSQL log's time segments (V15__log_segments.sql): the log is partitioned by range of
 * {@code sequenced_at}; each retention run drops the closed segments whose events may all go and
 * splits the open segment so that the next events land in a segment of bounded width. Segments are
 * only made while some topic's retention by age is at least {@link #MIN_WIDTHS_PER_RETENTION}
 * widths long: without one the log stays a single segment, as cheap to read as a plain table.
 *
 * <p>Every DDL step waits at most {@link #LOCK_TIMEOUT} for its lock and gives up (to try again
 * next run) rather than queue readers and writers behind it. A user who may not change the tables
 * (least privilege) gets one warning, and retention goes on row by row.
 */
final class PostgresLogSegments implements LogSegments {
  private static final System.Logger LOG = System.getLogger(PostgresLogSegments.class.getName());

  /** Default width bounds, and the share of the longest retention a default segment spans. */
  static final Duration MIN_AUTO_WIDTH = Duration.ofMinutes(1);

  static final Duration MAX_AUTO_WIDTH = Duration.ofDays(7);
  static final int AUTO_WIDTHS_PER_RETENTION = 4;

  /** A retention shorter than this many widths is cleaned row by row. */
  static final int MIN_WIDTHS_PER_RETENTION = 2;

  /** An open segment with more rows than this is sealed before it is split (no scan under lock). */
  static final int SMALL_OPEN_SEGMENT = 20_000;

  /**
   * Time allowed to validate a seal: a fixed part, plus a row count at a conservative scan rate;
   * the sealed segment ends a little after that, so no event arrives past its bound meanwhile.
   */
  static final Duration SEAL_BASE = Duration.ofSeconds(5);

  static final long SEAL_ROWS_PER_SECOND = 50_000;

  static final String LOCK_TIMEOUT = "500ms";

  private final JdbcSql db;
  private final SqlDialect dialect;
  private final Duration width;
  private final String schemaAndPrefix;
  private final VacuumSkips denied = new VacuumSkips();
  private volatile boolean disabled;

  /**
   * @param width the width of new segments; null: {@code 1/4} of the longest retention by age,
   *     between 1 minute and 7 days
   */
  PostgresLogSegments(
      JdbcSql db, SqlDialect dialect, String schema, String prefix, Duration width) {
    this.db = db;
    this.schemaAndPrefix = schema + "." + prefix;
    this.dialect = dialect;
    this.width = width;
  }

  record Segment(long number, Instant lower, Instant upper) {}

  record Layout(List<Segment> segments, Instant now, long longestRetentionMs, boolean sealed) {
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

  @Override
  public Run maintain() {
    if (disabled) {
      return Run.ROWS_ONLY;
    }
    try {
      Layout layout = layout();
      long w = widthMs(layout.longestRetentionMs());
      long segmentedFrom = MIN_WIDTHS_PER_RETENTION * w;
      boolean active = layout.longestRetentionMs() >= segmentedFrom;
      if (layout.sealed()) {
        unseal(); // a split that did not finish (a crash between its steps)
      }
      long events = 0;
      int dropped = 0;
      for (Segment s : layout.segments()) {
        if (s.upper() != null && !s.upper().isAfter(layout.now()) && expired(s.number())) {
          long n = drop(s.number());
          if (n >= 0) {
            events += n;
            dropped++;
          }
        }
      }
      if (active) {
        extend(layout, w);
      }
      if (dropped > 0) {
        LOG.log(System.Logger.Level.DEBUG, "dropped {0} log segments, {1} events", dropped, events);
      }
      return new Run(events, dropped, active ? segmentedFrom : Long.MAX_VALUE, 2 * w);
    } catch (SegmentStepFailed e) {
      if (JdbcSql.isPermissionDenied(e.cause)) {
        disabled = true;
        denied.warnOnce(
            "the retention loop may not split or drop the log's segments as this database user ("
                + e.cause.getMessage()
                + "): retention deletes events row by row instead, which leaves dead tuples for"
                + " vacuum. Run Boxline's retention as the tables' owner to drop whole segments");
      } else if (!"55P03".equals(e.cause.getSQLState()) // lock_not_available: next run
          && !"57014".equals(e.cause.getSQLState())) { // a seal's validation ran out of time
        throw db.fail(e.step, e.cause);
      }
      return Run.ROWS_ONLY;
    }
  }

  /** Splits the open segment until segments cover the next width from now. */
  private void extend(Layout layout, long w) throws SegmentStepFailed {
    Instant now = layout.now();
    Instant target = now.plusMillis(w);
    Segment open = layout.open();
    for (int i = 0; i < 8 && (open.lower() == null || open.lower().isBefore(target)); i++) {
      Instant upper;
      boolean current = open.lower() == null || !open.lower().isAfter(now);
      if (current && openRows(open.lower()) > SMALL_OPEN_SEGMENT) {
        long rows = Math.max(SMALL_OPEN_SEGMENT, rowsEstimate(open.number()));
        long validateMs = SEAL_BASE.toMillis() + rows * 1000 / SEAL_ROWS_PER_SECOND;
        upper = now.plusMillis(Math.max(2 * w, validateMs + SEAL_BASE.toMillis()));
        sealAndSplit(upper, validateMs);
      } else {
        upper = current ? now.plusMillis(w) : open.lower().plusMillis(w);
        split(upper);
      }
      open = new Segment(open.number() + 1, upper, null);
    }
  }

  // ------------------------------------------------------------------ steps

  private Layout layout() throws SegmentStepFailed {
    List<Segment> segments = new ArrayList<>();
    Instant[] now = {null};
    long[] longest = {0};
    boolean[] sealed = {false};
    step(
        "log_layout",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_layout"));
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              segments.add(
                  new Segment(rs.getLong(1), dialect.instant(rs, 2), dialect.instant(rs, 3)));
              now[0] = dialect.instant(rs, 4);
              longest[0] = rs.getLong(5);
              sealed[0] = rs.getBoolean(6);
            }
          }
          return null;
        });
    return new Layout(segments, now[0], longest[0], sealed[0]);
  }

  private long openRows(Instant lower) throws SegmentStepFailed {
    return step(
        "log_open_rows",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_open_rows"))) {
            dialect.bindInstant(ps, 1, lower);
            ps.setInt(2, SMALL_OPEN_SEGMENT + 1);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  private long rowsEstimate(long number) throws SegmentStepFailed {
    return step(
        "log_segment_rows_estimate",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_segment_rows_estimate"))) {
            ps.setString(1, schemaAndPrefix + "log_s" + number);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  private void split(Instant upper) throws SegmentStepFailed {
    step(
        "log_split",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_split"))) {
            dialect.bindInstant(ps, 1, upper);
            ps.setString(2, LOCK_TIMEOUT);
            ps.execute();
          }
          return null;
        });
  }

  /**
   * Seals the open segment at {@code upper}, validates the seal without blocking writers, then
   * splits (the split's check is then implied by the seal, no scan under the lock). Takes the seal
   * back when a step fails: a seal left in place would refuse events once the clock reaches {@code
   * upper}.
   */
  private void sealAndSplit(Instant upper, long validateMs) throws SegmentStepFailed {
    step(
        "log_seal",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_seal"))) {
            dialect.bindInstant(ps, 1, upper);
            ps.setString(2, LOCK_TIMEOUT);
            ps.execute();
          }
          return null;
        });
    boolean done = false;
    try {
      step(
          "log_seal_validate",
          c -> {
            try (PreparedStatement ps = c.prepareStatement(db.sql("log_seal_validate"))) {
              ps.setString(1, validateMs + "ms");
              ps.execute();
            }
            return null;
          });
      split(upper);
      done = true;
    } finally {
      if (!done) {
        unseal();
      }
    }
  }

  private void unseal() throws SegmentStepFailed {
    step(
        "log_unseal",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_unseal"))) {
            ps.setString(1, LOCK_TIMEOUT);
            ps.execute();
          }
          return null;
        });
  }

  private boolean expired(long number) throws SegmentStepFailed {
    return step(
        "log_segment_expired",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_segment_expired"))) {
            ps.setLong(1, number);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
        });
  }

  private long drop(long number) throws SegmentStepFailed {
    return step(
        "log_drop_segment",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_drop_segment"))) {
            ps.setLong(1, number);
            ps.setString(2, LOCK_TIMEOUT);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  /** A step's failure, kept apart so that a lock timeout or a denied DDL is handled once. */
  private static final class SegmentStepFailed extends Exception {
    private static final long serialVersionUID = 1L;
    final String step;
    final transient SQLException cause;

    SegmentStepFailed(String step, SQLException cause) {
      super(step, cause, false, false);
      this.step = step;
      this.cause = cause;
    }
  }

  /** Runs one step in a transaction of its own. */
  private <T> T step(String name, JdbcSql.Work<T> work) throws SegmentStepFailed {
    try (Connection c = db.connect()) {
      return JdbcSql.inTransaction(c, work);
    } catch (SQLException e) {
      throw new SegmentStepFailed(name, e);
    }
  }
}
