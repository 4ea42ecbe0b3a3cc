package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.RetentionContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryRetentionContractTest extends RetentionContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
