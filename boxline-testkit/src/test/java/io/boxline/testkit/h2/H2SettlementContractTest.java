package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.SettlementContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2SettlementContractTest extends SettlementContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
