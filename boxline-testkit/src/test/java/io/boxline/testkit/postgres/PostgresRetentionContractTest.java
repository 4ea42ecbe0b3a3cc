package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.RetentionContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresRetentionContractTest extends RetentionContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
