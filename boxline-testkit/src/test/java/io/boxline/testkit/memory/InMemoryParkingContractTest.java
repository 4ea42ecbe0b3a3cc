package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.ParkingContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryParkingContractTest extends ParkingContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
