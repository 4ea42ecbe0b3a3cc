package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.CursorContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryCursorContractTest extends CursorContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
