package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RebalanceTest {
  private static final List<Member> MEMBERS =
      List.of(new Member("w1", 1), new Member("w2", 2), new Member("w3", 3));

  private static int rounds;

  private static Map<String, Integer> settle(Map<PartitionKey, String> owners, int partitions) {
    return settle(MEMBERS, owners, partitions);
  }

  /**
   * Runs check-ins round-robin until nothing moves; returns each member's lease count and leaves
   * the number of rounds it took in {@link #rounds}.
   */
  private static Map<String, Integer> settle(
      List<Member> members, Map<PartitionKey, String> owners, int partitions) {
    Map<PartitionKey, Long> backlogged = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      backlogged.put(PartitionKey.of(1, p), 5L);
    }
    Random random = new Random(42);
    for (rounds = 0; rounds < 200; rounds++) {
      boolean moved = false;
      for (Member m : members) {
        List<Lease> leases = new ArrayList<>();
        Map<PartitionKey, Long> mine = new HashMap<>();
        owners.forEach(
            (k, o) -> {
              leases.add(new Lease(k.topicId(), k.partition(), o, 1, false, Instant.EPOCH));
              if (o.equals(m.id())) {
                mine.put(k, 5L);
              }
            });
        Rebalance.Plan plan =
            Rebalance.plan(
                m.id(),
                m.weight(),
                new GroupView(members, leases, Instant.EPOCH),
                backlogged,
                mine,
                0.1,
                random);
        for (PartitionKey k : plan.release()) {
          owners.remove(k);
          moved = true;
        }
        for (PartitionKey k : plan.acquire()) {
          assertThat(owners.putIfAbsent(k, m.id())).as("planned to take a held partition").isNull();
          moved = true;
        }
      }
      if (!moved) {
        break;
      }
    }
    Map<String, Integer> counts = new HashMap<>();
    members.forEach(m -> counts.put(m.id(), 0));
    owners.values().forEach(o -> counts.merge(o, 1, Integer::sum));
    return counts;
  }

  @Test
  void weightsOneTwoThreeSettleNearTenTwentyThirtyFromEmpty() {
    Map<String, Integer> c = settle(new HashMap<>(), 60);
    assertThat(c.get("w1")).isBetween(9, 11);
    assertThat(c.get("w2")).isBetween(18, 22);
    assertThat(c.get("w3")).isBetween(27, 33);
    assertThat(c.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(60);
  }

  @Test
  void aMemberBelowItsFloorIsFedEvenWhenNobodyIsAboveTheirCeiling() {
    Map<PartitionKey, String> owners = new HashMap<>();
    for (int p = 0; p < 60; p++) {
      owners.put(PartitionKey.of(1, p), p < 7 ? "w1" : p < 29 ? "w2" : "w3"); // 7 / 22 / 31
    }
    Map<String, Integer> c = settle(owners, 60);
    assertThat(c.get("w1")).isBetween(9, 11);
    assertThat(c.get("w2")).isBetween(18, 22);
    assertThat(c.get("w3")).isBetween(27, 33);
  }

  private static List<Member> equalMembers(int n) {
    List<Member> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new Member("m" + i, 1));
    }
    return out;
  }

  @Test
  void aMemberHoldingEverythingGivesTheExcessBackAtOnce() {
    // 50 members join a group where the first one took all 1,024 busy partitions (share 20.48).
    List<Member> members = equalMembers(50);
    Map<PartitionKey, String> owners = new HashMap<>();
    for (int p = 0; p < 1024; p++) {
      owners.put(PartitionKey.of(1, p), "m0");
    }
    Map<String, Integer> c = settle(members, owners, 1024);
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(18, 23));
    assertThat(c.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1024);
    assertThat(rounds).as("check-in rounds until stable").isLessThanOrEqualTo(5);
  }

  @Test
  void fractionalSharesDoNotLeaveAMemberStarving() {
    // Share 20.48: 44 members at 21 and 4 at 20 are all within bounds, two at 10 are below 18.
    List<Member> members = equalMembers(50);
    Map<PartitionKey, String> owners = new HashMap<>();
    int p = 0;
    for (int m = 0; m < 50; m++) {
      int n = m < 44 ? 21 : m < 48 ? 20 : 10;
      for (int i = 0; i < n; i++) {
        owners.put(PartitionKey.of(1, p++), "m" + m);
      }
    }
    Map<String, Integer> c = settle(members, owners, 1024);
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(18, 23));
    assertThat(c.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1024);
    assertThat(rounds).as("check-in rounds until stable").isLessThanOrEqualTo(20);
  }

  /**
   * A group of 1,024 equal members joining at once over 4,096 busy partitions: everyone ends within
   * the slack of the share of 4, in a handful of check-in rounds (each round is one check-in
   * interval: with the default policy's 30 s cap, the whole group settles in minutes).
   */
  @Test
  void aThousandAndTwentyFourMembersSettleWithinTheSlack() {
    List<Member> members = equalMembers(1024);
    Map<String, Integer> c = settle(members, new HashMap<>(), 4096);
    assertThat(c.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(4096);
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(3, 5));
    assertThat(rounds).as("check-in rounds until nothing moves").isLessThanOrEqualTo(3);
  }

  @Test
  void aSimultaneousStartSettlesFromEmpty() {
    List<Member> members = equalMembers(50);
    Map<String, Integer> c = settle(members, new HashMap<>(), 1024);
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(18, 23));
    assertThat(c.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1024);
  }

  @Test
  void pickupOwnerIsTheSameForEveryoneAndSpreadsByWeight() {
    Map<String, Integer> picks = new HashMap<>();
    for (int p = 0; p < 6000; p++) {
      String a = Rebalance.pickupOwner(MEMBERS, PartitionKey.of(7, p));
      String b =
          Rebalance.pickupOwner(
              List.of(MEMBERS.get(2), MEMBERS.get(0), MEMBERS.get(1)), PartitionKey.of(7, p));
      assertThat(a).isEqualTo(b);
      picks.merge(a, 1, Integer::sum);
    }
    assertThat(picks.get("w1")).isBetween(800, 1200);
    assertThat(picks.get("w2")).isBetween(1700, 2300);
    assertThat(picks.get("w3")).isBetween(2600, 3400);
  }
}
