package io.boxline.testkit.h2;

import io.boxline.testkit.suite.store.SequencerContract;
import io.boxline.testkit.suite.store.StoreTarget;

class H2SequencerContractTest extends SequencerContract {
  @Override
  protected StoreTarget target() {
    return new H2StoreTarget();
  }
}
