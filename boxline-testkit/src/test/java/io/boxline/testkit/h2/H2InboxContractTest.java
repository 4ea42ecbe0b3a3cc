package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.InboxContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2InboxContractTest extends InboxContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
