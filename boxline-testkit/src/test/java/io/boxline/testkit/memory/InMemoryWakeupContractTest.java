package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.StoreTarget;
import io.boxline.testkit.suite.store.WakeupContract;

class InMemoryWakeupContractTest extends WakeupContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
