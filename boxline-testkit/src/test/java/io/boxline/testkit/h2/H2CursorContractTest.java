package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.CursorContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2CursorContractTest extends CursorContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
