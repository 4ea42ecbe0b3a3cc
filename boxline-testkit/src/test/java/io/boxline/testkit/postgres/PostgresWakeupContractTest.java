package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.StoreTarget;
import io.boxline.testkit.suite.store.WakeupContract;

class PostgresWakeupContractTest extends WakeupContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
