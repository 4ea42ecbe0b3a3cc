package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.ParkingContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresParkingContractTest extends ParkingContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
