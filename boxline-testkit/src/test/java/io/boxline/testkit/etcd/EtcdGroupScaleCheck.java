package io.boxline.testkit.etcd;

import io.boxline.etcd.EtcdCoordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.EtcdServer;
import io.boxline.testkit.suite.GroupScaleBehaviour;

/**
 * 1,024 members through the etcd coordination store, on a real etcd. Not named {@code *Test}: at
 * about 90 s it stays out of {@code ./mvnw verify}; run it with {@code -Dtest=EtcdGroupScaleCheck}.
 */
class EtcdGroupScaleCheck extends GroupScaleBehaviour {
  @Override
  protected CoordinationStore newStore() {
    EtcdServer etcd = EtcdServer.get();
    return EtcdCoordination.builder()
        .endpoints(etcd.endpoints())
        .keyPrefix(etcd.newKeyPrefix("scale"))
        .build();
  }

  @Override
  protected String storeName() {
    return "etcd";
  }
}
