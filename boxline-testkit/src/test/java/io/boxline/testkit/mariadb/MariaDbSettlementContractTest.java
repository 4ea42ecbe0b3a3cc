package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.SettlementContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbSettlementContractTest extends SettlementContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
