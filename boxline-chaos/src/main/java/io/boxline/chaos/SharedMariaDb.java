package io.boxline.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

/**
 * The machine's shared MariaDB (127.0.0.1:3306 as root, or {@code BOXLINE_TEST_MARIADB_URL} /
 * {@code _USER} / {@code _PASSWORD}), with a database of the run's own that is dropped afterwards.
 * Other tests use the server, so the run never restarts it: database restarts in the schedule are
 * skipped (and reported as skipped).
 */
final class SharedMariaDb implements ChaosDatabase {
  private final String url;
  private final String user;
  private final String password;
  private final String database;

  private SharedMariaDb(String url, String user, String password) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.database = "chaos_" + UUID.randomUUID().toString().substring(0, 8);
  }

  static SharedMariaDb open() {
    String url = env("BOXLINE_TEST_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/?sslMode=disable");
    SharedMariaDb db =
        new SharedMariaDb(
            url,
            env("BOXLINE_TEST_MARIADB_USER", "root"),
            env("BOXLINE_TEST_MARIADB_PASSWORD", ""));
    try (Connection c = DriverManager.getConnection(url, db.user, db.password)) {
      return db;
    } catch (SQLException e) {
      throw new IllegalStateException("the shared MariaDB on " + url + " does not answer", e);
    }
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  @Override
  public String kind() {
    return "mariadb";
  }

  @Override
  public String url() {
    return url;
  }

  @Override
  public String user() {
    return user;
  }

  @Override
  public String password() {
    return password;
  }

  @Override
  public boolean restartable() {
    return false;
  }

  @Override
  public Duration crashAndRestart() {
    throw new UnsupportedOperationException("a shared MariaDB is never restarted");
  }

  @Override
  public String serialKey() {
    return "bigint AUTO_INCREMENT PRIMARY KEY";
  }

  @Override
  public String partitionColumn() {
    return "`partition`";
  }

  @Override
  public String schema() {
    return database;
  }

  @Override
  public void close() {
    try (Connection c = DriverManager.getConnection(url, user, password);
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + database);
    } catch (SQLException e) {
      System.err.println("could not drop " + database + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "the shared MariaDB on " + url + " (database " + database + ", never restarted)";
  }
}
