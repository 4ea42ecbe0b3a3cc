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
 * A single-process application (sequencer and consumer in one JVM) is killed with SIGKILL while
 * events keep arriving, and a new process takes its place. Contract: nothing is lost — every
 * published event reaches the log exactly once, gap-free, and is handled at least once — and the
 * duplicates are only the consumer's in-flight batches.
 *
 * <p>Topology: the test JVM publishes continuously with {@code .sequencer(false)}; the child
 * ({@link ConsumerProcess} with {@code --sequencer=true}, 2 s lease) sequences and consumes. The
 * second process has another instance id, so it has to wait for the dead one's lease to expire.
 */
class AppCrashRestartTest extends FaultTest {
  private static final int PARTITIONS = 6;
  private static final int BATCH = 40;
  private static final int CONCURRENCY = 3;
  private static final int KILL_AFTER = 1_000;
  private static final String SUBSCRIPTION = "app-sub";

  AppCrashRestartTest() {
    super("appcrash");
  }

  private ChildJvm startApp(String name, int run) {
    return fx.startChild(
        name,
        ConsumerProcess.class,
        "--instance=" + name,
        "--subscription=" + SUBSCRIPTION,
        "--run=" + run,
        "--batch=" + BATCH,
        "--concurrency=" + CONCURRENCY,
        "--sequencer=true",
        "--leaseMillis=2000");
  }

  @Test
  @Timeout(90)
  void killedAppLosesNothingAfterRestart() {
    TopicName topic = TopicName.of("fault/app", "events");
    Boxline publisher = fx.db().boxline(b -> b.instanceId("publisher").sequencer(false));
    publisher.admin().createNamespace(NamespacePath.of("fault/app"));
    publisher.admin().createTopic(topic, PARTITIONS);
    publisher.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    publisher.admin().setDefaultGroupPolicy(FaultFixture.QUICK_TAKEOVER);
    fx.createHandledTable();

    ChildJvm run1 = startApp("app-1", 1);
    run1.awaitOutput(Duration.ofSeconds(30), "READY");
    Set<UUID> published;
    Map<FaultFixture.Part, Long> cursors;
    long handledByRun1;
    ChildJvm run2;
    try (Publishing.Background load =
        new Publishing.Background(publisher, List.of(topic), 10, 8).start()) {
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(30),
          "app-1 handled " + KILL_AFTER + " events",
          run1,
          () -> {
            load.check();
            return fx.count("SELECT count(*) FROM " + fx.table("handled")) >= KILL_AFTER;
          });
      assertThat(fx.leaseOwner()).as("sequencer lease holder before the crash").isEqualTo("app-1");
      run1.kill9();
      assertThat(run1.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
      fx.awaitSessionsGone("app-1");
      handledByRun1 = fx.distinctHandled(1);
      cursors = fx.cursors(SUBSCRIPTION);

      // While no process runs, events pile up in the outbox.
      Await.until(
          Duration.ofSeconds(10),
          "events waiting in the outbox while the app is down",
          () -> {
            load.check();
            return fx.outboxCount() >= 100;
          });

      run2 = startApp("app-2", 2);
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(30),
          "app-2 took the lease and handled 500 events",
          run2,
          () -> {
            load.check();
            return "app-2".equals(fx.leaseOwner()) && fx.distinctHandled(2) >= 500;
          });
      published = load.stop();
    }
    assertThat(handledByRun1).isGreaterThanOrEqualTo(KILL_AFTER).isLessThan(published.size());

    // Outbox drained and every cursor at its partition head; losses show up in the checks below.
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(45),
        "app-2 sequenced everything and committed every cursor to the partition head",
        run2,
        () -> fx.outboxCount() == 0 && fx.caughtUp(SUBSCRIPTION));
    assertThat(run2.stop(Duration.ofSeconds(20))).as("app-2 exit code on graceful stop").isZero();

    fx.verifyLog(published);
    int duplicates = fx.verifyDeliveries(published, cursors, BATCH, CONCURRENCY);
    System.out.printf(
        "published %d; app-1 handled %d before SIGKILL; duplicates %d (bound %d)%n",
        published.size(), handledByRun1, duplicates, BATCH * CONCURRENCY);
  }
}
