package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.EventTypes;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.Store;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * One test's database: a pool and a schema of its own (a database on MariaDB), dropped on {@link
 * #close()}. Boxline instances made here are closed before the schema is dropped. {@link
 * #create(String)} uses PostgreSQL, {@link #createMariaDb(String)} MariaDB, {@link
 * #createH2(String)} and {@link #createH2File(String)} an H2 database of the test's own; the few
 * SQL snippets the behaviour suites need beyond plain {@code SELECT count(*)} come from here, so
 * the suites run on either.
 */
public final class TestDatabase implements AutoCloseable {
  /** The databases the testkit can run the suites against. */
  public enum Dialect {
    POSTGRESQL,
    MARIADB,
    /** An embedded H2 database of the test's own, in memory. */
    H2,
    /** An embedded H2 database of the test's own, in a temporary directory. */
    H2_FILE
  }

  private final TestServer server;
  private final Dialect dialect;
  private final String schema;
  private final HikariDataSource pool;
  private final List<AutoCloseable> owned = new ArrayList<>();

  private TestDatabase(TestServer server, Dialect dialect, String schema, int poolSize) {
    this.server = server;
    this.dialect = dialect;
    this.schema = schema;
    this.pool = server.pool(poolSize, "test-" + schema);
  }

  /** A PostgreSQL schema (see {@link PostgresServer} for how the server is found). */
  public static TestDatabase create(String hint) {
    return create(hint, 16);
  }

  public static TestDatabase create(String hint, int poolSize) {
    return create(Dialect.POSTGRESQL, hint, poolSize);
  }

  /** A MariaDB database (see {@link MariaDbServer} for how the server is found or started). */
  public static TestDatabase createMariaDb(String hint) {
    return createMariaDb(hint, 16);
  }

  public static TestDatabase createMariaDb(String hint, int poolSize) {
    return create(Dialect.MARIADB, hint, poolSize);
  }

  /** An H2 database of its own, in memory (see {@link H2Server}). */
  public static TestDatabase createH2(String hint) {
    return createH2(hint, 16);
  }

  public static TestDatabase createH2(String hint, int poolSize) {
    return create(Dialect.H2, hint, poolSize);
  }

  /** An H2 database of its own in a temporary directory, deleted on {@link #close()}. */
  public static TestDatabase createH2File(String hint) {
    return create(Dialect.H2_FILE, hint, 16);
  }

  public static TestDatabase create(Dialect dialect, String hint, int poolSize) {
    TestServer server =
        switch (dialect) {
          case MARIADB -> MariaDbServer.get();
          case H2 -> H2Server.memory();
          case H2_FILE -> H2Server.file();
          default -> PostgresServer.get();
        };
    return new TestDatabase(server, dialect, server.createSchemaName(hint), poolSize);
  }

  public TestServer server() {
    return server;
  }

  public Dialect dialect() {
    return dialect;
  }

  public String schema() {
    return schema;
  }

  public HikariDataSource dataSource() {
    return pool;
  }

  /** {@code schema.table}, for white-box queries. */
  public String table(String name) {
    return schema + "." + name;
  }

  /** The database server's clock now. */
  public Instant databaseNow() {
    return server.databaseNow(pool);
  }

  /**
   * A condition that a Boxline time column (e.g. {@code created_at}) is over {@code seconds} old.
   */
  public String olderThanSeconds(String column, int seconds) {
    return server.olderThanSeconds(column, seconds);
  }

  /** The column type for event ids in tables a test creates (bind them with setObject(UUID)). */
  public String uuidColumnType() {
    return server.uuidColumnType();
  }

  /**
   * A store on this database's schema, for tests that drive the SPI directly; migrated, and closed
   * with the database.
   */
  public Store store() {
    return store(b -> b);
  }

  /** Like {@link #store()}, with store settings too. */
  public Store store(UnaryOperator<JdbcStore.Builder> customize) {
    Store store = customize.apply(JdbcStore.builder(pool).schema(schema)).build();
    store.migrate();
    owned.add(store);
    return store;
  }

  /** A started Boxline on this database with test-friendly defaults, closed with the database. */
  public Boxline boxline(EventTypes types) {
    return boxline(b -> b.eventTypes(types));
  }

  public Boxline boxline(UnaryOperator<Boxline.Builder> customize) {
    return boxline(store -> store, customize);
  }

  /** Like {@link #boxline(UnaryOperator)}, with store settings too. */
  public Boxline boxline(
      UnaryOperator<JdbcStore.Builder> store, UnaryOperator<Boxline.Builder> customize) {
    Boxline.Builder b =
        Boxline.builder()
            .store(store.apply(JdbcStore.builder(pool).schema(schema)).build())
            .sequencerLease(Duration.ofSeconds(3));
    Boxline boxline = customize.apply(b).build().start();
    owned.add(boxline);
    return boxline;
  }

  @Override
  public void close() {
    for (int i = owned.size() - 1; i >= 0; i--) {
      try {
        owned.get(i).close();
      } catch (Exception e) {
        // keep closing the rest; the schema is dropped regardless
      }
    }
    pool.close();
    server.dropSchema(schema);
  }
}
