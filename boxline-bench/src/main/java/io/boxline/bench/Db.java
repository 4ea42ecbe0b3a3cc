package io.boxline.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** Connection settings of the benchmark database, pools, and schema housekeeping. */
final class Db {
  /** Pools of this process, closed by the shutdown hook before it drops the schemas. */
  static final List<HikariDataSource> OPEN = new java.util.concurrent.CopyOnWriteArrayList<>();

  final String url;
  final String user;
  final String password;

  Db(String url, String user, String password) {
    this.url = url;
    this.user = user;
    this.password = password;
  }

  /** A plain driver data source (no pool). */
  DataSource driver() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(url);
    ds.setUser(user);
    ds.setPassword(password);
    return ds;
  }

  /**
   * A HikariCP pool with the library defaults except size and name: fixed size (minimumIdle =
   * maximumPoolSize), connection validation on borrow after 500 ms idle (JDBC4 isValid), no
   * keep-alive, 30 min max lifetime.
   *
   * @param underlying the pool's data source, or null to use the JDBC URL
   */
  HikariDataSource pool(String name, int size, DataSource underlying) {
    HikariConfig c = new HikariConfig();
    if (underlying != null) {
      c.setDataSource(underlying);
    } else {
      c.setJdbcUrl(url);
      c.setUsername(user);
      c.setPassword(password);
    }
    c.setPoolName(name);
    c.setMaximumPoolSize(size);
    c.setConnectionTimeout(30_000);
    HikariDataSource ds = new HikariDataSource(c);
    OPEN.add(ds);
    return ds;
  }

  /** Closes every pool still open (rolls back what they were doing), so schemas can be dropped. */
  static void closePools() {
    for (HikariDataSource ds : OPEN) {
      try {
        ds.close();
      } catch (RuntimeException e) {
        // best effort
      }
    }
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, user, password);
  }

  void exec(String... sql) {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "failed: " + String.join("; ", sql) + ": " + e.getMessage(), e);
    }
  }

  long queryLong(String sql) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql + ": " + e.getMessage(), e);
    }
  }

  String queryString(String sql) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql + ": " + e.getMessage(), e);
    }
  }

  /** Drops every schema whose name starts with {@code prefix} (the run's schemas). */
  void dropSchemas(String prefix) {
    List<String> names = new ArrayList<>();
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE '"
                    + prefix.replace("_", "\\_")
                    + "%'")) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot list schemas: " + e.getMessage(), e);
    }
    for (String n : names) {
      exec("DROP SCHEMA IF EXISTS " + n + " CASCADE");
    }
  }

  /**
   * Database-wide counters from pg_stat_database for the connected database: transactions (commits
   * + rollbacks), tuples returned, fetched, inserted, updated, deleted. One autocommit statement,
   * so one transaction of its own, on the caller's (long-lived) monitor connection.
   */
  static long[] databaseCounters(Connection monitor) {
    try (Statement st = monitor.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT xact_commit + xact_rollback, tup_returned, tup_fetched, tup_inserted,"
                    + " tup_updated, tup_deleted FROM pg_stat_database WHERE datname ="
                    + " current_database()")) {
      rs.next();
      long[] v = new long[6];
      for (int i = 0; i < 6; i++) {
        v[i] = rs.getLong(i + 1);
      }
      return v;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read pg_stat_database: " + e.getMessage(), e);
    }
  }
}
