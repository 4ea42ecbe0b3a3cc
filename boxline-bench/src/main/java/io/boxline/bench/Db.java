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

/** Connection settings of the benchmark database, pools, and schema housekeeping. */
final class Db {
  /** Pools of this process, closed by the shutdown hook before it drops the schemas. */
  static final List<HikariDataSource> OPEN = new java.util.concurrent.CopyOnWriteArrayList<>();

  final String url;
  final String user;
  final String password;

  /** PostgreSQL or MariaDB, from the URL. */
  final BenchDatabase kind;

  Db(String url, String user, String password) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.kind = BenchDatabase.forUrl(url);
  }

  /** A plain driver data source (no pool). */
  DataSource driver() {
    return kind.driver(url, user, password);
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

  /** Drops every schema (on MariaDB: database) whose name starts with {@code prefix}. */
  void dropSchemas(String prefix) {
    List<String> names = new ArrayList<>();
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(kind.listSchemas(prefix))) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot list schemas: " + e.getMessage(), e);
    }
    for (String n : names) {
      dropSchema(n);
    }
  }

  /** Drops one schema (on MariaDB a database) and everything in it, if it exists. */
  void dropSchema(String name) {
    exec(kind.dropSchema(name));
  }

  /** Server counters for W3, see {@link BenchDatabase#counters}. */
  long[] counters(Connection monitor) {
    return kind.counters(monitor);
  }
}
