package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.fault.GroupFaults.Delivery;
import io.boxline.testkit.process.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rolling restart of a three-member group while events keep arriving: each member in turn is
 * stopped gracefully (stdin closed: the consumer finishes and commits its in-flight batches, then
 * leaves the group, freeing its leases at once) and a new process with the same member id takes its
 * place (started ahead, it joins the group only once the others have taken over). Contract: nothing
 * is lost, every incarnation sees each partition in order, and a graceful stop redelivers nothing —
 * duplicates stay within #restarts × concurrency × batch size and are expected to be zero.
 */
class GroupRollingRestartTest {
  private static final int PARTITIONS = 12;
  private static final int BATCH = 20;
  private static final int CONCURRENCY = 3;
  private static final String SUBSCRIPTION = "group-rolling";
  private static final List<String> MEMBERS = List.of("a", "b", "c");

  /**
   * The fast policy with a long deadline (3 members: 375 ms × 20 = 7.5 s): a handover within it
   * proves the stopped member handed its leases back rather than letting them expire, and a loaded
   * machine does not make live members look dead.
   */
  private static final GroupPolicy POLICY = GroupFaults.POLICY.withDeadlineMultiplier(20);

  private GroupFaults g;

  @BeforeEach
  void setUp() {
    g = GroupFaults.create("grouproll");
  }

  @AfterEach
  void tearDown() {
    g.close();
  }

  @Test
  @Timeout(120)
  void gracefulRollingRestartLosesNothingAndRedeliversNothing() throws IOException {
    FaultFixture fx = g.fx();
    TopicName topic = TopicName.of("fault/rolling", "events");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/rolling"));
    boxline.admin().createTopic(topic, PARTITIONS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(POLICY);
    g.createHandledTable();

    Map<String, ChildJvm> current = new LinkedHashMap<>();
    Map<String, ChildJvm> incarnations = new LinkedHashMap<>();
    Map<String, Integer> runs = new LinkedHashMap<>();
    for (String m : MEMBERS) {
      runs.put(m, 1);
      current.put(m, g.startMember(m, 1, SUBSCRIPTION, BATCH, CONCURRENCY));
      incarnations.put(m + "/run1", current.get(m));
    }
    for (ChildJvm c : current.values()) {
      c.awaitOutput(Duration.ofSeconds(30), "READY");
    }
    // The second incarnations' JVMs start now, while the first ones run, and wait at their start
    // gates with Boxline started: each one's consumer joins the group only when the test opens its
    // gate, after the handover of the member it replaces has been checked.
    Map<String, ChildJvm> next = new LinkedHashMap<>();
    Map<String, Path> startGates = new LinkedHashMap<>();
    for (String m : MEMBERS) {
      Path gate = ChildJvm.logDirectory().resolve(fx.schema() + "-" + m + "-start");
      Files.deleteIfExists(gate);
      startGates.put(m, gate);
      next.put(
          m,
          g.startMember(m, 2, SUBSCRIPTION, BATCH, CONCURRENCY, "--startGate=" + gate.toString()));
    }

    // A stopped member's leases would otherwise be free only when its heartbeat expires, at the
    // earliest deadline(3) - JITTER × interval(3) after the stop.
    long expiryFloorMillis =
        POLICY.deadline(MEMBERS.size()).toMillis()
            - GroupFaults.times(POLICY.checkInInterval(MEMBERS.size()), GroupFaults.JITTER);
    Set<UUID> published;
    List<String> handovers = new ArrayList<>();
    try (Publishing.Background load =
        new Publishing.Background(boxline, List.of(topic), PARTITIONS, 20).start()) {
      awaitAllLeasedAndFlowing(load, current, runs);
      for (String m : MEMBERS) {
        ChildJvm old = current.get(m);
        ChildJvm successor = next.get(m);
        successor.awaitOutput(Duration.ofSeconds(30), "AT START GATE");
        long t0 = System.nanoTime();
        assertThat(old.stop(Duration.ofSeconds(20)))
            .as(old + " exit code on graceful stop")
            .isZero();
        long stopMillis = GroupFaults.millisSince(t0);
        assertThat(old.output())
            .as(old + " finished its in-flight batches on stop")
            .contains("STOPPED clean=true");
        // leave() ran before the process exited: no lease and no member row of m remain.
        assertThat(g.heldBy(SUBSCRIPTION, m))
            .as("leases of %s after its graceful stop", m)
            .isEmpty();
        assertThat(g.liveMembers(SUBSCRIPTION))
            .as("live members after %s stopped", m)
            .doesNotContain(m);
        Await.until(
            Duration.ofSeconds(20),
            "the other members lease all " + PARTITIONS + " partitions after " + m + " left",
            () -> {
              load.check();
              current.values().stream()
                  .filter(c -> c != old)
                  .forEach(GroupRollingRestartTest::requireAlive);
              return g.activeLeaseCounts(SUBSCRIPTION);
            },
            counts -> counts.values().stream().mapToInt(Integer::intValue).sum() == PARTITIONS);
        long handoverMillis = GroupFaults.millisSince(t0);
        assertThat(handoverMillis)
            .as(
                "ms from closing %s's stdin until the others lease everything: below the earliest"
                    + " expiry of its heartbeat (deadline - %.1f × interval = %d ms)",
                m, GroupFaults.JITTER, expiryFloorMillis)
            .isLessThan(expiryFloorMillis);
        handovers.add(
            m + ": stop " + stopMillis + " ms, all leased again " + handoverMillis + " ms");

        Files.writeString(startGates.get(m), "open", StandardCharsets.UTF_8);
        current.put(m, successor);
        incarnations.put(m + "/run2", successor);
        successor.awaitOutput(Duration.ofSeconds(30), "READY");
        runs.put(m, 2);
        awaitAllLeasedAndFlowing(load, current, runs);
      }
      published = load.stop();
    }

    for (ChildJvm c : current.values()) {
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(45),
          "every cursor at its partition's last sequence",
          c,
          () -> fx.caughtUp(SUBSCRIPTION));
    }
    for (ChildJvm c : current.values()) {
      assertThat(c.stop(Duration.ofSeconds(20))).as(c + " exit code on graceful stop").isZero();
      assertThat(c.output())
          .as(c + " finished its in-flight batches on stop")
          .contains("STOPPED clean=true");
    }
    assertThat(g.liveMembers(SUBSCRIPTION)).as("members left after graceful stops").isEmpty();
    assertThat(g.activeLeaseCounts(SUBSCRIPTION)).as("leases left after graceful stops").isEmpty();

    fx.verifyLog(published);
    Map<UUID, List<Delivery>> byEvent = g.verifyDeliveries(published);
    int extra = GroupFaults.extraDeliveries(byEvent);
    for (String m : MEMBERS) {
      assertThat(g.handledCount(m, 1)).as("%s run 1 handled events", m).isPositive();
      assertThat(g.handledCount(m, 2)).as("%s run 2 handled events", m).isPositive();
    }
    // No duplicate from a graceful stop: each must come from a partition a member reported LOST
    // (possible only if a live member missed its 7.5 s deadline on an overloaded machine).
    GroupFaults.Duplicates dups =
        GroupFaults.checkDuplicates(byEvent, incarnations, Map.of(), BATCH, CONCURRENCY);
    int bound = MEMBERS.size() * CONCURRENCY * BATCH;
    System.out.printf(
        "rolling restart: published %d; extra deliveries %d (bound %d; from reported losses %d,"
            + " partitions reported LOST %s); %s%n",
        published.size(), extra, bound, dups.byLoss(), dups.lost(), handovers);
    assertThat(extra)
        .as("extra deliveries over %d graceful restarts", MEMBERS.size())
        .isEqualTo(dups.total())
        .isLessThanOrEqualTo(bound);
  }

  /**
   * Every partition leased (none RELEASING) by the current members only, and each current
   * incarnation ({@code runs}: member → run) has handled at least {@code 2 × BATCH} events, so the
   * next stop happens mid-flow.
   */
  private void awaitAllLeasedAndFlowing(
      Publishing.Background load, Map<String, ChildJvm> current, Map<String, Integer> runs) {
    Await.until(
        Duration.ofSeconds(40),
        "all " + PARTITIONS + " partitions leased by " + runs + ", each handling events",
        () -> {
          load.check();
          current.values().forEach(GroupRollingRestartTest::requireAlive);
          Map<String, Integer> counts = g.activeLeaseCounts(SUBSCRIPTION);
          boolean ok =
              current.keySet().containsAll(counts.keySet())
                  && counts.values().stream().mapToInt(Integer::intValue).sum() == PARTITIONS
                  && runs.entrySet().stream()
                      .allMatch(e -> g.handledCount(e.getKey(), e.getValue()) >= 2 * BATCH);
          return ok ? null : counts;
        },
        counts -> counts == null);
  }

  private static void requireAlive(ChildJvm child) {
    if (!child.isAlive()) {
      throw new AssertionError(child + " died; its output:\n" + child.tail(80));
    }
  }
}
