package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.RetentionContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbRetentionContractTest extends RetentionContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
