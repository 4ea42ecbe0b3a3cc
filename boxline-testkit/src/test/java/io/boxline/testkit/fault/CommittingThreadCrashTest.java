package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.process.ChildJvm;
import io.boxline.testkit.process.ConsumerProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An application that publishes to an in-transaction topic through {@code inTransaction} and runs
 * its handlers on the committing threads is killed with SIGKILL while both go on, and a new process
 * takes over the subscription. Contract: every committed transaction's events are in the log with
 * its business rows and nothing else is (atomic publish), the log is gap-free, every event is
 * handled at least once, and the duplicates are only the batches in flight at the kill — a batch a
 * committing thread had claimed counts as one of them.
 *
 * <p>Topology: the test JVM only sets up and checks; the child ({@link ConsumerProcess} with {@code
 * --publishThreads=4 --committingThread=true}) publishes and consumes. The second child only
 * consumes.
 */
class CommittingThreadCrashTest extends FaultTest {
  private static final int PARTITIONS = 6;
  private static final int BATCH = 20;
  private static final int CONCURRENCY = 3;
  private static final int KILL_AFTER = 1_000;
  private static final String SUBSCRIPTION = "inline-sub";
  private static final String TOPIC = "fault/inline/events";

  CommittingThreadCrashTest() {
    super("inlinecrash");
  }

  private ChildJvm startApp(String name, int run, boolean publish) {
    return fx.startChild(
        name,
        ConsumerProcess.class,
        "--instance=" + name,
        "--subscription=" + SUBSCRIPTION,
        "--run=" + run,
        "--batch=" + BATCH,
        "--concurrency=" + CONCURRENCY,
        "--committingThread=true",
        "--publishTopic=" + TOPIC,
        "--publishThreads=" + (publish ? 4 : 0));
  }

  @Test
  @Timeout(90)
  void killedAppWithHandlersOnCommittingThreadsLosesNothing() throws SQLException {
    TopicName topic = TopicName.parse(TOPIC);
    Boxline setup = fx.db().boxline(b -> b.instanceId("setup").sequencer(false));
    setup.admin().createNamespace(NamespacePath.of("fault/inline"));
    setup.admin().createTopic(topic, PARTITIONS, Sequencing.IN_TRANSACTION);
    setup.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    setup.admin().setDefaultGroupPolicy(FaultFixture.QUICK_TAKEOVER);
    fx.createHandledTable();
    fx.execute("CREATE TABLE " + fx.table("business") + " (event_id uuid PRIMARY KEY)");

    ChildJvm run1 = startApp("app-1", 1, true);
    run1.awaitOutput(Duration.ofSeconds(30), "READY");
    run1.awaitOutput(Duration.ofSeconds(30), "COMMITTING_THREAD_USED");
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "app-1 handled " + KILL_AFTER + " events",
        run1,
        () -> fx.count("SELECT count(*) FROM " + fx.table("handled")) >= KILL_AFTER);
    run1.kill9();
    assertThat(run1.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
    fx.awaitSessionsGone("app-1");
    long handledByRun1 = fx.distinctHandled(1);
    Map<FaultFixture.Part, Long> cursors = fx.cursors(SUBSCRIPTION);

    ChildJvm run2 = startApp("app-2", 2, false);
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(45),
        "app-2 committed every cursor to the partition head",
        run2,
        () -> fx.caughtUp(SUBSCRIPTION));
    assertThat(run2.stop(Duration.ofSeconds(20))).as("app-2 exit code on graceful stop").isZero();

    // What committed is what the log holds: each event with its business row, and no other.
    Set<UUID> published = fx.logPositions().keySet();
    assertThat(businessRows()).as("business rows vs events in the log").isEqualTo(published);
    // Publishing stops with the kill, so app-1 may have handled all that committed; what matters
    // is that nothing committed is lost and the duplicates stay within the in-flight batches.
    assertThat(handledByRun1).isGreaterThanOrEqualTo(KILL_AFTER);
    fx.verifyLog(published);
    int duplicates = fx.verifyDeliveries(published, cursors, BATCH, CONCURRENCY);
    System.out.printf(
        "published %d; app-1 handled %d before SIGKILL; duplicates %d (bound %d)%n",
        published.size(), handledByRun1, duplicates, BATCH * CONCURRENCY);
  }

  private Set<UUID> businessRows() throws SQLException {
    Set<UUID> ids = new HashSet<>();
    try (Connection c = fx.db().dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT event_id FROM " + fx.table("business"))) {
      while (rs.next()) {
        ids.add(rs.getObject(1, UUID.class));
      }
    }
    return ids;
  }
}
