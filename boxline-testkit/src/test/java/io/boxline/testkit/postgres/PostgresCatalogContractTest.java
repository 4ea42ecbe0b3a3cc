package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.CatalogContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresCatalogContractTest extends CatalogContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
