package io.boxline.testkit.postgres;

import io.boxline.Coordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.suite.CoordinationBehaviour;

class InMemoryCoordinationTest extends CoordinationBehaviour {
  @Override
  protected CoordinationStore newStore() {
    return Coordination.inMemory();
  }
}
