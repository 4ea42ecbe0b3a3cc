package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.CatalogContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryCatalogContractTest extends CatalogContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
