package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.SettlementContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresSettlementContractTest extends SettlementContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
