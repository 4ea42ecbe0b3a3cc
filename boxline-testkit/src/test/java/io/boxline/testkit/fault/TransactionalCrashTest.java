package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.process.ChildJvm;
import io.boxline.testkit.process.ConsumerProcess;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Contract point 6: a transactional handler's effect is applied exactly once, even when the
 * consumer process is killed with SIGKILL mid-stream and restarted. The handler inserts one row per
 * delivery into {@code handled} inside Boxline's transaction; at the end every published event has
 * exactly one row.
 */
class TransactionalCrashTest extends FaultTest {
  private static final int EVENTS = 6_000;
  private static final int PARTITIONS = 6;
  private static final String SUBSCRIPTION = "tx-sub";

  TransactionalCrashTest() {
    super("txcrash");
  }

  private ChildJvm startConsumer(String name, int run) {
    return fx.startChild(
        name,
        ConsumerProcess.class,
        "--instance=" + name,
        "--subscription=" + SUBSCRIPTION,
        "--run=" + run,
        "--batch=40",
        "--concurrency=3",
        "--sequencer=false",
        "--transactional=true",
        "--spinMicros=200");
  }

  @Test
  @Timeout(120)
  void effectsAreAppliedExactlyOnceAcrossAKill() {
    TopicName topic = TopicName.of("fault/tx", "payments");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/tx"));
    boxline.admin().createTopic(topic, PARTITIONS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(FaultFixture.QUICK_TAKEOVER);
    fx.createHandledTable();
    Set<UUID> published = Publishing.wave(boxline, List.of(topic), EVENTS, 500, "tx");
    Await.until(Duration.ofSeconds(30), "all events sequenced", fx::logCount, n -> n == EVENTS);

    ChildJvm run1 = startConsumer("txrun1", 1);
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(40),
        "run 1 committed 1,000 effects",
        run1,
        () -> fx.count("SELECT count(*) FROM " + fx.table("handled")) >= 1_000);
    run1.kill9();
    assertThat(run1.exitCode()).isEqualTo(128 + 9);
    fx.awaitSessionsGone("txrun1");
    long afterKill = fx.count("SELECT count(*) FROM " + fx.table("handled"));
    assertThat(afterKill).as("killed before the end, or this proves nothing").isLessThan(EVENTS);

    ChildJvm run2 = startConsumer("txrun2", 2);
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(60), "run 2 caught up", run2, () -> fx.caughtUp(SUBSCRIPTION));
    assertThat(run2.stop(Duration.ofSeconds(20))).isZero();

    assertThat(fx.count("SELECT count(*) FROM " + fx.table("handled")))
        .as("one effect per event: nothing lost, nothing twice")
        .isEqualTo(EVENTS);
    assertThat(fx.count("SELECT count(DISTINCT event_id) FROM " + fx.table("handled")))
        .isEqualTo(EVENTS);
    assertThat(
            fx.count(
                "SELECT count(*) FROM (SELECT event_id FROM "
                    + fx.table("handled")
                    + " GROUP BY event_id HAVING count(*) > 1) d"))
        .as("events whose effect was applied twice")
        .isZero();
    assertThat(published).hasSize(EVENTS);
  }
}
