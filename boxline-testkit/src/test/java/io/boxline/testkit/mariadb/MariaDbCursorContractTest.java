package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.CursorContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbCursorContractTest extends CursorContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
