package io.boxline.testkit.mariadb;

import io.boxline.testkit.suite.store.SequencerContract;
import io.boxline.testkit.suite.store.StoreTarget;

class MariaDbSequencerContractTest extends SequencerContract {
  @Override
  protected StoreTarget target() {
    return new MariaDbStoreTarget();
  }
}
