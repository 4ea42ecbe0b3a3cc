package io.boxline.testkit;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.EventTypes;
import io.boxline.jdbc.JdbcStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * One test's database: a pool and a schema of its own, dropped on {@link #close()}. Boxline
 * instances made here are closed before the schema is dropped.
 */
public final class TestDatabase implements AutoCloseable {
  private final PostgresServer server;
  private final String schema;
  private final HikariDataSource pool;
  private final List<AutoCloseable> owned = new ArrayList<>();

  private TestDatabase(PostgresServer server, String schema, int poolSize) {
    this.server = server;
    this.schema = schema;
    this.pool = server.pool(poolSize, "test-" + schema);
  }

  public static TestDatabase create(String hint) {
    return create(hint, 16);
  }

  public static TestDatabase create(String hint, int poolSize) {
    PostgresServer server = PostgresServer.get();
    return new TestDatabase(server, server.createSchemaName(hint), poolSize);
  }

  public PostgresServer server() {
    return server;
  }

  public String schema() {
    return schema;
  }

  public HikariDataSource dataSource() {
    return pool;
  }

  /** A started Boxline on this database with test-friendly defaults, closed with the database. */
  public Boxline boxline(EventTypes types) {
    return boxline(b -> b.eventTypes(types));
  }

  public Boxline boxline(UnaryOperator<Boxline.Builder> customize) {
    Boxline.Builder b =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
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
