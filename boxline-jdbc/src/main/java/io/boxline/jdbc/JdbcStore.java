package io.boxline.jdbc;

import io.boxline.Names;
import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.jdbc.internal.PostgresStore;
import io.boxline.jdbc.internal.SqlScript;
import io.boxline.spi.Store;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The JDBC {@link Store}: detects the database from the connection and picks its dialect.
 *
 * <pre>{@code
 * Store store = JdbcStore.builder(dataSource).schema("boxline").tablePrefix("").build();
 * }</pre>
 *
 * <p>The data source should be a pool. Boxline holds one of its connections permanently for
 * wake-ups (PostgreSQL LISTEN) and borrows others briefly for the sequencer and each consumer
 * worker.
 */
public final class JdbcStore {
  /** Default schema that holds Boxline's tables. */
  public static final String DEFAULT_SCHEMA = "boxline";

  private JdbcStore() {}

  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /**
   * The DDL that {@code migrate()} would apply to an empty schema, for teams that run Flyway or
   * Liquibase.
   */
  public static String exportDdl(Database database, String schema, String tablePrefix) {
    Names.requireSchema(schema);
    Names.requirePrefix(tablePrefix);
    if (database != Database.POSTGRESQL) {
      throw new ValidationException(database + " is not supported yet; supported: POSTGRESQL");
    }
    return SqlScript.exportPostgres(schema, tablePrefix);
  }

  /** Databases Boxline has a dialect for. */
  public enum Database {
    POSTGRESQL
  }

  /** Settings of a {@link JdbcStore}. */
  public static final class Builder {
    private final DataSource dataSource;
    private String schema = DEFAULT_SCHEMA;
    private String tablePrefix = "";
    private boolean vacuumWhenAutovacuumOff = true;

    private Builder(DataSource dataSource) {
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Schema holding Boxline's tables (default {@value JdbcStore#DEFAULT_SCHEMA}); created if
     * missing.
     */
    public Builder schema(String schema) {
      this.schema = Names.requireSchema(schema);
      return this;
    }

    /** Prefix for every table name (default none), e.g. {@code bx_}. */
    public Builder tablePrefix(String prefix) {
      this.tablePrefix = Names.requirePrefix(prefix);
      return this;
    }

    /**
     * Whether the retention loop (which runs on one instance) vacuums Boxline's tables after each
     * run when the server's {@code autovacuum} is off (default true). Without any vacuum the
     * outbox, the log and the coordination tables grow without bound; turn this off only if you
     * vacuum them yourself.
     */
    public Builder vacuumWhenAutovacuumOff(boolean vacuum) {
      this.vacuumWhenAutovacuumOff = vacuum;
      return this;
    }

    /** Connects once to detect the database and its version; refuses unsupported ones. */
    public Store build() {
      String product;
      int major;
      int minor;
      String version;
      try (Connection c = dataSource.getConnection()) {
        DatabaseMetaData md = c.getMetaData();
        product = md.getDatabaseProductName();
        version = md.getDatabaseProductVersion();
        major = md.getDatabaseMajorVersion();
        minor = md.getDatabaseMinorVersion();
      } catch (SQLException e) {
        throw new StoreException("cannot connect to detect the database: " + e.getMessage(), e);
      }
      if ("PostgreSQL".equalsIgnoreCase(product)) {
        if (major < 13) {
          throw new ValidationException(
              "PostgreSQL " + version + " is too old; Boxline needs PostgreSQL 13 or newer");
        }
        return new PostgresStore(
            dataSource,
            schema,
            tablePrefix,
            product + " " + major + "." + minor,
            vacuumWhenAutovacuumOff);
      }
      throw new ValidationException(
          "database '"
              + product
              + " "
              + version
              + "' is not supported; Boxline supports PostgreSQL 13+ (MySQL 8 / MariaDB 10.6 and H2"
              + " 2.2.224 are planned)");
    }
  }
}
