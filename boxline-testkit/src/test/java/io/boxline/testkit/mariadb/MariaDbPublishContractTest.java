package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.PublishContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbPublishContractTest extends PublishContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
