package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.fault.FaultFixture.Part;
import io.boxline.testkit.fault.GroupFaults.CursorRow;
import io.boxline.testkit.fault.GroupFaults.Delivery;
import io.boxline.testkit.fault.GroupFaults.LeaseRow;
import io.boxline.testkit.process.ChildJvm;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three consumer processes share a subscription through database coordination; one is killed with
 * SIGKILL while events keep arriving. Contract: the survivors take over every partition the dead
 * member held within the documented bound (its heartbeat deadline plus the survivors' check-ins),
 * no event is lost, each member sees each partition in order, and the only events delivered twice
 * are the dead member's in-flight batches (at most concurrency × batch size) — plus, on a machine
 * so loaded that a live member misses its deadline, the in-flight batches of partitions that member
 * reported LOST (see {@link GroupFaults#checkDuplicates}; the test prints them).
 *
 * <p>Topology: the test JVM sets the group policy, runs the sequencer and publishes continuously
 * (paced) to all partitions; members {@code a}, {@code b}, {@code c} are {@link
 * io.boxline.testkit.process.GroupMemberProcess} children recording each delivery with an
 * auto-commit insert.
 */
class GroupCrashTakeoverTest {
  private static final int PARTITIONS = 12;
  private static final int BATCH = 20;
  private static final int CONCURRENCY = 3;
  private static final String SUBSCRIPTION = "group-crash";
  private static final List<String> MEMBERS = List.of("a", "b", "c");
  private static final String VICTIM = "b";

  private GroupFaults g;

  @BeforeEach
  void setUp() {
    g = GroupFaults.create("groupcrash");
  }

  @AfterEach
  void tearDown() {
    g.close();
  }

  @Test
  @Timeout(90)
  void survivorsTakeOverKilledMembersPartitionsWithinDeadlineAndLoseNothing() {
    FaultFixture fx = g.fx();
    TopicName topic = TopicName.of("fault/group", "events");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/group"));
    boxline.admin().createTopic(topic, PARTITIONS);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(GroupFaults.POLICY);
    assertThat(boxline.admin().groupPolicy(SUBSCRIPTION)).isEqualTo(GroupFaults.POLICY);
    g.createHandledTable();

    Map<String, ChildJvm> children = new LinkedHashMap<>();
    for (String m : MEMBERS) {
      children.put(m, g.startMember(m, 1, SUBSCRIPTION, BATCH, CONCURRENCY));
    }
    for (ChildJvm c : children.values()) {
      c.awaitOutput(Duration.ofSeconds(30), "READY");
    }
    ChildJvm victim = children.get(VICTIM);
    List<ChildJvm> survivors =
        children.entrySet().stream()
            .filter(e -> !e.getKey().equals(VICTIM))
            .map(Map.Entry::getValue)
            .toList();
    Set<String> survivorIds = new HashSet<>(children.keySet());
    survivorIds.remove(VICTIM);

    // The takeover bound, from the policy (3 members):
    //   the victim's member row expires at most deadline(3) after its last check-in (<= the kill);
    //   each survivor checks in at least every JITTER × interval(3); the first one after the expiry
    //   reclaims the victim's leases and takes up to its fair maximum, the other takes the rest at
    //   its own first check-in after the expiry, or one check-in later when both reached for the
    //   same partitions at once. So
    //     takeover <= deadline(3) + 2 × JITTER × interval(3) + LOADED_MACHINE_SLACK.
    //   And never early: a partition the victim held ACTIVE is taken only after the victim's member
    //   row expired (checked on the database's own timestamps below, because a starved victim may
    //   have checked in late, so no floor measured from the kill holds).
    Duration interval = GroupFaults.POLICY.checkInInterval(MEMBERS.size());
    Duration deadline = GroupFaults.POLICY.deadline(MEMBERS.size());
    long boundMillis =
        deadline.toMillis()
            + GroupFaults.times(interval, 2 * GroupFaults.JITTER)
            + GroupFaults.LOADED_MACHINE_SLACK.toMillis();

    Set<UUID> published;
    Set<Part> victimParts = new TreeSet<>();
    Map<Part, LeaseRow> leasesAtKill;
    Instant victimExpiry;
    long takeoverMillis;
    long victimHandled;
    try (Publishing.Background load =
        new Publishing.Background(boxline, List.of(topic), PARTITIONS, 20).start()) {
      // Every member at least at the lower bound of its fair share, every partition leased, and
      // events flowing through each member.
      int fairMin = (int) Math.floor(PARTITIONS / (double) MEMBERS.size() * (1 - 0.1) + 1e-9);
      Await.until(
          Duration.ofSeconds(40),
          "all " + PARTITIONS + " partitions leased, each member holding >= " + fairMin,
          () -> {
            load.check();
            children.values().forEach(GroupCrashTakeoverTest::requireAlive);
            Map<String, Integer> counts = g.activeLeaseCounts(SUBSCRIPTION);
            return counts.keySet().equals(children.keySet())
                    && counts.values().stream().mapToInt(Integer::intValue).sum() == PARTITIONS
                    && counts.values().stream().allMatch(n -> n >= fairMin)
                ? counts
                : null;
          },
          counts -> counts != null);
      Await.until(
          Duration.ofSeconds(20),
          "each member handled at least " + 2 * BATCH + " events",
          () -> {
            load.check();
            return MEMBERS.stream().allMatch(m -> g.handledCount(m, 1) >= 2 * BATCH);
          });

      victimParts.addAll(g.heldBy(SUBSCRIPTION, VICTIM));
      long t0 = System.nanoTime();
      victim.kill9();
      assertThat(victim.exitCode()).as("exit code of a SIGKILLed JVM").isEqualTo(128 + 9);
      // A lease the victim won between the read above and the kill is its too.
      victimParts.addAll(g.heldBy(SUBSCRIPTION, VICTIM));
      leasesAtKill = g.leases(SUBSCRIPTION);
      // The victim can no longer check in, so this is when it counts as dead.
      victimExpiry =
          g.memberExpiry(SUBSCRIPTION, VICTIM)
              .orElseThrow(() -> new AssertionError("the victim's member row is gone at the kill"));
      assertThat(victimParts).as("partitions the victim held when killed").isNotEmpty();

      Map<Part, String> owners = new HashMap<>();
      Await.until(
          Duration.ofMillis(3 * boundMillis),
          "survivors " + survivorIds + " own every partition the victim held: " + victimParts,
          () -> {
            load.check();
            survivors.forEach(GroupCrashTakeoverTest::requireAlive);
            Map<Part, LeaseRow> now = g.leases(SUBSCRIPTION);
            owners.clear();
            victimParts.forEach(p -> owners.put(p, now.get(p).owner()));
            return owners;
          },
          o -> o.values().stream().allMatch(survivorIds::contains));
      takeoverMillis = GroupFaults.millisSince(t0);
      System.out.printf(
          "takeover of %s's %d partitions after SIGKILL: %d ms (bound %d ms = deadline %d + 2 ×"
              + " %.1f × interval %d + slack %d)%n",
          VICTIM,
          victimParts.size(),
          takeoverMillis,
          boundMillis,
          deadline.toMillis(),
          GroupFaults.JITTER,
          interval.toMillis(),
          GroupFaults.LOADED_MACHINE_SLACK.toMillis());
      assertThat(takeoverMillis)
          .as("time from SIGKILL until survivors own all of the victim's partitions (ms)")
          .isLessThanOrEqualTo(boundMillis);
      Map<Part, LeaseRow> taken = g.leases(SUBSCRIPTION);
      for (Part p : victimParts) {
        LeaseRow atKill = leasesAtKill.get(p);
        if (atKill != null && VICTIM.equals(atKill.owner()) && !atKill.releasing()) {
          assertThat(taken.get(p).since())
              .as("%s, ACTIVE for the victim at the kill, taken only after the victim expired", p)
              .isAfterOrEqualTo(victimExpiry);
        }
      }

      fx.awaitSessionsGone(GroupFaults.childName(VICTIM, 1));
      victimHandled = g.handledCount(VICTIM, 1);
      long after = g.distinctHandled();
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(30),
          "survivors keep handling new events after the takeover",
          survivors.get(0),
          () -> {
            load.check();
            requireAlive(survivors.get(1));
            return g.distinctHandled() >= after + 500;
          });
      published = load.stop();
    }

    for (ChildJvm s : survivors) {
      FaultFixture.awaitWhileAlive(
          Duration.ofSeconds(45),
          "every cursor at its partition's last sequence",
          s,
          () -> fx.caughtUp(SUBSCRIPTION));
    }

    // The new owners fenced the victim: lease epochs moved on and the cursors carry them.
    Map<Part, LeaseRow> leasesNow = g.leases(SUBSCRIPTION);
    Map<Part, CursorRow> cursors = g.cursorRows(SUBSCRIPTION);
    for (Part p : victimParts) {
      assertThat(leasesNow.get(p).epoch())
          .as("lease epoch of %s after the takeover", p)
          .isGreaterThan(leasesAtKill.get(p).epoch());
      assertThat(cursors.get(p).epoch())
          .as("cursor epoch of %s after the takeover", p)
          .isGreaterThan(leasesAtKill.get(p).epoch());
      assertThat(cursors.get(p).owner()).as("cursor owner of %s", p).isIn(survivorIds);
    }

    for (ChildJvm s : survivors) {
      assertThat(s.stop(Duration.ofSeconds(20))).as(s + " exit code on graceful stop").isZero();
    }
    assertThat(g.liveMembers(SUBSCRIPTION)).as("members left after graceful stops").isEmpty();

    fx.verifyLog(published);
    Map<UUID, List<Delivery>> byEvent = g.verifyDeliveries(published);
    Map<String, ChildJvm> incarnations = new LinkedHashMap<>();
    children.forEach((m, c) -> incarnations.put(m + "/run1", c));
    Set<Integer> heldAtKill = new TreeSet<>();
    victimParts.forEach(p -> heldAtKill.add(p.partition()));
    GroupFaults.Duplicates dups =
        GroupFaults.checkDuplicates(
            byEvent, incarnations, Map.of(VICTIM + "/run1", heldAtKill), BATCH, CONCURRENCY);
    assertThat(victimHandled).as("events the victim handled before the kill").isPositive();
    System.out.printf(
        "published %d; victim %s handled %d before SIGKILL on %d partitions; duplicates from its"
            + " in-flight batches %d on %s (bound %d); duplicates after partitions were reported LOST"
            + " %d (by incarnation and partition: %s)%n",
        published.size(),
        VICTIM,
        victimHandled,
        victimParts.size(),
        dups.byCrash(),
        dups.byCrashPerPart(),
        CONCURRENCY * BATCH,
        dups.byLoss(),
        dups.lost());
  }

  private static void requireAlive(ChildJvm child) {
    if (!child.isAlive()) {
      throw new AssertionError(child + " died; its output:\n" + child.tail(80));
    }
  }
}
