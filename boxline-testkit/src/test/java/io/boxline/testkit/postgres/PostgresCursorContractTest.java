package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.CursorContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresCursorContractTest extends CursorContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
