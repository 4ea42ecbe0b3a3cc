package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Finds a PostgreSQL for tests, in this order: the JDBC URL in {@code BOXLINE_TEST_PG_URL} (user
 * and password in {@code BOXLINE_TEST_PG_USER} / {@code BOXLINE_TEST_PG_PASSWORD}); the local
 * server on 127.0.0.1:5432 as user postgres; an embedded PostgreSQL started in this JVM. It never
 * skips: when none works it fails with what was tried and how to get a server.
 */
public final class PostgresServer extends SharedServer {
  public static final String URL_VARIABLE = "BOXLINE_TEST_PG_URL";
  private static final String LOCAL_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";

  private static PostgresServer shared;

  private PostgresServer(String url, String user, String password, String origin) {
    super(url, user, password, origin, "schema");
  }

  /** The server shared by every test in this JVM. */
  public static synchronized PostgresServer get() {
    if (shared == null) {
      shared = locate();
    }
    return shared;
  }

  private static PostgresServer locate() {
    StringBuilder tried = new StringBuilder();
    String envUrl = System.getenv(URL_VARIABLE);
    if (envUrl != null && !envUrl.isBlank()) {
      String user = envOr("BOXLINE_TEST_PG_USER", "postgres");
      String password = envOr("BOXLINE_TEST_PG_PASSWORD", "");
      String problem = probe(envUrl, user, password);
      if (problem == null) {
        return new PostgresServer(envUrl, user, password, URL_VARIABLE);
      }
      // An explicit choice that does not work is an error, not a reason to use something else.
      throw new IllegalStateException(
          URL_VARIABLE + "=" + envUrl + " does not answer: " + problem + "; fix or unset it");
    }
    tried.append("  ").append(URL_VARIABLE).append(": not set\n");
    String problem = probe(LOCAL_URL, "postgres", "");
    if (problem == null) {
      return new PostgresServer(LOCAL_URL, "postgres", "", "local server 127.0.0.1:5432");
    }
    tried.append("  local server ").append(LOCAL_URL).append(": ").append(problem).append('\n');
    try {
      EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      pg.close();
                    } catch (IOException ignored) {
                      // the JVM is exiting
                    }
                  }));
      return new PostgresServer(
          pg.getJdbcUrl("postgres", "postgres"), "postgres", "", "embedded PostgreSQL");
    } catch (IOException | RuntimeException e) {
      tried.append("  embedded PostgreSQL: ").append(e).append('\n');
    }
    throw new IllegalStateException(
        "no PostgreSQL for the tests. Tried:\n"
            + tried
            + "Start the local server (pg_ctlcluster 15 main start), or set "
            + URL_VARIABLE
            + " to a JDBC URL of a PostgreSQL 13+ database.");
  }

  @Override
  String dropStatement(String schema) {
    return "DROP SCHEMA IF EXISTS " + schema + " CASCADE";
  }

  @Override
  public java.time.Instant databaseNow(HikariDataSource pool) {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the server clock", e);
    }
  }

  @Override
  public String olderThanSeconds(String column, int seconds) {
    return column + " < now() - interval '" + seconds + " second'";
  }

  @Override
  public String uuidColumnType() {
    return "uuid";
  }
}
