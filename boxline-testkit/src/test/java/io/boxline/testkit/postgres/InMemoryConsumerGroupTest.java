package io.boxline.testkit.postgres;

import io.boxline.Coordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;

/** Consumer groups coordinated in memory, log and cursors in PostgreSQL. */
class InMemoryConsumerGroupTest extends ConsumerGroupBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    return Coordination.inMemory();
  }
}
