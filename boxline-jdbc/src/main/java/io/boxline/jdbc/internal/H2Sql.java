package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionKey;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * Small helpers of the H2 dialect. Times are epoch microseconds as on MariaDB (see {@link
 * EpochMicros}); lists travel as SQL arrays; H2 has no {@code INSERT IGNORE} in its own mode, so
 * "insert unless present" is a plain insert whose duplicate-key error counts as zero rows.
 */
final class H2Sql {
  /** H2's codes: duplicate key, deadlock, lock timeout, concurrent update of a row. */
  private static final int DUPLICATE_KEY = 23505;

  private static final int DEADLOCK = 40001;
  private static final int LOCK_TIMEOUT = 50200;
  private static final int CONCURRENT_UPDATE = 90131;

  private H2Sql() {}

  /**
   * Runs an insert; a duplicate key counts as 0 rows. H2 undoes only the failed statement, so the
   * surrounding transaction goes on.
   */
  static int insertIgnore(PreparedStatement ps) throws SQLException {
    try {
      return ps.executeUpdate();
    } catch (SQLException e) {
      if (e.getErrorCode() == DUPLICATE_KEY || "23505".equals(e.getSQLState())) {
        return 0;
      }
      throw e;
    }
  }

  /** Whether the failure is a deadlock, lock timeout or concurrent update; a retry may succeed. */
  static boolean retryable(SQLException e) {
    return JdbcSql.anyCause(
        e,
        s ->
            s.getErrorCode() == DEADLOCK
                || s.getErrorCode() == LOCK_TIMEOUT
                || s.getErrorCode() == CONCURRENT_UPDATE
                || "40001".equals(s.getSQLState()));
  }

  /** One column of {@code rows}, as an array to bind. */
  static <T> Long[] longs(List<T> rows, java.util.function.ToLongFunction<T> column) {
    Long[] out = new Long[rows.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = column.applyAsLong(rows.get(i));
    }
    return out;
  }

  /** One column of {@code rows}, as an array to bind. */
  static <T> Integer[] ints(List<T> rows, java.util.function.ToIntFunction<T> column) {
    Integer[] out = new Integer[rows.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = column.applyAsInt(rows.get(i));
    }
    return out;
  }

  static String[] strings(Collection<String> values) {
    return values.toArray(new String[0]);
  }

  /** Binds group, topic and partition of one lease row. */
  static void bindLease(PreparedStatement ps, int at, String group, PartitionKey k)
      throws SQLException {
    ps.setString(at, group);
    ps.setLong(at + 1, k.topicId());
    ps.setInt(at + 2, k.partition());
  }
}
