package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.MonitoringContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2MonitoringContractTest extends MonitoringContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
