package io.boxline.testkit.postgres;

import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.GroupScaleBehaviour;
import org.junit.jupiter.api.AfterEach;

/**
 * 1,024 members through the database coordination store, on PostgreSQL. Not named {@code *Test}: it
 * stays out of {@code ./mvnw verify} to keep CI within its time; run it with {@code
 * -Dtest=PostgresGroupScaleCheck}.
 */
class PostgresGroupScaleCheck extends GroupScaleBehaviour {
  private TestDatabase db;

  @Override
  protected CoordinationStore newStore() {
    db = TestDatabase.create("scale", threads() + 2);
    // Boxline's migration creates the coordination tables.
    db.boxline(b -> b.sequencer(false));
    return JdbcStore.builder(db.dataSource()).schema(db.schema()).build().coordination();
  }

  @Override
  protected String storeName() {
    return "database (PostgreSQL)";
  }

  @AfterEach
  void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }
}
