package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.PublishContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresPublishContractTest extends PublishContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
