package io.boxline.testkit.postgres;

import io.boxline.testkit.suite.store.SequencerContract;
import io.boxline.testkit.suite.store.StoreTarget;

class PostgresSequencerContractTest extends SequencerContract {
  @Override
  protected StoreTarget target() {
    return new PostgresStoreTarget();
  }
}
