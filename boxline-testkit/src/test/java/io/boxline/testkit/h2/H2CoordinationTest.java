package io.boxline.testkit.h2;

import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.CoordinationBehaviour;
import org.junit.jupiter.api.AfterEach;

/** The database coordination store on H2 against the coordination contract. */
class H2CoordinationTest extends CoordinationBehaviour {
  private TestDatabase db;

  @Override
  protected CoordinationStore newStore() {
    db = TestDatabase.createH2("coord");
    // Boxline's migration creates the coordination tables.
    db.boxline(b -> b.sequencer(false));
    return JdbcStore.builder(db.dataSource()).schema(db.schema()).build().coordination();
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }
}
