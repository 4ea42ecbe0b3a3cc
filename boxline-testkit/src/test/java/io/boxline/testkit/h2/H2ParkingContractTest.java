package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.ParkingContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2ParkingContractTest extends ParkingContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
