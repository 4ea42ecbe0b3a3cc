package io.boxline.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The MariaDB/MySQL log's time segments (V13__log_segments.sql): the log is partitioned by range of
 * {@code sequenced_at} (epoch µs), partition {@code s<n>} per segment, the bounds read from {@code
 * information_schema.PARTITIONS}. A split is a {@code REORGANIZE PARTITION} of the open segment, a
 * drop a {@code DROP PARTITION}; each waits at most 2 s for the table's metadata lock.
 *
 * <p>A reorganization copies the segment's rows while writers wait, so only an open segment of at
 * most {@link #SMALL_OPEN_SEGMENT} rows is split (a fraction of a second); a larger one (a log from
 * before segments, or after retention stopped for long) is trimmed row by row first. DDL commits by
 * itself here, so a segment cannot be checked under the lock its drop takes: it stays while a
 * transaction that began before its end is still open (one could still write into it).
 */
final class MariaDbLogSegments extends TimeSegmentedLog {
  static final int SMALL_OPEN_SEGMENT = 200_000;
  private static final int LOCK_WAIT_TIMEOUT = 1205;

  MariaDbLogSegments(JdbcSql db, SqlDialect dialect, Duration width) {
    super(db, dialect, width);
  }

  @Override
  Layout layout() throws StepFailed {
    return step(
        "log_partitions",
        c -> {
          List<Segment> segments = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_partitions"));
              ResultSet rs = ps.executeQuery()) {
            Instant lower = null;
            while (rs.next()) {
              String name = rs.getString(1);
              String bound = rs.getString(2);
              Instant upper =
                  "MAXVALUE".equalsIgnoreCase(bound)
                      ? null
                      : EpochMicros.instant(Long.parseLong(bound.trim()));
              segments.add(new Segment(Long.parseLong(name.substring(1)), lower, upper));
              lower = upper;
            }
          }
          Instant now;
          long longest;
          long shortest;
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_clock"));
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            now = EpochMicros.instant(rs.getLong(1));
            longest = rs.getLong(2);
            shortest = rs.getLong(3);
          }
          // The copy the row-by-row purge reads, in the same transaction.
          try (PreparedStatement clear = c.prepareStatement(db.sql("log_segment_clear"));
              PreparedStatement insert = c.prepareStatement(db.sql("log_segment_insert"))) {
            clear.executeUpdate();
            for (Segment s : segments) {
              insert.setLong(1, s.number());
              insert.setObject(2, EpochMicros.microsOrNull(s.lower()), Types.BIGINT);
              insert.setObject(3, EpochMicros.microsOrNull(s.upper()), Types.BIGINT);
              insert.addBatch();
            }
            insert.executeBatch();
          }
          return new Layout(segments, now, longest, shortest, false);
        });
  }

  @Override
  void finishUnfinished() {
    // A REORGANIZE or DROP PARTITION is atomic here: nothing is left half done.
  }

  @Override
  long openRows(Segment open, long limit) throws StepFailed {
    return number(
        "log_open_rows",
        ps -> {
          ps.setLong(1, micros(open.lower()));
          ps.setLong(2, limit);
        });
  }

  /** A segment's lower bound in µs ({@link Long#MIN_VALUE} for the first segment's open one). */
  private static long micros(Instant lower) {
    return lower == null ? Long.MIN_VALUE : EpochMicros.micros(lower);
  }

  @Override
  long smallOpenSegment() {
    return SMALL_OPEN_SEGMENT;
  }

  @Override
  void split(Segment open, Instant upper) throws StepFailed {
    String ddl =
        db.sql("log_split")
            .replace("{open}", Long.toString(open.number()))
            .replace("{next}", Long.toString(open.number() + 1))
            .replace("{upper}", Long.toString(EpochMicros.micros(upper)));
    ddl("log_split", ddl);
  }

  @Override
  Instant splitLarge(Segment open, Instant now, long widthMs) {
    return null; // a REORGANIZE would copy the rows while writers wait
  }

  @Override
  boolean expired(Segment closed) throws StepFailed {
    long lower = micros(closed.lower());
    long upper = EpochMicros.micros(closed.upper());
    return step(
        "log_segment_expired",
        c -> {
          try (PreparedStatement writers = c.prepareStatement(db.sql("log_writers_before"))) {
            writers.setLong(1, upper);
            try (ResultSet rs = writers.executeQuery()) {
              if (rs.next() && rs.getLong(1) > 0) {
                return false;
              }
            }
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("log_segment_expired"))) {
            ps.setLong(1, lower);
            ps.setLong(2, upper);
            ps.setLong(3, upper);
            ps.setLong(4, lower);
            ps.setLong(5, upper);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() && rs.getBoolean(1);
            }
          }
        });
  }

  @Override
  long drop(Segment closed) throws StepFailed {
    long lower = micros(closed.lower());
    long upper = EpochMicros.micros(closed.upper());
    long rows =
        number(
            "log_segment_rows",
            ps -> {
              ps.setLong(1, lower);
              ps.setLong(2, upper);
            });
    ddl(
        "log_drop_segment",
        db.sql("log_drop_segment").replace("{number}", Long.toString(closed.number())));
    return rows;
  }

  /** Runs DDL with a bounded wait for the metadata lock, then puts the session back. */
  private void ddl(String name, String sql) throws StepFailed {
    autoCommitStep(
        name,
        c -> {
          try (Statement st = c.createStatement()) {
            st.execute(db.sql("log_ddl_lock_wait"));
            try {
              st.execute(sql);
            } finally {
              st.execute(db.sql("log_ddl_lock_wait_reset"));
            }
          }
          return null;
        });
  }

  @Override
  boolean transientFailure(SQLException e) {
    return e.getErrorCode() == LOCK_WAIT_TIMEOUT;
  }
}
