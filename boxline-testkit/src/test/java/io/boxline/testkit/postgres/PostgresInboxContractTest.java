package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.InboxContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresInboxContractTest extends InboxContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
