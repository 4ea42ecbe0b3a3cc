package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.MonitoringContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryMonitoringContractTest extends MonitoringContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
