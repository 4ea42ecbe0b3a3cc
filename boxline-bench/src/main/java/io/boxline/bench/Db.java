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
import java.util.Locale;
import javax.sql.DataSource;

/** Connection settings of the benchmark database, pools, and schema housekeeping. */
final class Db {
  /** Pools of this process, closed by the shutdown hook before it drops the schemas. */
  static final List<HikariDataSource> OPEN = new java.util.concurrent.CopyOnWriteArrayList<>();

  static final Opt<String> DB =
      Opt.text(
          "db", null, "postgresql (default) or mariadb; a --url decides too (they must agree)");

  static final Opt<String> URL =
      Opt.text("url", null, "JDBC URL (default: the local server of --db, database postgres)");

  static final Opt<String> HOST =
      Opt.text("host", "127.0.0.1:5432", "PostgreSQL host:port (database postgres)");

  static final Opt<String> USER =
      Opt.text("user", null, "database user (default: postgres on PostgreSQL, root on MariaDB)");

  static final Opt<String> PASSWORD = Opt.text("password", "", "database password");

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

  /**
   * The database of the options: {@code --host} (PostgreSQL), or {@code --db} and {@code --url},
   * which must agree when both are given; by default the local PostgreSQL.
   */
  static Db of(Options o) {
    String db = o.get(DB);
    String url = o.given(HOST) ? "jdbc:postgresql://" + o.get(HOST) + "/postgres" : o.get(URL);
    BenchDatabase chosen;
    if (db == null) {
      chosen = null;
    } else if (List.of("postgresql", "postgres", "pg").contains(db.toLowerCase(Locale.ROOT))) {
      chosen = PostgreSqlDatabase.INSTANCE;
    } else if (List.of("mariadb", "mysql").contains(db.toLowerCase(Locale.ROOT))) {
      chosen = MariaDbDatabase.INSTANCE;
    } else {
      throw new IllegalArgumentException("--db takes postgresql or mariadb, got " + db);
    }
    BenchDatabase kind = chosen == null ? PostgreSqlDatabase.INSTANCE : chosen;
    if (url != null) {
      kind = BenchDatabase.forUrl(url);
      if (chosen != null && chosen != kind) {
        throw new IllegalArgumentException(
            "--db=" + db + " does not match --url=" + url + " (a " + kind.product() + " URL)");
      }
    }
    String user = o.get(USER);
    return new Db(
        url == null ? kind.defaultUrl() : url,
        user == null ? kind.defaultUser() : user,
        o.get(PASSWORD));
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
      if (kind instanceof PostgreSqlDatabase) {
        // Names the pool's backends in pg_stat_activity, so that Cost can find their CPU time.
        c.addDataSourceProperty("ApplicationName", name);
      }
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
    return queryOne(sql, rs -> rs.getLong(1));
  }

  String queryString(String sql) {
    return queryOne(sql, rs -> rs.getString(1));
  }

  /** Reads the first row of a query's result. */
  private <T> T queryOne(String sql, Column<T> column) {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return column.read(rs);
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql + ": " + e.getMessage(), e);
    }
  }

  private interface Column<T> {
    T read(ResultSet rs) throws SQLException;
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
