package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.SettlementContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemorySettlementContractTest extends SettlementContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
