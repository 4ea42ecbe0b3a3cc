package io.boxline.testkit.etcd;

import io.boxline.etcd.EtcdCoordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.EtcdServer;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;

/** Consumer groups coordinated in etcd, log and cursors in PostgreSQL. */
class EtcdConsumerGroupTest extends ConsumerGroupBehaviour {
  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    EtcdServer etcd = EtcdServer.get();
    return EtcdCoordination.builder()
        .endpoints(etcd.endpoints())
        .keyPrefix(etcd.newKeyPrefix(db.schema()))
        .build();
  }
}
