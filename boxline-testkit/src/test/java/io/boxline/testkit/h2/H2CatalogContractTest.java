package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.CatalogContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2CatalogContractTest extends CatalogContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
