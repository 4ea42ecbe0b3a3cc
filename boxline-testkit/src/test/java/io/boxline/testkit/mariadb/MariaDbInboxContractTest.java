package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.InboxContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbInboxContractTest extends InboxContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
