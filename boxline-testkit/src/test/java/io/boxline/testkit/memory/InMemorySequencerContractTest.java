package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.SequencerContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemorySequencerContractTest extends SequencerContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
