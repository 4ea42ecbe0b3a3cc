package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds a MariaDB (10.6+) for tests: the JDBC URL in {@code BOXLINE_TEST_MARIADB_URL} (user and
 * password in {@code BOXLINE_TEST_MARIADB_USER} / {@code BOXLINE_TEST_MARIADB_PASSWORD}), else the
 * local server on 127.0.0.1:3306 as root with an empty password. When the local server is down it
 * starts it ({@code start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd}) and
 * waits for the port. It never skips: when nothing works it fails with what was tried and how to
 * get a server.
 */
public final class MariaDbServer extends SharedServer {
  public static final String URL_VARIABLE = "BOXLINE_TEST_MARIADB_URL";
  private static final String LOCAL_URL = "jdbc:mariadb://127.0.0.1:3306/?sslMode=disable";
  private static final String DAEMON = "/usr/sbin/mariadbd";

  private static MariaDbServer shared;

  private MariaDbServer(String url, String user, String password, String origin) {
    super(url, user, password, origin, "database");
  }

  /** The server shared by every test in this JVM. */
  public static synchronized MariaDbServer get() {
    if (shared == null) {
      shared = locate();
    }
    return shared;
  }

  private static MariaDbServer locate() {
    String envUrl = System.getenv(URL_VARIABLE);
    if (envUrl != null && !envUrl.isBlank()) {
      String user = envOr("BOXLINE_TEST_MARIADB_USER", "root");
      String password = envOr("BOXLINE_TEST_MARIADB_PASSWORD", "");
      String problem = probe(envUrl, user, password);
      if (problem == null) {
        return new MariaDbServer(envUrl, user, password, URL_VARIABLE);
      }
      // An explicit choice that does not work is an error, not a reason to use something else.
      throw new IllegalStateException(
          URL_VARIABLE + "=" + envUrl + " does not answer: " + problem + "; fix or unset it");
    }
    String problem = probe(LOCAL_URL, "root", "");
    if (problem == null) {
      return new MariaDbServer(LOCAL_URL, "root", "", "local server 127.0.0.1:3306");
    }
    String started = startLocalServer();
    String again = probe(LOCAL_URL, "root", "");
    if (again == null) {
      return new MariaDbServer(LOCAL_URL, "root", "", "local server 127.0.0.1:3306 (started)");
    }
    throw new IllegalStateException(
        "no MariaDB for the tests. Tried:\n  "
            + URL_VARIABLE
            + ": not set\n  local server "
            + LOCAL_URL
            + ": "
            + problem
            + "\n  starting it: "
            + started
            + "; then: "
            + again
            + "\nStart it (start-stop-daemon --start --oknodo --background --exec "
            + DAEMON
            + ", then wait for port 3306), or set "
            + URL_VARIABLE
            + " to a JDBC URL of a MariaDB 10.6+ server.");
  }

  /** Starts the local daemon and waits up to 60 s for its port; returns what happened. */
  private static String startLocalServer() {
    List<String> command =
        List.of("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", DAEMON);
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return String.join(" ", command) + " did not return within 30 s";
      }
      String out = new String(p.getInputStream().readAllBytes()).strip();
      if (p.exitValue() != 0) {
        return String.join(" ", command) + " exited with " + p.exitValue() + ": " + out;
      }
    } catch (IOException e) {
      return String.join(" ", command) + " failed: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while starting " + DAEMON;
    }
    String[] last = {"port 3306 never opened"};
    try {
      Await.until(
          Duration.ofSeconds(60),
          "MariaDB listening on 127.0.0.1:3306",
          () -> {
            try (Socket s = new Socket()) {
              s.connect(new InetSocketAddress("127.0.0.1", 3306), 500);
              return true;
            } catch (IOException e) {
              last[0] = e.getMessage();
              return false;
            }
          });
      return "started " + DAEMON;
    } catch (AssertionError | RuntimeException e) {
      return "started " + DAEMON + " but " + last[0];
    }
  }

  @Override
  String dropStatement(String schema) {
    return "DROP DATABASE IF EXISTS " + schema;
  }

  @Override
  public Instant databaseNow(HikariDataSource pool) {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))")) {
      rs.next();
      return Instant.EPOCH.plus(rs.getLong(1), ChronoUnit.MICROS);
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the server clock", e);
    }
  }

  @Override
  public String olderThanSeconds(String column, int seconds) {
    return column
        + " < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - "
        + (seconds * 1_000_000L);
  }

  @Override
  public String uuidColumnType() {
    return "CHAR(36)";
  }
}
