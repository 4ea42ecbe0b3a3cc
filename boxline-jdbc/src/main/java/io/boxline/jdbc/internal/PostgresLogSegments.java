package io.boxline.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The PostgreSQL log's time segments (V15__log_segments.sql): the log is partitioned by range of
 * {@code sequenced_at}, one partition per segment, its bounds kept in {@code log_segment}. A split
 * detaches the open segment and attaches it back with an upper bound; a drop is a {@code DROP
 * TABLE} after the segment was checked again under the log's lock. Each takes the log's ACCESS
 * EXCLUSIVE lock for a few catalog changes and waits at most {@link #LOCK_TIMEOUT} for it.
 */
final class PostgresLogSegments extends TimeSegmentedLog {
  /** An open segment with more rows than this is sealed before it is split (no scan under lock). */
  static final int SMALL_OPEN_SEGMENT = 20_000;

  /**
   * Time allowed to validate a seal: a fixed part, plus a row count at a conservative scan rate;
   * the sealed segment ends a little after that, so no event arrives past its bound meanwhile.
   */
  static final Duration SEAL_BASE = Duration.ofSeconds(5);

  static final long SEAL_ROWS_PER_SECOND = 50_000;
  static final String LOCK_TIMEOUT = "500ms";

  private final String schemaAndPrefix;

  PostgresLogSegments(
      JdbcSql db, SqlDialect dialect, String schema, String prefix, Duration width) {
    super(db, dialect, width);
    this.schemaAndPrefix = schema + "." + prefix;
  }

  @Override
  Layout layout() throws StepFailed {
    List<Segment> segments = new ArrayList<>();
    Instant[] now = {null};
    long[] longest = {0};
    long[] shortest = {0};
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
              shortest[0] = rs.getLong(7);
            }
          }
          return null;
        });
    return new Layout(segments, now[0], longest[0], shortest[0], sealed[0]);
  }

  @Override
  void finishUnfinished() throws StepFailed {
    unseal(); // a seal left by a run that stopped before its split
  }

  @Override
  long openRows(Segment open, long limit) throws StepFailed {
    return number(
        "log_open_rows",
        ps -> {
          dialect.bindInstant(ps, 1, open.lower());
          ps.setLong(2, limit);
        });
  }

  @Override
  long smallOpenSegment() {
    return SMALL_OPEN_SEGMENT;
  }

  @Override
  void split(Segment open, Instant upper) throws StepFailed {
    run(
        "log_split",
        ps -> {
          dialect.bindInstant(ps, 1, upper);
          ps.setString(2, LOCK_TIMEOUT);
        });
  }

  /**
   * Seals the open segment (a CHECK constraint not yet validated, bounding it a little ahead of the
   * clock), validates the seal without blocking writers, then splits: the split's check of the rows
   * is then implied by the seal, no scan under the lock. Takes the seal back when a step fails: a
   * seal left in place would refuse events once the clock reaches its bound.
   */
  @Override
  Instant splitLarge(Segment open, Instant now, long widthMs) throws StepFailed {
    long estimate =
        number("log_segment_rows_estimate", ps -> ps.setString(1, tableOf(open.number())));
    long rows = Math.max(SMALL_OPEN_SEGMENT, estimate);
    long validateMs = SEAL_BASE.toMillis() + rows * 1000 / SEAL_ROWS_PER_SECOND;
    Instant upper = now.plusMillis(Math.max(2 * widthMs, validateMs + SEAL_BASE.toMillis()));
    run(
        "log_seal",
        ps -> {
          dialect.bindInstant(ps, 1, upper);
          ps.setString(2, LOCK_TIMEOUT);
        });
    boolean done = false;
    try {
      run("log_seal_validate", ps -> ps.setString(1, validateMs + "ms"));
      split(open, upper);
      done = true;
    } finally {
      if (!done) {
        unseal();
      }
    }
    return upper;
  }

  private String tableOf(long number) {
    return schemaAndPrefix + "log_s" + number;
  }

  private void unseal() throws StepFailed {
    run("log_unseal", ps -> ps.setString(1, LOCK_TIMEOUT));
  }

  @Override
  boolean expired(Segment closed) throws StepFailed {
    return whether("log_segment_expired", ps -> ps.setLong(1, closed.number()));
  }

  @Override
  long drop(Segment closed) throws StepFailed {
    return number(
        "log_drop_segment",
        ps -> {
          ps.setLong(1, closed.number());
          ps.setString(2, LOCK_TIMEOUT);
        });
  }

  @Override
  boolean transientFailure(SQLException e) {
    return "55P03".equals(e.getSQLState()) // lock_not_available: the next run tries again
        || "57014".equals(e.getSQLState()); // a seal's validation ran out of its time
  }
}
