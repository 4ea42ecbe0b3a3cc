package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.StoreTarget;
import io.boxline.testkit.suite.store.WakeupContract;

class MariaDbWakeupContractTest extends WakeupContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
