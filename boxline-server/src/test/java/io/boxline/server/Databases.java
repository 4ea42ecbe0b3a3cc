package io.boxline.server;

import static org.assertj.core.api.Assertions.fail;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/** The machine's PostgreSQL and MariaDB, with a fresh schema per test class. */
final class Databases {
  static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  static final String MARIADB_URL = "jdbc:mariadb://127.0.0.1:3306/test?sslMode=disable";

  private Databases() {}

  /** The {@code database:} line of a server config for a schema on the test PostgreSQL. */
  static String postgresYaml(String schema) {
    return "database: {url: '" + PG_URL + "', user: postgres, schema: " + schema + "}\n";
  }

  static String uniqueName(String prefix) {
    return prefix + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
  }

  static Connection postgres() {
    try {
      return DriverManager.getConnection(PG_URL, "postgres", "");
    } catch (SQLException e) {
      return fail(
          "PostgreSQL must run on 127.0.0.1:5432 with trust auth for these tests; start it with"
              + " 'pg_ctlcluster --skip-systemctl-redirect 15 main start' ("
              + e.getMessage()
              + ")");
    }
  }

  static Connection mariadb() {
    try {
      return DriverManager.getConnection(MARIADB_URL, "root", "");
    } catch (SQLException e) {
      return fail(
          "MariaDB must run on 127.0.0.1:3306 (root, empty password) for this test; start it with"
              + " 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd' ("
              + e.getMessage()
              + ")");
    }
  }

  static void dropPostgresSchema(String schema) throws SQLException {
    try (Connection c = postgres();
        Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  static void dropMariaDbDatabase(String database) throws SQLException {
    try (Connection c = mariadb();
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + database);
    }
  }
}
