package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.InboxContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryInboxContractTest extends InboxContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
