package io.boxline.chaos;

import io.boxline.testkit.MariaDbServer;
import java.time.Duration;
import java.util.UUID;

/**
 * The machine's shared MariaDB, found as the tests find it ({@link MariaDbServer}: {@code
 * BOXLINE_TEST_MARIADB_URL} / {@code _USER} / {@code _PASSWORD}, else 127.0.0.1:3306 as root), with
 * a database of the run's own that is dropped afterwards. Other tests use the server, so the run
 * never restarts it: database restarts in the schedule are skipped (and reported as skipped).
 */
final class SharedMariaDb implements ChaosDatabase {
  private final MariaDbServer server = MariaDbServer.get();
  private final String url = server.url();
  private final String user = server.user();
  private final String password = server.password();
  private final String database = "chaos_" + UUID.randomUUID().toString().substring(0, 8);

  static SharedMariaDb open() {
    return new SharedMariaDb();
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
    try {
      server.dropSchema(database);
    } catch (IllegalStateException e) {
      System.err.println("could not drop " + database + ": " + e);
    }
  }

  @Override
  public String toString() {
    return "the shared MariaDB on " + url + " (database " + database + ", never restarted)";
  }
}
