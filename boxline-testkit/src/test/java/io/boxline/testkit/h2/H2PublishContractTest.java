package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.PublishContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2PublishContractTest extends PublishContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
