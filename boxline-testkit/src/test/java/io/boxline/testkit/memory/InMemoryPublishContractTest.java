package io.boxline.testkit.memory;

import io.boxline.testkit.suite.store.PublishContract;
import io.boxline.testkit.suite.store.StoreTarget;

class InMemoryPublishContractTest extends PublishContract {
  @Override
  protected StoreTarget target() {
    return new InMemoryStoreTarget();
  }
}
