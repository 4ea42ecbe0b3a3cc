package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Instant;

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
  HikariDataSource pool(int size, String name);

  /** A fresh, uniquely named schema (a database on MariaDB); drop it with {@link #dropSchema}. */
  String createSchemaName(String hint);

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
