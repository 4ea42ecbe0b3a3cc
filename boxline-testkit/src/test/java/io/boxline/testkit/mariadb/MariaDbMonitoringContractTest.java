package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.MonitoringContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbMonitoringContractTest extends MonitoringContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
