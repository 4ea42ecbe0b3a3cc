package io.boxline.testkit.suite;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.GroupPolicy;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of a {@link CoordinationStore}, run against every implementation (database,
 * in-memory, etcd).
 */
public abstract class CoordinationBehaviour {
  protected CoordinationStore store;
  private String group;

  /** A store to test; closed after each test. */
  protected abstract CoordinationStore newStore();

  @BeforeEach
  void open() {
    store = newStore();
    group = "g-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void close() {
    store.close();
  }

  private static List<Long> boxed(long[] values) {
    return java.util.Arrays.stream(values).boxed().toList();
  }

  private static PartitionKey p(int n) {
    return PartitionKey.of(1, n);
  }

  @Test
  void checkInRegistersMembersAndExpiresThemAfterTheirTtl() {
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    GroupView v = store.checkIn(group, "b", 2.5, Duration.ofMillis(300));
    // A store may return the view read before its own heartbeat; the other member must be there.
    assertThat(v.members()).extracting(Member::id).contains("a");
    GroupView fromA = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(fromA.members()).extracting(Member::id).containsExactlyInAnyOrder("a", "b");
    assertThat(fromA.members())
        .filteredOn(m -> m.id().equals("b"))
        .extracting(Member::weight)
        .containsExactly(2.5);
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "b expires",
        () -> store.checkIn(group, "a", 1, Duration.ofSeconds(30)).members(),
        m -> m.stream().noneMatch(x -> x.id().equals("b")));
  }

  @Test
  void liveMembersListsTheCheckedInMembersUntilTheyLeaveOrExpire() {
    assertThat(store.liveMembers(group)).isEmpty();
    store.checkIn(group, "b", 1, Duration.ofSeconds(30));
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    store.checkIn(group, "short", 1, Duration.ofMillis(300));
    store.checkIn(group + "-other", "x", 1, Duration.ofSeconds(30));
    assertThat(store.liveMembers(group)).containsExactly("a", "b", "short");
    store.leave(group, "b");
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "short expires",
        () -> store.liveMembers(group),
        m -> m.equals(List.of("a")));
  }

  /**
   * A renewal moves the deadlines of the group's live members it names, in one write, and brings
   * back no member that has expired and adds none that never checked in. A store that cannot renew
   * in one write renews nobody.
   */
  @Test
  void renewMovesTheDeadlinesOfLiveMembersOnly() {
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    store.checkIn(group, "short", 1, Duration.ofMillis(300));
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "short expires",
        () -> store.liveMembers(group),
        m -> m.equals(List.of("a")));
    int renewed = store.renew(group, List.of("a", "short", "never"), Duration.ofMillis(300));
    if (renewed == 0) {
      // No renewal in one write (etcd): nothing changed.
      assertThat(store.liveMembers(group)).containsExactly("a");
      return;
    }
    assertThat(renewed).as("only a was live").isEqualTo(1);
    assertThat(store.liveMembers(group)).containsExactly("a");
    // a's deadline was 30 s away; the renewal made it 300 ms.
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "a expires at its renewed deadline",
        () -> store.liveMembers(group),
        List::isEmpty);
    assertThat(store.renew(group, List.of(), Duration.ofSeconds(1))).isZero();
  }

  /** Members re-read the policy when the stamp changes, so every change must change it. */
  @Test
  void theCheckInsPolicyStampChangesWithTheGroupsPolicyAndTheDefault() {
    long first = store.checkIn(group, "a", 1, Duration.ofSeconds(30)).policyStamp();
    assertThat(first).isNotEqualTo(GroupView.NO_POLICY_STAMP);
    assertThat(store.checkIn(group, "a", 1, Duration.ofSeconds(30)).policyStamp()).isEqualTo(first);
    store.setPolicy(Optional.of(group), Optional.of(GroupPolicy.DEFAULT.withSlack(0.2)));
    long groupSet = store.checkIn(group, "a", 1, Duration.ofSeconds(30)).policyStamp();
    assertThat(groupSet).isNotEqualTo(first);
    store.setPolicy(Optional.empty(), Optional.of(GroupPolicy.DEFAULT.withCheckInRate(4)));
    long defaultSet = store.checkIn(group, "a", 1, Duration.ofSeconds(30)).policyStamp();
    assertThat(defaultSet).isNotEqualTo(groupSet).isNotEqualTo(first);
    store.setPolicy(Optional.of(group), Optional.empty());
    long groupCleared = store.checkIn(group, "a", 1, Duration.ofSeconds(30)).policyStamp();
    assertThat(groupCleared).isNotEqualTo(defaultSet);
    store.setPolicy(Optional.empty(), Optional.empty());
  }

  @Test
  void aPolicyKeepsEveryField() {
    GroupPolicy p =
        GroupPolicy.DEFAULT
            .withCheckInRate(3)
            .withMinCheckInInterval(Duration.ofMillis(500))
            .withMaxCheckInInterval(Duration.ofSeconds(7))
            .withMaxMembers(12)
            .withBatchSize(50)
            .withSlack(0.3);
    store.setPolicy(Optional.of(group), Optional.of(p));
    assertThat(store.policy(group)).isEqualTo(p);
    store.setPolicy(Optional.of(group), Optional.empty());
    assertThat(store.policy(group)).isEqualTo(GroupPolicy.DEFAULT);
  }

  /** Operators read the group without joining it. */
  @Test
  void theViewShowsMembersAndLeasesWithoutCheckingIn() {
    assertThat(store.view(group).members()).isEmpty();
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    store.checkIn(group, "b", 2.5, Duration.ofSeconds(30));
    long[] epochs = SuiteSupport.acquire(store, group, List.of(p(0), p(1)), "a");
    assertThat(store.markReleasing(group, p(1), "a", epochs[1])).isTrue();
    GroupView v = store.view(group);
    assertThat(v.members())
        .extracting(Member::id, Member::weight)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("a", 1.0),
            org.assertj.core.groups.Tuple.tuple("b", 2.5));
    assertThat(v.members())
        .allSatisfy(
            m -> {
              // Stores that record check-in times (the database, memory) report them; etcd cannot.
              if (m.lastCheckIn() != null) {
                assertThat(m.deadline()).isAfter(m.lastCheckIn());
                assertThat(m.deadline()).isAfter(v.now());
              }
            });
    assertThat(v.leases())
        .extracting(Lease::partition, Lease::owner, Lease::epoch, Lease::releasing)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(0, "a", epochs[0], false),
            org.assertj.core.groups.Tuple.tuple(1, "a", epochs[1], true));
    assertThat(store.liveMembers(group)).as("viewing did not join").containsExactly("a", "b");
    store.leave(group, "a");
    assertThat(store.view(group).leases()).isEmpty();
    assertThat(store.view(group).members()).extracting(Member::id).containsExactly("b");
  }

  @Test
  void theViewShowsWhatEachMemberLastReportedOfItself() {
    java.time.Instant started = java.time.Instant.ofEpochMilli(1_750_000_000_123L);
    MemberStatus busy =
        new MemberStatus(
            "web-1",
            "4242@web-1",
            List.of(
                new MemberStatus.Running(7, 3, 120, 169, 50, started),
                new MemberStatus.Running(7, 5, 88, 88, 1, started.plusSeconds(1))));
    store.checkIn(group, "a", 1, Duration.ofSeconds(30), busy);
    store.checkIn(group, "b", 1, Duration.ofSeconds(30));
    Map<String, MemberStatus> seen = new java.util.HashMap<>();
    store.view(group).members().forEach(m -> seen.put(m.id(), m.status()));
    assertThat(seen.get("a")).isEqualTo(busy);
    assertThat(seen.get("b")).isEqualTo(MemberStatus.UNKNOWN);

    // The next check-in replaces the report: the calls finished.
    MemberStatus idle = new MemberStatus("web-1", "4242@web-1", List.of());
    store.checkIn(group, "a", 1, Duration.ofSeconds(30), idle);
    assertThat(store.view(group).members())
        .filteredOn(m -> m.id().equals("a"))
        .singleElement()
        .satisfies(m -> assertThat(m.status()).isEqualTo(idle));
  }

  @Test
  void acquireIsACompareAndSetAndEpochsOnlyGrow() {
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    long[] first = SuiteSupport.acquire(store, group, List.of(p(0), p(1)), "a");
    assertThat(boxed(first)).allMatch(e -> e > 0);
    assertThat(SuiteSupport.acquire(store, group, List.of(p(0), p(2)), "b")[0]).isEqualTo(-1);
    assertThat(store.release(group, p(0), "b", first[0])).as("not the owner").isFalse();
    assertThat(store.release(group, p(0), "a", first[0] + 1)).as("wrong epoch").isFalse();
    assertThat(store.release(group, p(0), "a", first[0])).isTrue();
    long second = SuiteSupport.acquire(store, group, List.of(p(0)), "b")[0];
    assertThat(second).isGreaterThan(first[0]);
    GroupView v = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(v.leases())
        .extracting(Lease::partition, Lease::owner, Lease::epoch)
        .contains(
            org.assertj.core.groups.Tuple.tuple(0, "b", second),
            org.assertj.core.groups.Tuple.tuple(1, "a", first[1]));
  }

  @Test
  void exactlyOneOfManyRacingMembersWinsEachPartition() throws Exception {
    int members = 8;
    List<PartitionKey> parts = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      parts.add(p(i));
    }
    ConcurrentHashMap<PartitionKey, String> winners = new ConcurrentHashMap<>();
    AtomicInteger doubleWins = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int m = 0; m < members; m++) {
      String id = "m" + m;
      List<PartitionKey> mine = new ArrayList<>(parts);
      java.util.Collections.shuffle(mine, new java.util.Random(m));
      Thread t =
          new Thread(
              () -> {
                try {
                  go.await();
                  long[] epochs = SuiteSupport.acquire(store, group, mine, id);
                  for (int i = 0; i < epochs.length; i++) {
                    if (epochs[i] >= 0 && winners.putIfAbsent(mine.get(i), id) != null) {
                      doubleWins.incrementAndGet();
                    }
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      threads.add(t);
      t.start();
    }
    go.countDown();
    for (Thread t : threads) {
      t.join(30_000);
    }
    assertThat(failures).isEmpty();
    assertThat(doubleWins.get()).isZero();
    assertThat(winners).hasSize(20);
  }

  @Test
  void markReleasingAndReclaimFreeStaleLeases() {
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    store.checkIn(group, "dead", 1, Duration.ofSeconds(30));
    long a0 = SuiteSupport.acquire(store, group, List.of(p(0)), "a")[0];
    long a1 = SuiteSupport.acquire(store, group, List.of(p(1)), "a")[0];
    SuiteSupport.acquire(store, group, List.of(p(2)), "dead");
    assertThat(store.markReleasing(group, p(0), "a", a0)).isTrue();
    assertThat(store.markReleasing(group, p(1), "a", a1 + 5)).isFalse();
    GroupView v = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(v.leases()).filteredOn(l -> l.partition() == 0).allMatch(Lease::releasing);
    // A long grace keeps the releasing lease; the dead member's lease goes.
    assertThat(store.reclaim(group, Set.of("a"), Duration.ofMinutes(5))).isEqualTo(1);
    v = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(v.leases()).extracting(Lease::partition).containsExactlyInAnyOrder(0, 1);
    // Past the grace, the releasing lease goes too.
    io.boxline.testkit.Await.until(
        Duration.ofSeconds(10),
        "releasing lease reclaimed",
        () -> store.reclaim(group, Set.of("a"), Duration.ofMillis(50)) == 1);
    v = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(v.leases()).extracting(Lease::partition).containsExactly(1);
    assertThat(boxed(SuiteSupport.acquire(store, group, List.of(p(0), p(2)), "a")))
        .allMatch(e -> e > 0);
  }

  @Test
  void leaveFreesEveryLeaseOfTheMember() {
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    SuiteSupport.acquire(store, group, List.of(p(0), p(1), p(2)), "a");
    store.leave(group, "a");
    GroupView v = store.checkIn(group, "b", 1, Duration.ofSeconds(30));
    assertThat(v.leases()).isEmpty();
    assertThat(v.members()).extracting(Member::id).doesNotContain("a");
    assertThat(boxed(SuiteSupport.acquire(store, group, List.of(p(0), p(1), p(2)), "b")))
        .allMatch(e -> e > 0);
  }

  @Test
  void forceReleaseFreesChosenLeases() {
    SuiteSupport.acquire(store, group, List.of(p(0), p(1)), "a");
    assertThat(store.forceRelease(group, List.of(p(1)))).isEqualTo(1);
    GroupView v = store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    assertThat(v.leases()).extracting(Lease::partition).containsExactly(0);
  }

  @Test
  void policiesHaveAClusterDefaultAndPerGroupOverrides() {
    assertThat(store.policy(group)).isEqualTo(GroupPolicy.DEFAULT);
    GroupPolicy cluster = GroupPolicy.DEFAULT.withCheckInRate(3).withSlack(0.2);
    GroupPolicy mine =
        GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMillis(250)).withBatchSize(7);
    store.setPolicy(Optional.empty(), Optional.of(cluster));
    assertThat(store.policy(group)).isEqualTo(cluster);
    store.setPolicy(Optional.of(group), Optional.of(mine));
    assertThat(store.policy(group)).isEqualTo(mine);
    assertThat(store.policy(group + "-other")).isEqualTo(cluster);
    store.setPolicy(Optional.of(group), Optional.empty());
    assertThat(store.policy(group)).isEqualTo(cluster);
    store.setPolicy(Optional.empty(), Optional.empty());
    assertThat(store.policy(group)).isEqualTo(GroupPolicy.DEFAULT);
  }
}
