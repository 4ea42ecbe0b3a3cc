package io.boxline.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The benchmark database (PostgreSQL): connection settings, pools, schema housekeeping, the
 * raw-insert baseline of W1 and the server counters of W3. Boxline itself needs none of this: its
 * {@code JdbcStore} picks the dialect.
 */
final class Db {
  /** Pools of this process, closed by the shutdown hook before it drops the schemas. */
  static final List<HikariDataSource> OPEN = new java.util.concurrent.CopyOnWriteArrayList<>();

  static final Opt<String> URL =
      Opt.text("url", "jdbc:postgresql://127.0.0.1:5432/postgres", "PostgreSQL JDBC URL");
  static final Opt<String> USER = Opt.text("user", "postgres", "database user");
  static final Opt<String> PASSWORD = Opt.text("password", "", "database password");

  static final String BUSINESS_DDL =
      "CREATE TABLE %s.bench_order (id bigserial PRIMARY KEY, customer text NOT NULL,"
          + " amount_cents bigint NOT NULL, status text NOT NULL,"
          + " created_at timestamptz NOT NULL DEFAULT now())";
  static final String PLAIN_EVENT_DDL =
      "CREATE TABLE %s.plain_event (id bigserial PRIMARY KEY, event_id uuid NOT NULL,"
          + " topic_id bigint NOT NULL, partition integer, event_key text, event_type text NOT NULL,"
          + " source text, content_type text NOT NULL, payload bytea NOT NULL, headers jsonb,"
          + " created_at timestamptz NOT NULL DEFAULT now())";
  private static final String PLAIN_COLUMNS =
      "INSERT INTO %s.plain_event (event_id, topic_id, partition, event_key, event_type, source,"
          + " content_type, payload, headers) ";
  // One event: a single-row INSERT; several: one statement, the shape of Boxline's producer insert.
  static final String PLAIN_INSERT_ONE =
      PLAIN_COLUMNS + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)";
  static final String PLAIN_INSERT_MANY =
      PLAIN_COLUMNS
          + "SELECT * FROM unnest(?::uuid[], ?::bigint[], ?::integer[], ?::text[], ?::text[],"
          + " ?::text[], ?::text[], ?::bytea[], ?::jsonb[])";

  final String url;
  final String user;
  final String password;

  Db(String url, String user, String password) {
    if (!url.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(
          "the benchmarks run on PostgreSQL (jdbc:postgresql:), not "
              + url
              + "; MariaDB runs are at the tag bench-archive-2026-11");
    }
    this.url = url;
    this.user = user;
    this.password = password;
  }

  static Db of(Options o) {
    return new Db(o.get(URL), o.get(USER), o.get(PASSWORD));
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
   * A HikariCP pool with the library defaults except size and name: fixed size, validation on
   * borrow after 500 ms idle, no keep-alive.
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
      // Names the pool's backends in pg_stat_activity, to tell whose they are.
      c.addDataSourceProperty("ApplicationName", name);
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
    return Long.parseLong(queryString(sql));
  }

  /** The first column of the first row of a query's result. */
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

  /** Drops every schema whose name starts with {@code prefix}. */
  void dropSchemas(String prefix) {
    List<String> names = new ArrayList<>();
    String like = "'" + prefix.replace("_", "\\_") + "%'";
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT nspname FROM pg_namespace WHERE nspname LIKE " + like)) {
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

  void dropSchema(String name) {
    exec("DROP SCHEMA IF EXISTS " + name + " CASCADE");
  }

  /** Report header lines: server version, durability settings, buffer sizes. */
  void describe(java.util.Map<String, String> env) {
    env.put("PostgreSQL", queryString("SHOW server_version"));
    List<String> durability = new ArrayList<>();
    for (String n : List.of("fsync", "synchronous_commit", "wal_sync_method")) {
      durability.add(n + "=" + queryString("SHOW " + n));
    }
    env.put("durability", String.join(", ", durability));
    env.put("shared_buffers", queryString("SHOW shared_buffers"));
  }

  // ------------------------------------------------------------------ W1 raw-insert baseline

  static String businessInsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".bench_order (customer, amount_cents, status) VALUES (?, ?, 'PLACED')";
  }

  /** Inserts events {@code first ..} into {@code plain_event}, their partitions computed. */
  static void insertPlainEvents(
      Connection c, String schema, long first, String[] keys, int[] partitions)
      throws SQLException {
    int n = keys.length;
    try (PreparedStatement ps =
        c.prepareStatement(String.format(n == 1 ? PLAIN_INSERT_ONE : PLAIN_INSERT_MANY, schema))) {
      if (n == 1) {
        ps.setObject(1, Payloads.id(first));
        ps.setLong(2, 1L);
        ps.setInt(3, partitions[0]);
        ps.setString(4, keys[0]);
        ps.setString(5, "order.placed");
        ps.setString(6, null);
        ps.setString(7, "application/json");
        ps.setBytes(8, Payloads.payload(first));
        ps.setString(9, null);
      } else {
        UUID[] ids = new UUID[n];
        Long[] topics = new Long[n];
        Integer[] parts = new Integer[n];
        String[] types = new String[n];
        String[] contentTypes = new String[n];
        byte[][] payloads = new byte[n][];
        for (int i = 0; i < n; i++) {
          ids[i] = Payloads.id(first + i);
          topics[i] = 1L;
          parts[i] = partitions[i];
          types[i] = "order.placed";
          contentTypes[i] = "application/json";
          payloads[i] = Payloads.payload(first + i);
        }
        ps.setArray(1, c.createArrayOf("uuid", ids));
        ps.setArray(2, c.createArrayOf("bigint", topics));
        ps.setArray(3, c.createArrayOf("integer", parts));
        ps.setArray(4, c.createArrayOf("text", keys));
        ps.setArray(5, c.createArrayOf("text", types));
        ps.setArray(6, c.createArrayOf("text", new String[n]));
        ps.setArray(7, c.createArrayOf("text", contentTypes));
        ps.setObject(8, payloads);
        ps.setArray(9, c.createArrayOf("text", new String[n]));
      }
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ W3 server counters

  /**
   * xact_commit + xact_rollback of the connected database (pg_stat_database): one autocommit
   * statement on the caller's long-lived monitor connection, so W3 subtracts the read itself.
   */
  static long transactions(Connection monitor) {
    try (Statement st = monitor.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database"
                    + " WHERE datname = current_database()")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read pg_stat_database: " + e.getMessage(), e);
    }
  }
}
