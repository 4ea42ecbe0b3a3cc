package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.StoreTarget;
import io.boxline.testkit.suite.store.WakeupContract;

class H2WakeupContractTest extends WakeupContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
