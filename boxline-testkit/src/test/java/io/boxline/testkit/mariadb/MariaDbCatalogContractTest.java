package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.CatalogContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbCatalogContractTest extends CatalogContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
