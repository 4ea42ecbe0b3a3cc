package io.boxline.testkit.etcd;

import io.boxline.etcd.EtcdCoordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.EtcdServer;
import io.boxline.testkit.suite.CoordinationBehaviour;

/** The etcd coordination store against the coordination contract, on a real etcd. */
class EtcdCoordinationTest extends CoordinationBehaviour {
  @Override
  protected CoordinationStore newStore() {
    EtcdServer etcd = EtcdServer.get();
    return EtcdCoordination.builder()
        .endpoints(etcd.endpoints())
        .keyPrefix(etcd.newKeyPrefix("coord"))
        .build();
  }
}
