package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.fault.FaultFixture.Part;
import io.boxline.testkit.fault.GroupFaults.Delivery;
import io.boxline.testkit.fault.GroupFaults.LeaseRow;
import io.boxline.testkit.process.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A member killed with SIGKILL comes straight back under the same member id (a container restarted
 * by its orchestrator with a stable name, before the old incarnation's deadline passed). Contract:
 * the partitions the dead incarnation held are delivered again within the takeover bound — the new
 * incarnation's heartbeats must not keep the dead one's leases alive — and nothing is lost.
 *
 * <p>Without the new incarnation handing back leases held under its id that it does not hold
 * (DefaultConsumer.checkIn), its check-ins keep member "a" alive, nobody reclaims the dead
 * incarnation's leases, and those partitions stall for as long as the new incarnation lives.
 */
class GroupCrashSameIdRestartTest {
  private static final int PARTITIONS = 6;
  private static final int BATCH = 20;
  private static final int CONCURRENCY = 3;
  private static final String SUBSCRIPTION = "group-sameid";

  /**
   * Check-ins every second with a 20 s deadline, long enough for the new JVM to start and check in
   * before the old incarnation's heartbeat expires even on a saturated machine: the case under test
   * (a 5 s deadline was too short under CI load, and the test then had nothing to test).
   */
  private static final GroupPolicy POLICY =
      GroupFaults.POLICY.withMinCheckInInterval(Duration.ofSeconds(1)).withDeadlineMultiplier(20);

  private GroupFaults g;

  @BeforeEach
  void setUp() {
    g = GroupFaults.create("groupsameid");
  }

  @AfterEach
  void tearDown() {
    g.close();
  }

  @Test
  @Timeout(90)
  void partitionsOfKilledIncarnationAreDeliveredAgainWhenItsIdComesBack() throws IOException {
    FaultFixture fx = g.fx();
    TopicName topic = TopicName.of("fault/sameid", "events");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/sameid"));
    boxline.admin().createTopic(topic, PARTITIONS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(GroupFaults.POLICY);
    boxline.admin().setGroupPolicy(SUBSCRIPTION, POLICY);
    assertThat(boxline.admin().groupPolicy(SUBSCRIPTION)).isEqualTo(POLICY);
    g.createHandledTable();

    ChildJvm a1 = g.startMember("a", 1, SUBSCRIPTION, BATCH, CONCURRENCY);
    ChildJvm b = g.startMember("b", 1, SUBSCRIPTION, BATCH, CONCURRENCY);
    // The restarted incarnation's JVM starts now too and waits at its start gate with Boxline
    // started; its consumer joins the group only when the test opens the gate, after the kill.
    Path startGate = ChildJvm.logDirectory().resolve(fx.schema() + "-a-start");
    Files.deleteIfExists(startGate);
    ChildJvm a2 =
        g.startMember(
            "a", 2, SUBSCRIPTION, BATCH, CONCURRENCY, "--startGate=" + startGate.toString());
    Map<String, ChildJvm> incarnations = new LinkedHashMap<>();
    incarnations.put("a/run1", a1);
    incarnations.put("b/run1", b);
    a1.awaitOutput(Duration.ofSeconds(30), "READY");
    b.awaitOutput(Duration.ofSeconds(30), "READY");

    // Same reasoning as GroupCrashTakeoverTest, counted from the kill: a restart under the same id
    // must not make the takeover slower than a plain crash,
    //   deadline(2) + 2 × JITTER × interval(2) + LOADED_MACHINE_SLACK.
    Duration interval = POLICY.checkInInterval(2);
    Duration deadline = POLICY.deadline(2);
    long boundMillis =
        deadline.toMillis()
            + GroupFaults.times(interval, 2 * GroupFaults.JITTER)
            + GroupFaults.LOADED_MACHINE_SLACK.toMillis();

    Set<UUID> published;
    Set<Part> orphaned = new TreeSet<>();
    try (Publishing.Background load =
        new Publishing.Background(boxline, List.of(topic), PARTITIONS, 20).start()) {
      Await.until(
          Duration.ofSeconds(40),
          "all partitions leased by a and b, both handling events",
          () -> {
            load.check();
            Map<String, Integer> counts = g.activeLeaseCounts(SUBSCRIPTION);
            return counts.keySet().equals(Set.of("a", "b"))
                && counts.values().stream().mapToInt(Integer::intValue).sum() == PARTITIONS
                && g.handledCount("a", 1) >= BATCH
                && g.handledCount("b", 1) >= BATCH;
          });
      a2.awaitOutput(Duration.ofSeconds(30), "AT START GATE");
      orphaned.addAll(g.heldBy(SUBSCRIPTION, "a"));
      long t0 = System.nanoTime();
      a1.kill9();
      assertThat(a1.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
      orphaned.addAll(g.heldBy(SUBSCRIPTION, "a"));
      Map<Part, LeaseRow> atKill = g.leases(SUBSCRIPTION);
      assertThat(orphaned).as("partitions the killed incarnation held").isNotEmpty();
      long beatAtKill = g.heartbeatMicros(SUBSCRIPTION, "a");
      long oldExpiry = g.expiresMicros(SUBSCRIPTION, "a");

      Files.writeString(startGate, "open", StandardCharsets.UTF_8);
      incarnations.put("a/run2", a2);
      a2.awaitOutput(Duration.ofSeconds(30), "READY");
      long[] firstBeat = new long[1];
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(10),
          "the new a checks in",
          a2,
          () -> (firstBeat[0] = g.heartbeatMicros(SUBSCRIPTION, "a")) > beatAtKill);
      // The case under test: member "a" never expired, so b never saw it dead (else this is just
      // GroupCrashTakeoverTest).
      assumeTrue(
          firstBeat[0] < oldExpiry,
          "the new incarnation checked in before the old one's heartbeat expired (it checked in "
              + (firstBeat[0] - oldExpiry) / 1000
              + " ms after)");
      Map<Part, String> state = new TreeMap<>();
      Await.until(
          Duration.ofMillis(3 * boundMillis),
          "every partition of the killed incarnation leased anew (epoch above "
              + "the one at the kill): "
              + orphaned,
          () -> {
            load.check();
            requireAlive(a2);
            requireAlive(b);
            Map<Part, LeaseRow> now = g.leases(SUBSCRIPTION);
            state.clear();
            orphaned.forEach(
                p ->
                    state.put(
                        p,
                        now.get(p).owner() + "@" + (now.get(p).epoch() - atKill.get(p).epoch())));
            return orphaned.stream()
                    .allMatch(
                        p ->
                            now.get(p).owner() != null
                                && now.get(p).epoch() > atKill.get(p).epoch())
                ? null
                : state;
          },
          s -> s == null);
      long recoveredMillis = GroupFaults.millisSince(t0);
      System.out.printf(
          "same-id restart: partitions of the killed incarnation leased anew %d ms after the kill"
              + " (bound %d ms)%n",
          recoveredMillis, boundMillis);
      assertThat(recoveredMillis).isLessThanOrEqualTo(boundMillis);
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(30),
          "the new a handles events",
          a2,
          () -> {
            load.check();
            return g.handledCount("a", 2) >= BATCH;
          });
      published = load.stop();
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(45),
          "every cursor at its partition's last sequence",
          a2,
          () -> fx.caughtUp(SUBSCRIPTION));
      assertThat(a2.stop(Duration.ofSeconds(20))).isZero();
    }
    assertThat(b.stop(Duration.ofSeconds(20))).isZero();

    fx.verifyLog(published);
    Map<UUID, List<Delivery>> byEvent = g.verifyDeliveries(published);
    Set<Integer> heldAtKill = new TreeSet<>();
    orphaned.forEach(p -> heldAtKill.add(p.partition()));
    GroupFaults.Duplicates dups =
        GroupFaults.checkDuplicates(
            byEvent, incarnations, Map.of("a/run1", heldAtKill), BATCH, CONCURRENCY);
    System.out.printf(
        "same-id restart: duplicates from the crash %d %s, after reported losses %d %s%n",
        dups.byCrash(), dups.byCrashPerPart(), dups.byLoss(), dups.lost());
  }

  private static void requireAlive(ChildJvm child) {
    if (!child.isAlive()) {
      throw new AssertionError(child + " died; its output:\n" + child.tail(80));
    }
  }
}
