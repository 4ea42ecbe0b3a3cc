package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * An embedded H2 database of its own for one test: in memory ({@code
 * jdbc:h2:mem:<unique>;DB_CLOSE_DELAY=-1}) or in a file under a fresh temporary directory. {@link
 * #dropSchema} shuts the database down and, in file mode, deletes the directory.
 */
public final class H2Server implements TestServer {
  private final String url;
  private final Path directory;

  private H2Server(String url, Path directory) {
    this.url = url;
    this.directory = directory;
  }

  /** A new in-memory database, kept until {@link #dropSchema}. */
  public static H2Server memory() {
    return new H2Server(
        "jdbc:h2:mem:bxt_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1",
        null);
  }

  /** A new file database in a temporary directory of its own, deleted by {@link #dropSchema}. */
  public static H2Server file() {
    try {
      Path dir = Files.createTempDirectory("boxline-h2-");
      return new H2Server("jdbc:h2:file:" + dir.resolve("db").toAbsolutePath(), dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a temporary directory for H2", e);
    }
  }

  /** Whether the database lives in a file (else in memory). */
  public boolean fileMode() {
    return directory != null;
  }

  @Override
  public String url() {
    return url;
  }

  @Override
  public String user() {
    return "sa";
  }

  @Override
  public String password() {
    return "";
  }

  @Override
  public String origin() {
    return fileMode() ? "embedded H2 file database in " + directory : "embedded H2 in memory";
  }

  /** The database is this test's alone: shut it down (and delete its files in file mode). */
  @Override
  public void dropSchema(String schema) {
    io.boxline.Names.requireSchema(schema);
    try (Connection c = DriverManager.getConnection(url, user(), password());
        Statement st = c.createStatement()) {
      st.execute("SHUTDOWN");
    } catch (SQLException e) {
      throw new IllegalStateException("could not shut down test database " + url, e);
    }
    if (directory != null) {
      try (Stream<Path> files = Files.walk(directory)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not delete " + directory, e);
      }
    }
  }

  @Override
  public Instant databaseNow(HikariDataSource pool) {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)")) {
      rs.next();
      return Instant.EPOCH.plus(rs.getLong(1), ChronoUnit.MICROS);
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the database clock", e);
    }
  }

  @Override
  public String olderThanSeconds(String column, int seconds) {
    return column
        + " < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - "
        + (seconds * 1_000_000L);
  }

  @Override
  public String uuidColumnType() {
    return "UUID";
  }
}
