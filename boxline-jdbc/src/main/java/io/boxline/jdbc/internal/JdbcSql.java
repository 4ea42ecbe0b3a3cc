package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Runs named queries on a data source: borrows a connection, binds, maps rows, and turns every
 * {@link SQLException} into a {@link StoreException} carrying the query's name and text.
 */
final class JdbcSql {
  /** Binds a statement's parameters. */
  @FunctionalInterface
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Maps the current row. */
  @FunctionalInterface
  interface RowMapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  /** Work inside one transaction. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  private final DataSource dataSource;
  private final Map<String, String> queries;

  JdbcSql(DataSource dataSource, Map<String, String> queries) {
    this.dataSource = dataSource;
    this.queries = queries;
  }

  /** The same named statements on another data source (a read replica of the same schema). */
  JdbcSql on(DataSource other) {
    return new JdbcSql(other, queries);
  }

  DataSource dataSource() {
    return dataSource;
  }

  String sql(String name) {
    String s = queries.get(name);
    if (s == null) {
      throw new IllegalStateException("no query named " + name);
    }
    return s;
  }

  /** Whether the dialect's queries include {@code name} (where dialects do a step differently). */
  boolean has(String name) {
    return queries.containsKey(name);
  }

  StoreException fail(String name, SQLException e) {
    return new StoreException(name, queries.getOrDefault(name, name), e);
  }

  /** A pooled connection in auto-commit mode. */
  Connection connect() throws SQLException {
    Connection c = dataSource.getConnection();
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    return c;
  }

  <T> List<T> list(String name, Binder binder, RowMapper<T> mapper) {
    try (Connection c = connect()) {
      return list(c, name, binder, mapper);
    } catch (SQLException e) {
      throw fail(name, e);
    }
  }

  <T> List<T> list(Connection c, String name, Binder binder, RowMapper<T> mapper)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql(name))) {
      binder.bind(ps);
      List<T> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(mapper.map(rs));
        }
      }
      return out;
    }
  }

  <T> Optional<T> one(String name, Binder binder, RowMapper<T> mapper) {
    List<T> rows = list(name, binder, mapper);
    return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
  }

  int update(String name, Binder binder) {
    try (Connection c = connect()) {
      return update(c, name, binder);
    } catch (SQLException e) {
      throw fail(name, e);
    }
  }

  int update(Connection c, String name, Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql(name))) {
      binder.bind(ps);
      return ps.executeUpdate();
    }
  }

  /** Runs {@code work} on a pooled connection in auto-commit mode. */
  <T> T on(String name, Work<T> work) {
    try (Connection c = connect()) {
      return work.run(c);
    } catch (SQLException e) {
      throw fail(name, e);
    }
  }

  /** Runs {@code work} in a transaction on a pooled connection; rolls back on any failure. */
  <T> T tx(String name, Work<T> work) {
    try (Connection c = connect()) {
      return inTransaction(c, work);
    } catch (SQLException e) {
      throw fail(name, e);
    }
  }

  /**
   * Runs {@code work} in a transaction on {@code c}, which is in auto-commit mode and returns to
   * it; rolls back on any failure.
   */
  static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
    c.setAutoCommit(false);
    try {
      T result = work.run(c);
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }

  /** Partitions sorted by key, the order in which every lease and cursor statement locks rows. */
  static List<PartitionKey> sorted(Collection<PartitionKey> partitions) {
    List<PartitionKey> out = new ArrayList<>(partitions);
    out.sort(
        Comparator.comparingLong(PartitionKey::topicId).thenComparingInt(PartitionKey::partition));
    return out;
  }

  /** PostgreSQL's deadlock, or the serialization failure MariaDB and H2 report for one. */
  static boolean isDeadlock(SQLException e) {
    return anyCause(e, s -> "40P01".equals(s.getSQLState()) || "40001".equals(s.getSQLState()));
  }

  /**
   * Whether the database refused {@code e}'s statement for want of a privilege: PostgreSQL's
   * SQLSTATE 42501; MariaDB/MySQL's access-denied errors on a database (1044), a table (1142), a
   * column (1143), a privilege (1227) or a routine (1370); H2's 90096.
   */
  static boolean isPermissionDenied(SQLException e) {
    return anyCause(
        e,
        s -> {
          int code = s.getErrorCode();
          return "42501".equals(s.getSQLState())
              || (s.getSQLState() != null
                  && s.getSQLState().startsWith("42")
                  && (code == 1044 || code == 1142 || code == 1143 || code == 1227 || code == 1370))
              || code == 90096;
        });
  }

  /** Whether {@code e} or an {@link SQLException} among its causes matches {@code test}. */
  static boolean anyCause(SQLException e, java.util.function.Predicate<SQLException> test) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && test.test(s)) {
        return true;
      }
    }
    return false;
  }

  /** Rolls {@code tx} back after {@code failure}; a failure of the rollback is added to it. */
  static void rollbackAfter(Connection tx, SQLException failure) {
    try {
      tx.rollback();
    } catch (SQLException suppressed) {
      failure.addSuppressed(suppressed);
    }
  }

  /** Rolls {@code tx} back after {@code failure}; a failure of the rollback is added to it. */
  static void rollbackAfter(Connection tx, RuntimeException failure) {
    try {
      tx.rollback();
    } catch (SQLException suppressed) {
      failure.addSuppressed(suppressed);
    }
  }

  static java.time.Instant instant(java.sql.Timestamp t) {
    return t == null ? null : t.toInstant();
  }

  static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // already failing or finished
    }
  }

  /** Reads the {@code [topic, partition, position]} rows of a fencing statement. */
  static Map<PartitionKey, Long> readPositions(ResultSet rs) throws SQLException {
    Map<PartitionKey, Long> positions = new java.util.HashMap<>();
    while (rs.next()) {
      positions.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
    }
    return positions;
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

  /** The value of each key in {@code keys}' order, empty where {@code values} has none. */
  static List<java.util.OptionalLong> inOrder(
      List<PartitionKey> keys, Map<PartitionKey, Long> values) {
    List<java.util.OptionalLong> out = new ArrayList<>(keys.size());
    for (PartitionKey k : keys) {
      Long v = values.get(k);
      out.add(v == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(v));
    }
    return out;
  }
}
