package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.ParkingContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbParkingContractTest extends ParkingContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
