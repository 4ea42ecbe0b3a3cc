package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.etcd.EtcdCoordination;
import io.boxline.testkit.Await;
import io.boxline.testkit.EtcdServer;
import io.boxline.testkit.process.ChildJvm;
import io.boxline.testkit.process.DeletingProcess;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process deleting a subscription (forced, its own consumer holding leases, the group in etcd) is
 * SIGKILLed inside the delete: before the database delete, and after it. Contract: nothing is left
 * half-deleted — either the subscription is still whole and a second delete finishes, or it is gone
 * from the database with no orphan rows and no group policy left in etcd, and a subscription
 * created again under its name starts afresh (default policy, every event from the earliest).
 */
class SubscriptionDeleteCrashTest extends FaultTest {
  private static final String SUB = "doomed";
  private static final int EVENTS = 40;

  /**
   * The subscription's own policy, which must not outlive it. Its check-ins (every 500 ms, dead
   * after 4 missed ones) also bound how long the killed child's member stays live in etcd (a 2 s
   * lease, against 6 s under the default policy), which a subscription created again under the name
   * waits out before its consumer has every partition.
   */
  private static final GroupPolicy OVERRIDE =
      GroupPolicy.DEFAULT
          .withSlack(0.5)
          .withMinCheckInInterval(Duration.ofMillis(500))
          .withDeadlineMultiplier(4);

  private EtcdCoordination etcd;
  private String prefix;
  private Boxline boxline;
  private TopicName topic;
  private Set<UUID> published;

  SubscriptionDeleteCrashTest() {
    super("deletecrash");
  }

  @BeforeEach
  void setUp() {
    EtcdServer server = EtcdServer.get();
    prefix = server.newKeyPrefix(fx.schema());
    etcd = EtcdCoordination.builder().endpoints(server.endpoints()).keyPrefix(prefix).build();
    boxline = fx.db().boxline(b -> b.coordination(etcd).instanceId("parent"));
    topic = TopicName.of("fault/delete", "orders");
    boxline.admin().createNamespace(NamespacePath.of("fault/delete"));
    boxline.admin().createTopic(topic, 4);
    published = Publishing.wave(boxline, List.of(topic), EVENTS, 20, "del");
    Await.until(Duration.ofSeconds(30), "all sequenced", fx::logCount, n -> n == EVENTS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUB, topic));
    boxline.admin().setGroupPolicy(SUB, OVERRIDE);
  }

  @AfterEach
  void tearDown() {
    boxline.close();
    etcd.close();
  }

  /** Runs the deleting child until it stops at the pause point, then SIGKILLs it there. */
  private void killInsideDelete(int pauseAt) {
    ChildJvm child =
        fx.startChild(
            "deleter" + pauseAt,
            DeletingProcess.class,
            "--subscription=" + SUB,
            "--etcd=" + String.join(",", EtcdServer.get().endpoints()),
            "--prefix=" + prefix,
            "--pauseAt=" + pauseAt);
    child.awaitOutput(Duration.ofSeconds(60), "PAUSED forceRelease " + pauseAt);
    assertThat(child.output()).contains("HOLDING").doesNotContain("DELETED");
    child.kill9();
    assertThat(child.isAlive()).isFalse();
    fx.awaitSessionsGone("deleter" + pauseAt);
  }

  private long orphans() {
    long n = 0;
    for (String table : List.of("cursor", "parked", "inbox", "subscription_topic")) {
      n +=
          fx.count(
              "SELECT count(*) FROM "
                  + fx.table(table)
                  + " WHERE subscription_id NOT IN (SELECT id FROM "
                  + fx.table("subscription")
                  + ")");
    }
    return n;
  }

  /** The name, created again, starts afresh: default policy, every event from the earliest. */
  private void theNameStartsAfresh() {
    boxline.admin().createSubscription(SubscriptionSpec.of(SUB, topic));
    assertThat(boxline.admin().groupPolicy(SUB)).isEqualTo(GroupPolicy.DEFAULT);
    Set<UUID> seen = ConcurrentHashMap.newKeySet();
    Consumer c = boxline.consumer(SUB).handler(e -> seen.add(e.id())).start();
    try {
      Await.until(Duration.ofSeconds(60), "every event handled again", () -> seen.size() == EVENTS);
      assertThat(seen).isEqualTo(published);
    } finally {
      c.close();
    }
  }

  @Test
  @Timeout(150)
  void killedBeforeTheDatabaseDeleteLeavesTheSubscriptionWholeForASecondDelete() {
    killInsideDelete(1);
    assertThat(boxline.admin().subscription(SUB)).as("still there").isPresent();
    assertThat(fx.cursors(SUB)).hasSize(4);
    assertThat(boxline.admin().deleteSubscription(SUB, true)).isTrue();
    assertThat(boxline.admin().subscription(SUB)).isEmpty();
    assertThat(orphans()).isZero();
    assertThat(etcd.view(SUB).leases()).isEmpty();
    assertThat(boxline.admin().deleteSubscription(SUB, true)).as("idempotent").isFalse();
    theNameStartsAfresh();
  }

  @Test
  @Timeout(150)
  void killedAfterTheDatabaseDeleteLeavesNoOrphansAndNoStalePolicy() {
    killInsideDelete(2);
    assertThat(boxline.admin().subscription(SUB)).as("deleted").isEmpty();
    assertThat(orphans()).isZero();
    assertThat(etcd.policy(SUB)).as("no stale override in etcd").isEqualTo(GroupPolicy.DEFAULT);
    assertThat(boxline.admin().deleteSubscription(SUB, true)).as("idempotent").isFalse();
    theNameStartsAfresh();
  }
}
