package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.MonitoringContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresMonitoringContractTest extends MonitoringContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
