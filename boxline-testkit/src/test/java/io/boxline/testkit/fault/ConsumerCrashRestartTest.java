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
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer process is killed with SIGKILL in the middle of a backlog and restarted. Contract: no
 * event is lost, and the only events delivered twice are the batches that were in flight at the
 * kill (at most concurrency × batch size).
 *
 * <p>Topology: the test JVM publishes and runs the sequencer; the whole backlog is sequenced before
 * the first consumer process starts, so only the consumer is under test. The consumer processes run
 * with {@code .sequencer(false)} and record each delivery with an auto-commit insert, outside
 * Boxline's cursor commit.
 */
class ConsumerCrashRestartTest extends FaultTest {
  private static final int EVENTS = 10_000;
  private static final int PARTITIONS = 8;
  private static final int BATCH = 50;
  private static final int CONCURRENCY = 4;
  private static final int KILL_AFTER = 1_500;
  private static final String SUBSCRIPTION = "crash-sub";

  ConsumerCrashRestartTest() {
    super("consumercrash");
  }

  private ChildJvm startConsumer(String name, int run) {
    return fx.startChild(
        name,
        ConsumerProcess.class,
        "--instance=" + name,
        "--subscription=" + SUBSCRIPTION,
        "--run=" + run,
        "--batch=" + BATCH,
        "--concurrency=" + CONCURRENCY,
        "--sequencer=false");
  }

  @Test
  @Timeout(90)
  void killedConsumerLosesNothingAndRedeliversOnlyInFlightBatches() {
    TopicName topic = TopicName.of("fault/consumer", "orders");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/consumer"));
    boxline.admin().createTopic(topic, PARTITIONS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(FaultFixture.QUICK_TAKEOVER);
    fx.createHandledTable();

    Set<UUID> published = Publishing.wave(boxline, List.of(topic), EVENTS, 500, "crash");
    assertThat(published).hasSize(EVENTS);
    Await.until(Duration.ofSeconds(30), "all events sequenced", fx::logCount, n -> n == EVENTS);

    // Run 1: killed with SIGKILL mid-backlog.
    ChildJvm run1 = startConsumer("run1", 1);
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "run 1 handled " + KILL_AFTER + " events",
        run1,
        () -> fx.count("SELECT count(*) FROM " + fx.table("handled")) >= KILL_AFTER);
    run1.kill9();
    assertThat(run1.isAlive()).isFalse();
    assertThat(run1.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
    fx.awaitSessionsGone("run1");

    long handledByRun1 = fx.distinctHandled(1);
    Map<FaultFixture.Part, Long> cursors = fx.cursors(SUBSCRIPTION);
    Map<FaultFixture.Part, Long> last = fx.lastSequences();
    assertThat(cursors).hasSize(PARTITIONS);
    assertThat(handledByRun1)
        .as("run 1 must be killed before finishing, or this test proves nothing")
        .isGreaterThanOrEqualTo(KILL_AFTER)
        .isLessThan(EVENTS);
    long committed = cursors.values().stream().mapToLong(Long::longValue).sum();
    assertThat(committed)
        .as("events behind run 1's committed cursors")
        .isLessThanOrEqualTo(handledByRun1)
        .isLessThan(EVENTS);

    // Run 2: a fresh process on the same subscription finishes the backlog.
    ChildJvm run2 = startConsumer("run2", 2);
    // Caught up = every cursor at its partition head; a lost event shows up in the checks below.
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(45),
        "run 2 committed every cursor to the partition head",
        run2,
        () -> fx.caughtUp(SUBSCRIPTION));
    assertThat(run2.stop(Duration.ofSeconds(20))).as("run 2 exit code on graceful stop").isZero();
    assertThat(fx.cursors(SUBSCRIPTION)).isEqualTo(last);

    int duplicates = fx.verifyDeliveries(published, cursors, BATCH, CONCURRENCY);
    System.out.printf(
        "run 1 handled %d distinct events, committed %d; duplicates %d (bound %d)%n",
        handledByRun1, committed, duplicates, BATCH * CONCURRENCY);
  }
}
