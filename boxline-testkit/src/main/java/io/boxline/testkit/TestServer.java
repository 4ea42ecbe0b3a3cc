package io.boxline.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A database server the tests run against, with what the behaviour suites need that differs between
 * SQL dialects. {@link PostgresServer}, {@link MariaDbServer} and {@link H2Server} implement it.
 */
public interface TestServer {
  /** JDBC URL of the server (for child JVMs: the schema is passed separately). */
  String url();

  String user();

  String password();

  /** Where the server came from, for logs. */
  String origin();

  /** A new pool of {@code size} connections. */
  default HikariDataSource pool(int size, String name) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url());
    cfg.setUsername(user());
    cfg.setPassword(password());
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(1);
    cfg.setPoolName(name);
    cfg.setConnectionTimeout(10_000);
    return new HikariDataSource(cfg);
  }

  /** A fresh, uniquely named schema (a database on MariaDB); drop it with {@link #dropSchema}. */
  default String createSchemaName(String hint) {
    String clean = hint.toLowerCase().replaceAll("[^a-z0-9]", "");
    if (clean.length() > 20) {
      clean = clean.substring(0, 20);
    }
    return "bxt_"
        + clean
        + "_"
        + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
  }

  void dropSchema(String schema);

  /** The server's clock now, read with a query. */
  Instant databaseNow(HikariDataSource pool);

  /**
   * A condition on one of Boxline's time columns (for example {@code created_at}) that holds when
   * the time is more than {@code seconds} ago by the server clock.
   */
  String olderThanSeconds(String column, int seconds);

  /** The column type that holds an event id in tables a test creates. */
  String uuidColumnType();
}
