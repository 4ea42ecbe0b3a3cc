package io.boxline.testkit.memory;

import io.boxline.Coordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.suite.GroupScaleBehaviour;

/** 1,024 members through the in-memory coordination store. */
class InMemoryGroupScaleTest extends GroupScaleBehaviour {
  @Override
  protected CoordinationStore newStore() {
    return Coordination.inMemory();
  }

  @Override
  protected String storeName() {
    return "memory";
  }
}
