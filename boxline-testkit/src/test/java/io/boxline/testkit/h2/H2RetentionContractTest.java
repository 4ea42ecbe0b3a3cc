package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.RetentionContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2RetentionContractTest extends RetentionContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
