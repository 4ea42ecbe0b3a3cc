package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Coordination;
import io.boxline.spi.CoordinationStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Kafka listeners of several instances as one cluster, on the in-memory coordination store and
 * one hand-moved clock: node ids, coordinators, and what happens when an instance stops checking in
 * or leaves. Each instance checks in by hand here (no loop is started).
 */
class KafkaClusterTest {
  private static final Duration TTL = Duration.ofSeconds(10);

  /** The store's clock and the instances' elapsed time, moved together. */
  private final AtomicLong millis = new AtomicLong(1_000_000);

  private final Clock clock =
      new Clock() {
        @Override
        public ZoneOffset getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return Instant.ofEpochMilli(millis.get());
        }
      };

  private CoordinationStore store;
  private KafkaCluster a;
  private KafkaCluster b;

  @BeforeEach
  void setUp() {
    store = Coordination.inMemory(clock);
    a = instance(9001);
    b = instance(9002);
    a.checkIn();
    b.checkIn();
    a.checkIn();
  }

  @AfterEach
  void tearDown() {
    a.close();
    b.close();
    store.close();
  }

  private KafkaCluster instance(int port) {
    return new KafkaCluster(store, "127.0.0.1", port, TTL, () -> millis.get() * 1_000_000);
  }

  private void pass(Duration d) {
    millis.addAndGet(d.toMillis());
  }

  @Test
  void eachInstanceIsABrokerWithANodeIdOfItsOwn() {
    assertThat(a.nodeId()).isNotEqualTo(b.nodeId());
    assertThat(a.nodes()).containsExactlyInAnyOrder(a.self(), b.self());
    assertThat(a.self().port()).isEqualTo(9001);
    b.checkIn();
    assertThat(b.nodes()).isEqualTo(a.nodes());
  }

  @Test
  void theFirstInstanceAskedCoordinatesAGroupAndTheOthersNameIt() {
    assertThat(b.coordinator("shop/invoicing")).contains(b.self());
    assertThat(b.coordinates("shop/invoicing")).isTrue();
    a.checkIn();
    assertThat(a.coordinator("shop/invoicing")).contains(b.self());
    assertThat(a.coordinates("shop/invoicing")).as("held by the other").isFalse();
    assertThat(a.holds("shop/invoicing")).isFalse();
    assertThat(a.lists("shop/invoicing")).isFalse();
    assertThat(b.lists("shop/invoicing")).isTrue();
  }

  @Test
  void anInstanceWhoseCheckInIsHalfATtlOldCoordinatesNothing() {
    assertThat(a.coordinates("g")).isTrue();
    pass(TTL.dividedBy(2).plusMillis(1));
    assertThat(a.holds("g")).isFalse();
    assertThat(a.coordinates("g")).isFalse();
    a.checkIn();
    assertThat(a.holds("g")).as("checked in again").isTrue();
  }

  @Test
  void aStoppedInstancesGroupsAndNodeIdGoToAnotherAfterTheTtl() {
    assertThat(b.coordinator("g")).contains(b.self());
    int bNode = b.nodeId();
    pass(TTL.dividedBy(3));
    a.checkIn();
    assertThat(a.coordinator("g")).as("b has not been gone long").contains(b.self());
    pass(TTL); // b checks in no more
    a.checkIn();
    assertThat(a.nodes()).containsExactly(a.self());
    assertThat(a.coordinator("g")).contains(a.self());
    assertThat(a.coordinates("g")).isTrue();
    KafkaCluster c = instance(9003);
    try {
      c.checkIn();
      assertThat(c.nodeId()).as("b's node id is free again").isEqualTo(bNode);
      assertThat(c.coordinator("g")).contains(a.self());
    } finally {
      c.close();
    }
  }

  @Test
  void anInstanceThatLeavesHandsItsGroupsOverAtOnce() {
    assertThat(b.coordinator("g")).contains(b.self());
    b.close();
    b.close(); // twice is fine
    a.checkIn();
    assertThat(a.nodes()).containsExactly(a.self());
    assertThat(a.coordinator("g")).contains(a.self());
    assertThat(b.coordinates("g")).as("closed").isFalse();
  }

  @Test
  void groupsOfOneBucketShareTheCoordinator() {
    String g = "g";
    String same = null;
    for (int i = 0; same == null; i++) {
      String candidate = "other-" + i;
      if (KafkaCluster.bucket(candidate) == KafkaCluster.bucket(g)) {
        same = candidate;
      }
    }
    assertThat(b.coordinator(g)).contains(b.self());
    a.checkIn();
    assertThat(a.coordinator(same)).contains(b.self());
  }
}
