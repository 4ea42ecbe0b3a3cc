package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.process.ChildJvm;
import io.boxline.testkit.process.SequencerProcess;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two processes compete for the sequencer lease; the leader is killed with SIGKILL while events
 * keep arriving. Contract: the standby takes over once the lease expires, and the log ends up with
 * every published event exactly once, each partition numbered 1..N without gap or duplicate.
 *
 * <p>Topology: the test JVM only publishes (its Boxline is built with {@code .sequencer(false)});
 * the two child JVMs ({@code seq-a}, {@code seq-b}) only sequence, with a 2 s lease.
 */
class SequencerFailoverTest extends FaultTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final int WAVE_1 = 3_000;

  SequencerFailoverTest() {
    super("seqfailover");
  }

  private ChildJvm startSequencer(String instance) {
    return fx.startChild(
        instance,
        SequencerProcess.class,
        "--instance=" + instance,
        "--leaseMillis=" + LEASE.toMillis(),
        "--batchSize=500");
  }

  @Test
  @Timeout(90)
  void standbyTakesOverFromKilledLeaderWithoutGapsOrDuplicates() {
    TopicName orders = TopicName.of("fault/seq", "orders");
    TopicName payments = TopicName.of("fault/seq", "payments");
    List<TopicName> topics = List.of(orders, payments);
    Boxline publisher = fx.db().boxline(b -> b.instanceId("publisher").sequencer(false));
    publisher.admin().createNamespace(NamespacePath.of("fault/seq"));
    publisher.admin().createTopic(orders, 6);
    publisher.admin().createTopic(payments, 3);

    ChildJvm a = startSequencer("seq-a");
    ChildJvm b = startSequencer("seq-b");
    a.awaitOutput(Duration.ofSeconds(30), "READY");
    b.awaitOutput(Duration.ofSeconds(30), "READY");
    Await.until(
        Duration.ofSeconds(15),
        "a child holds the sequencer lease",
        fx::leaseOwner,
        o -> "seq-a".equals(o) || "seq-b".equals(o));
    assertThat(publisher.stats().sequencerLeader()).as("the publisher never sequences").isFalse();

    // Wave 1, sequenced by the first leader.
    Set<UUID> published = new HashSet<>(Publishing.wave(publisher, topics, WAVE_1, 100, "w1"));
    Await.until(Duration.ofSeconds(30), "wave 1 in the log", fx::logCount, n -> n == WAVE_1);
    String first = fx.leaseOwner();
    assertThat(first).isIn("seq-a", "seq-b");
    ChildJvm leader = first.equals("seq-a") ? a : b;
    ChildJvm standby = leader == a ? b : a;
    String second = standby == a ? "seq-a" : "seq-b";
    long epochBefore =
        fx.count("SELECT epoch FROM " + fx.table("sequencer_lease") + " WHERE name = 'sequencer'");

    // Wave 2: publishing continuously; the leader dies while it is sequencing it.
    try (Publishing.Background wave2 =
        new Publishing.Background(publisher, topics, 20, 5).start()) {
      Await.until(
          Duration.ofSeconds(15),
          "the first leader sequences part of wave 2",
          () -> {
            wave2.check();
            return fx.logCount() >= WAVE_1 + 200;
          });
      leader.kill9();
      assertThat(leader.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
      long txAtKill = wave2.transactions();
      Await.until(
          Duration.ofSeconds(15),
          "the standby " + second + " takes the lease",
          () -> {
            wave2.check();
            return second.equals(fx.leaseOwner());
          });
      long txAtTakeover = wave2.transactions();
      assertThat(txAtTakeover - txAtKill)
          .as("transactions committed while no sequencer was leading")
          .isPositive();
      // Keep publishing a little under the new leader too.
      Await.until(
          Duration.ofSeconds(15),
          "more wave-2 transactions under the new leader",
          () -> {
            wave2.check();
            return wave2.transactions() >= txAtTakeover + 25;
          });
      published.addAll(wave2.stop());
    }
    int total = published.size();
    assertThat(total).isGreaterThan(WAVE_1 + 200);

    // Outbox drained; a lost or doubled event shows up in verifyLog below.
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "the new leader drains the outbox",
        standby,
        () -> fx.outboxCount() == 0);
    assertThat(standby.isAlive()).isTrue();
    assertThat(fx.leaseOwner()).as("lease owner at the end").isEqualTo(second);
    assertThat(
            fx.count(
                "SELECT epoch FROM " + fx.table("sequencer_lease") + " WHERE name = 'sequencer'"))
        .as("lease epoch counts the change of owner")
        .isGreaterThan(epochBefore);
    standby.awaitOutput(Duration.ofSeconds(5), "LEADING");
    fx.verifyLog(published);
    assertThat(fx.logCount()).isEqualTo(total);
    System.out.printf(
        "leader %s killed; %s took over; %d events (%d wave-1) in the log%n",
        first, second, total, WAVE_1);
  }
}
