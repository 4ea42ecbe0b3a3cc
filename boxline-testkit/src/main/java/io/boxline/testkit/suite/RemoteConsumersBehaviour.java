package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.Consumer;
import io.boxline.ConsumerHooks;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.FencedException;
import io.boxline.MemberPolicy;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Delivery;
import io.boxline.RemoteConsumers.Outcome;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.RetryPolicy;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RemoteConsumers}: members that fetch and settle through an API share a group with each
 * other and with Java consumers, keep each key in order through retries, and are fenced.
 */
public abstract class RemoteConsumersBehaviour extends DatabaseSuite {
  private Boxline boxline;

  @BeforeEach
  void start() {
    boxline = db.boxline(b -> b);
  }

  private void publish(TopicName t, String key, String body) {
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, key, body)));
  }

  @Test
  void twoRemoteMembersAndAJavaConsumerShareTheGroupAndKeepEachKeyInOrderThroughRetries() {
    TopicName t = topic(boxline, "acme/remote/work", 4);
    subscribe(boxline, "remote-work", t);
    for (int i = 0; i < 60; i++) {
      publish(t, "k" + (i % 6), Integer.toString(i));
    }
    SuiteSupport.awaitSequenced(boxline, "remote-work", 60);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Event> handled = new CopyOnWriteArrayList<>();
    Set<String> failedOnce = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Map<String, Integer> attempts = new java.util.concurrent.ConcurrentHashMap<>();
    try (Consumer java =
        boxline
            .consumer("remote-work")
            .handler(
                e -> {
                  // The Java member fails and dead-letters the same events as the remote ones.
                  if (body(e).equals("5") && failedOnce.add("5")) {
                    throw io.boxline.HandlerDecision.retryIn(Duration.ofMillis(50), "not yet");
                  }
                  if (body(e).equals("11")) {
                    throw io.boxline.HandlerDecision.deadLetter("poison");
                  }
                  handled.add(e);
                })
            .start()) {
      Await.until(
          WAIT,
          "60 events handled by the three members",
          () -> {
            for (String m : List.of("r1", "r2")) {
              RemoteConsumers.Batch b = members.fetch("remote-work", m, 1, 7);
              List<Settlement> settle = new ArrayList<>();
              Set<String> waiting = new HashSet<>();
              for (Delivery d : b.deliveries()) {
                String body = body(d.event());
                if (waiting.contains(d.event().key())) {
                  continue; // behind a retry of its key: left out, delivered after it
                }
                attempts.merge(body, d.attempt(), Math::max);
                if (body.equals("5") && failedOnce.add(body)) {
                  // The first attempt at 5 fails: k5's later events must wait for its retry.
                  settle.add(
                      new Settlement(d.ackId(), Outcome.RETRY, Duration.ofMillis(50), "not yet"));
                  waiting.add(d.event().key());
                } else if (body.equals("11")) {
                  settle.add(new Settlement(d.ackId(), Outcome.DEAD, null, "poison"));
                } else {
                  handled.add(d.event());
                  settle.add(Settlement.done(d.ackId()));
                }
              }
              if (!settle.isEmpty()) {
                try {
                  members.settle("remote-work", m, settle);
                } catch (FencedException movedToAnotherMember) {
                  // delivered again where it went
                }
              }
            }
            Set<String> distinct = new HashSet<>();
            handled.forEach(e -> distinct.add(body(e)));
            return distinct.size() == 59;
          });
    }
    assertThat(failedOnce).containsExactly("5");
    Map<String, List<Integer>> byKey = new HashMap<>();
    Set<String> seen = new HashSet<>();
    for (Event e : handled) {
      if (seen.add(body(e))) {
        byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(Integer.parseInt(body(e)));
      }
    }
    // Each key's first handlings come in publish order, across members and the retry.
    byKey.values().forEach(list -> assertThat(list).isSorted());
    assertThat(byKey.get("k5")).startsWith(5, 11 + 6);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("remote-work")))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(body(d.event())).isEqualTo("11");
              assertThat(d.lastError()).endsWith("poison");
            });
    SuiteSupport.awaitCaughtUp(boxline, "remote-work");
  }

  @Test
  void aMemberThatLostItsPartitionIsFencedAndSettlementsAreChecked() {
    TopicName t = topic(boxline, "acme/remote/fence", 1);
    subscribe(boxline, "remote-fence", t);
    publish(t, "a", "1");
    publish(t, "b", "2");
    SuiteSupport.awaitSequenced(boxline, "remote-fence", 2);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Delivery> first = fetchUntil(members, "remote-fence", "r1", 10, 2);
    assertThatThrownBy(
            () ->
                members.settle(
                    "remote-fence", "r1", List.of(Settlement.done(first.get(1).ackId()))))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("not settled");
    assertThatThrownBy(
            () -> members.settle("remote-fence", "r1", List.of(Settlement.done("1.2.3"))))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("not an ack id");
    members.leave("remote-fence", "r1");
    List<Delivery> second = fetchUntil(members, "remote-fence", "r2", 10, 2);
    assertThatThrownBy(
            () ->
                members.settle(
                    "remote-fence", "r1", List.of(Settlement.done(first.get(0).ackId()))))
        .isInstanceOf(FencedException.class)
        .hasMessageContaining("fetch again");
    assertThat(
            members.settle(
                "remote-fence",
                "r2",
                List.of(
                    Settlement.done(second.get(0).ackId()),
                    Settlement.done(second.get(1).ackId()))))
        .isEqualTo(2);
    SuiteSupport.awaitCaughtUp(boxline, "remote-fence");
    assertThatThrownBy(() -> members.fetch("remote-fence", "not ok", 1, 10))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("member id");
  }

  /**
   * A run of done events is settled without reading them, but never past the partition's head: ack
   * ids that name events the log does not hold are refused and move no cursor.
   */
  @Test
  void aSettleOfEventsTheLogDoesNotHoldIsRefusedAndMovesNoCursor() {
    TopicName t = topic(boxline, "acme/remote/head", 1);
    subscribe(boxline, "remote-head", t);
    publish(t, "a", "1");
    SuiteSupport.awaitSequenced(boxline, "remote-head", 1);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Delivery> got = fetchUntil(members, "remote-head", "r1", 10, 1);
    // topicId.partition.epoch.from.sequence: the same fetch, one event further than the log holds.
    String real = got.get(0).ackId();
    String beyond =
        real.substring(0, real.lastIndexOf('.') + 1) + (got.get(0).event().sequence() + 1);
    assertThatThrownBy(
            () ->
                members.settle(
                    "remote-head", "r1", List.of(Settlement.done(real), Settlement.done(beyond))))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("does not hold");
    assertThat(boxline.admin().lag("remote-head"))
        .singleElement()
        .satisfies(l -> assertThat(l.position()).isZero());
    assertThat(members.settle("remote-head", "r1", List.of(Settlement.done(real)))).isEqualTo(1);
    SuiteSupport.awaitCaughtUp(boxline, "remote-head");
  }

  /**
   * A remote member's check-in interval grows with its group as a Java consumer's does (members /
   * checkInRate), so a large group of waiting members costs about checkInRate fetches a second.
   */
  @Test
  void aRemoteMembersCheckInIntervalGrowsWithItsGroup() {
    TopicName t = topic(boxline, "acme/remote/size", 2);
    subscribe(boxline, "remote-size", t);
    checkInPolicy("remote-size", 1, Duration.ofMillis(500));
    RemoteConsumers members = boxline.remoteConsumers();
    Duration alone = members.fetch("remote-size", "m0", 1, 10).checkInWithin();
    assertThat(alone).isEqualTo(Duration.ofMillis(1000)); // 1 member / 1 per second
    for (int i = 1; i < 3; i++) {
      members.fetch("remote-size", "m" + i, 1, 10);
    }
    // Between two check-ins a fetch gives what is left of the interval, and does not check in.
    Duration left = members.fetch("remote-size", "m0", 1, 10).checkInWithin();
    assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofMillis(1000));
    // Three members checking in once a second in all: at m0's next check-in, each every 3 s.
    awaitCheckIn(members, "remote-size", "m0", Duration.ofSeconds(3));
    // The group shrinks: the next check-in gives the shorter interval again.
    for (int i = 1; i < 3; i++) {
      members.leave("remote-size", "m" + i);
    }
    awaitCheckIn(members, "remote-size", "m0", Duration.ofMillis(1000));
    // A changed policy counts from the next fetch (the store tells by the check-in's stamp).
    checkInPolicy("remote-size", 4, Duration.ofMillis(250));
    awaitCheckIn(members, "remote-size", "m0", Duration.ofMillis(250));
  }

  /** Sets the group's check-in rate and shortest interval, the rest as the default policy. */
  private void checkInPolicy(String group, int rate, Duration minInterval) {
    boxline
        .admin()
        .setGroupPolicy(
            group,
            io.boxline.GroupPolicy.DEFAULT
                .withCheckInRate(rate)
                .withMinCheckInInterval(minInterval));
  }

  /**
   * Fetches until the member's check-in is due and it checks in, which gives the whole interval.
   */
  private static void awaitCheckIn(
      RemoteConsumers members, String group, String member, Duration interval) {
    Await.until(
        WAIT,
        member + " checks in for " + interval,
        () -> members.fetch(group, member, 1, 10).checkInWithin().equals(interval));
  }

  /**
   * Members that wait here are checked in together (one renewal for the group, no fetch each):
   * their deadlines move and they keep their sessions; a newcomer stops the renewals until they
   * have checked in with it in the group.
   */
  @Test
  void membersWaitingHereAreRenewedTogether() {
    TopicName t = topic(boxline, "acme/remote/renew", 2);
    subscribe(boxline, "remote-renew", t);
    checkInPolicy("remote-renew", 100, Duration.ofMillis(600));
    RemoteConsumers members = boxline.remoteConsumers();
    io.boxline.SubscriptionInfo sub = boxline.admin().subscription("remote-renew").orElseThrow();
    List<String> both = List.of("m1", "m2");
    awaitRenewed(members, sub, both);
    Map<String, Instant> before = deadlines("remote-renew");
    Await.until(WAIT, "renewed again, without a fetch", () -> members.renew(sub, both).size() == 2);
    Map<String, Instant> after = deadlines("remote-renew");
    for (String m : both) {
      assertThat(after.get(m)).as(m + "'s deadline").isAfter(before.get(m));
    }
    members.fetch(sub, "m3", 1, 10);
    assertThat(members.renew(sub, both)).as("the group changed").isEmpty();
    awaitRenewed(members, sub, List.of("m1", "m2", "m3"));
  }

  /**
   * A member that joined while another held every partition, and waits with nothing to do, is not
   * renewed past a partition the other gave up at its next check-in: it checks in and takes it,
   * although no log grew.
   */
  @Test
  void aPartitionAnotherMemberGaveUpReachesAWaitingMemberThatIsRenewed() {
    TopicName t = topic(boxline, "acme/remote/handover", 4);
    subscribe(boxline, "remote-handover", t);
    checkInPolicy("remote-handover", 100, Duration.ofMillis(300));
    for (int i = 0; i < 200; i++) {
      publish(t, "k" + i, "e" + i);
    }
    SuiteSupport.awaitSequenced(boxline, "remote-handover", 200);
    RemoteConsumers members = boxline.remoteConsumers();
    io.boxline.SubscriptionInfo sub = boxline.admin().subscription("remote-handover").orElseThrow();
    // a alone takes all four partitions; b joins while a holds them and gets nothing.
    assertThat(members.fetch(sub, "a", 1, 1).partitions()).hasSize(4);
    assertThat(members.fetch(sub, "b", 1, 10).deliveries()).isEmpty();
    Set<Integer> bGot = new HashSet<>();
    Await.until(
        WAIT,
        "b takes the partitions a gave up",
        () -> {
          // a goes on one event at a time, settling each: a check-in of its gives up half.
          List<Settlement> done = new ArrayList<>();
          for (Delivery d : members.fetch(sub, "a", 1, 1).deliveries()) {
            done.add(Settlement.done(d.ackId()));
          }
          settleUnlessFenced(members, sub, "a", done);
          // b waits as a long poll does: renewed while nothing changed for it, fetching quietly.
          members.renew(sub, List.of("b"));
          List<Settlement> mine = new ArrayList<>();
          for (Delivery d : members.fetch(sub, "b", 1, 10).deliveries()) {
            bGot.add(d.event().partition());
            mine.add(Settlement.done(d.ackId()));
          }
          settleUnlessFenced(members, sub, "b", mine);
          return !bGot.isEmpty();
        });
    assertThat(boxline.admin().group("remote-handover").members()).hasSize(2);
  }

  /** Settles; a partition that moved meanwhile is the next owner's (its events come again). */
  private static void settleUnlessFenced(
      RemoteConsumers members,
      io.boxline.SubscriptionInfo sub,
      String member,
      List<Settlement> settlements) {
    if (settlements.isEmpty()) {
      return;
    }
    try {
      members.settle(sub, member, settlements);
    } catch (FencedException moved) {
      // expected now and then while the partitions move
    }
  }

  /** Fetches (a check-in when due) until one renewal takes all of {@code ids} together. */
  private static void awaitRenewed(
      RemoteConsumers members, io.boxline.SubscriptionInfo sub, List<String> ids) {
    Await.until(
        WAIT,
        ids + " renewed together",
        () -> {
          ids.forEach(m -> members.fetch(sub, m, 1, 10));
          Map<String, Duration> renewed = members.renew(sub, ids);
          assertThat(renewed.values()).allMatch(d -> d.equals(Duration.ofMillis(600)));
          return renewed.keySet().equals(Set.copyOf(ids));
        });
  }

  private Map<String, Instant> deadlines(String subscription) {
    Map<String, Instant> out = new HashMap<>();
    boxline.admin().group(subscription).members().forEach(m -> out.put(m.id(), m.deadline()));
    return out;
  }

  /**
   * A settle of two partitions after one of them moved to another member: that one is refused and
   * named, and the other is settled, not held back by it.
   */
  @Test
  void aSettleRefusesOnlyThePartitionsTheMemberLostAndSettlesTheRest() {
    TopicName t = topic(boxline, "acme/remote/partly", 4);
    subscribe(boxline, "remote-partly", t);
    for (int i = 0; i < 16; i++) {
      publish(t, "k" + i, Integer.toString(i));
    }
    SuiteSupport.awaitSequenced(boxline, "remote-partly", 16);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Delivery> first = fetchUntil(members, "remote-partly", 16);
    Map<Integer, Long> fetched = new HashMap<>();
    first.forEach(d -> fetched.merge(d.event().partition(), 1L, Long::sum));
    assertThat(fetched).as("the sixteen keys land on every partition").hasSize(4);
    Set<Integer> toR2 = new HashSet<>();
    Await.until(
        WAIT,
        "r2 takes partitions from r1",
        () -> {
          members.fetch("remote-partly", "r1", 1, 100); // gives up r1's share beyond its own
          members
              .fetch("remote-partly", "r2", 1, 100)
              .deliveries()
              .forEach(d -> toR2.add(d.event().partition()));
          return !toR2.isEmpty();
        });
    List<Settlement> all = new ArrayList<>();
    first.forEach(d -> all.add(Settlement.done(d.ackId())));
    Throwable thrown =
        org.assertj.core.api.Assertions.catchThrowable(
            () -> members.settle("remote-partly", "r1", all));
    assertThat(thrown)
        .as("r1 lost some partitions")
        .isInstanceOf(io.boxline.PartitionsFencedException.class);
    io.boxline.PartitionsFencedException refusal = (io.boxline.PartitionsFencedException) thrown;
    Set<Integer> refused = new HashSet<>();
    refusal.refused().forEach(p -> refused.add(p.partition()));
    assertThat(refusal.refused()).allSatisfy(p -> assertThat(p.topic()).isEqualTo(t));
    assertThat(refused).containsAll(toR2).hasSizeLessThan(4);
    long kept = 0;
    for (PartitionLag l : boxline.admin().lag("remote-partly")) {
      long expected = refused.contains(l.partition()) ? 0 : fetched.get(l.partition());
      kept += expected;
      assertThat(l.position()).as("partition %d", l.partition()).isEqualTo(expected);
    }
    assertThat(refusal.settled()).isEqualTo((int) kept);
    assertThat(refusal.getMessage())
        .contains("fetch again")
        .contains(kept + " events of the other partitions were settled");
  }

  /**
   * A fetch gives out a key's due retry and leaves out its new event between two others; settling
   * the retry done and the others is accepted, and the left-out event comes next, after the retry.
   */
  @Test
  void aKeysNewEventLeftOutBehindItsRetryComesAfterIt() {
    TopicName t = topic(boxline, "acme/remote/behind", 1);
    subscribe(boxline, "remote-behind", t);
    publish(t, "a", "a1");
    publish(t, "b", "b1");
    SuiteSupport.awaitSequenced(boxline, "remote-behind", 2);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Delivery> first = fetchUntil(members, "remote-behind", 2);
    members.settle(
        "remote-behind",
        "r1",
        List.of(
            new Settlement(first.get(0).ackId(), Outcome.RETRY, Duration.ofMillis(1), "later"),
            Settlement.done(first.get(1).ackId())));
    publish(t, "b", "b2");
    publish(t, "a", "a2");
    publish(t, "b", "b3");
    SuiteSupport.awaitSequenced(boxline, "remote-behind", 5);
    List<Delivery> second = fetchUntil(members, "remote-behind", 3);
    assertThat(second).extracting(d -> body(d.event())).containsExactly("a1", "b2", "b3");
    assertThat(second.get(0).attempt()).isEqualTo(2);
    List<Settlement> all = new ArrayList<>();
    second.forEach(d -> all.add(Settlement.done(d.ackId())));
    assertThat(members.settle("remote-behind", "r1", all)).isEqualTo(3);
    List<Delivery> third = fetchUntil(members, "remote-behind", 1);
    assertThat(third).extracting(d -> body(d.event())).containsExactly("a2");
    members.settle("remote-behind", "r1", List.of(Settlement.done(third.get(0).ackId())));
    SuiteSupport.awaitCaughtUp(boxline, "remote-behind");
  }

  /**
   * One policy for every kind of member: a remote member's RETRY counts as a failed attempt under
   * the subscription's {@link MemberPolicy} (its per-type policy where one is set), the hooks and
   * observers see each failure, retry and dead letter as for a Java consumer, and the key's later
   * event waits behind the retries and goes on once its predecessor is dead-lettered.
   */
  @Test
  void remoteMembersRetryAndDeadLetterByTheSubscriptionsPolicyWithHooksAndObservers() {
    List<String> seen = new CopyOnWriteArrayList<>();
    RetryPolicy quick =
        RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
            .inPlaceAttempts(1)
            .jitter(0);
    Boxline b =
        db.boxline(
            x ->
                x.memberPolicy(
                        "remote-policy",
                        MemberPolicy.builder()
                            .retryPolicy(quick.maxAttempts(2))
                            .retryPolicy("slow.type", quick.maxAttempts(3))
                            .hooks(
                                new ConsumerHooks() {
                                  @Override
                                  public void onError(
                                      Event e, RuntimeException error, int attempt) {
                                    seen.add(
                                        "error "
                                            + body(e)
                                            + " "
                                            + attempt
                                            + " "
                                            + error.getMessage());
                                  }

                                  @Override
                                  public void onDeadLetter(Event e, String reason) {
                                    seen.add("dead " + body(e) + " " + reason);
                                  }
                                })
                            .build())
                    .observer(
                        new BoxlineObserver() {
                          @Override
                          public void retrying(
                              String subscription, Event e, int attempt, Instant next) {
                            seen.add("retrying " + subscription + " " + body(e) + " " + attempt);
                          }

                          @Override
                          public void deadLettered(String subscription, Event e, String reason) {
                            seen.add("observed dead " + subscription + " " + body(e));
                          }
                        }));
    TopicName t = topic(b, "acme/remote/policy", 1);
    subscribe(b, "remote-policy", t);
    b.inTransaction(
        tx -> {
          b.publisher().publish(tx, SuiteSupport.raw(t, "k1", "a"));
          b.publisher()
              .publish(
                  tx,
                  OutgoingEvent.builder(t)
                      .type("slow.type")
                      .key("k2")
                      .payload("s".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                      .build());
          return b.publisher().publish(tx, SuiteSupport.raw(t, "k1", "c"));
        });
    SuiteSupport.awaitSequenced(b, "remote-policy", 3);
    RemoteConsumers members = b.remoteConsumers();
    Map<String, List<Integer>> attempts = new java.util.concurrent.ConcurrentHashMap<>();
    Await.until(
        WAIT,
        "c handled, a and s dead-lettered",
        () -> {
          List<Settlement> settle = new ArrayList<>();
          Set<String> retrying = new HashSet<>();
          for (Delivery d : members.fetch("remote-policy", "r1", 1, 10).deliveries()) {
            String body = body(d.event());
            if (!retrying.add(d.event().key())) {
              continue; // behind a retry of its key: left out, delivered after it
            }
            attempts.computeIfAbsent(body, k -> new CopyOnWriteArrayList<>()).add(d.attempt());
            settle.add(
                body.equals("c")
                    ? Settlement.done(d.ackId())
                    : new Settlement(d.ackId(), Outcome.RETRY, null, "failing " + body));
          }
          if (!settle.isEmpty()) {
            members.settle("remote-policy", "r1", settle);
          }
          return attempts.containsKey("c")
              && b.deadLetters().list(DeadLetterQuery.of("remote-policy")).size() == 2;
        });
    assertThat(attempts.get("a")).containsExactly(1, 2);
    assertThat(attempts.get("s")).containsExactly(1, 2, 3);
    assertThat(attempts.get("c")).containsExactly(1);
    Map<String, Integer> deadAttempts = new HashMap<>();
    for (io.boxline.DeadLetter d : b.deadLetters().list(DeadLetterQuery.of("remote-policy"))) {
      deadAttempts.put(body(d.event()), d.attempts());
      assertThat(d.lastError()).isEqualTo("failing " + body(d.event()));
    }
    assertThat(deadAttempts).containsExactlyInAnyOrderEntriesOf(Map.of("a", 2, "s", 3));
    assertThat(seen)
        .contains(
            "error a 1 failing a",
            "error a 2 failing a",
            "retrying remote-policy a 1",
            "dead a failing a",
            "observed dead remote-policy a",
            "retrying remote-policy s 2",
            "dead s failing s",
            "observed dead remote-policy s")
        .doesNotContain("retrying remote-policy a 2", "retrying remote-policy s 3");
    SuiteSupport.awaitCaughtUp(b, "remote-policy");
  }

  /**
   * With {@code deadLetterBlocksKey}, a remote member's dead letter holds its key's later events
   * (other keys flow) until it is redriven and handled.
   */
  @Test
  void aRemoteMembersBlockingDeadLetterHoldsItsKeyUntilRedriven() {
    Boxline b =
        db.boxline(
            x ->
                x.memberPolicy(
                    "remote-blocking", MemberPolicy.builder().deadLetterBlocksKey(true).build()));
    TopicName t = topic(b, "acme/remote/blocking", 1);
    subscribe(b, "remote-blocking", t);
    b.inTransaction(
        tx -> {
          b.publisher().publish(tx, SuiteSupport.raw(t, "k", "x"));
          b.publisher().publish(tx, SuiteSupport.raw(t, "k", "y"));
          return b.publisher().publish(tx, SuiteSupport.raw(t, "other", "z"));
        });
    SuiteSupport.awaitSequenced(b, "remote-blocking", 3);
    RemoteConsumers members = b.remoteConsumers();
    List<Delivery> first = fetchUntil(members, "remote-blocking", 3);
    assertThat(first).extracting(d -> body(d.event())).containsExactly("x", "y", "z");
    // x is dead-lettered; y is left out (behind x), z is handled.
    members.settle(
        "remote-blocking",
        "r1",
        List.of(
            new Settlement(first.get(0).ackId(), Outcome.DEAD, null, "poison"),
            Settlement.done(first.get(2).ackId())));
    assertThat(members.fetch("remote-blocking", "r1", 1, 10).deliveries()).isEmpty();
    assertThat(b.deadLetters().redrive(DeadLetterQuery.of("remote-blocking"))).isEqualTo(1);
    List<Delivery> again = fetchUntil(members, "remote-blocking", 1);
    assertThat(again).extracting(d -> body(d.event())).containsExactly("x");
    members.settle("remote-blocking", "r1", List.of(Settlement.done(again.get(0).ackId())));
    List<Delivery> last = fetchUntil(members, "remote-blocking", 1);
    assertThat(last).extracting(d -> body(d.event())).containsExactly("y");
    members.settle("remote-blocking", "r1", List.of(Settlement.done(last.get(0).ackId())));
    SuiteSupport.awaitCaughtUp(b, "remote-blocking");
  }

  /**
   * A member whose fetches found nothing reads nothing until something changes; a dead letter
   * redriven through another instance is such a change: it reaches the member within seconds, not
   * at its next check-in (a minute away here).
   */
  @Test
  void aDeadLetterRedrivenElsewhereReachesAMemberWhoseFetchesFoundNothing() {
    TopicName t = topic(boxline, "acme/remote/redrive", 1);
    subscribe(boxline, "remote-redrive", t);
    checkInPolicy("remote-redrive", 100, Duration.ofMinutes(1));
    Boxline other = db.boxline(b -> b);
    publish(t, "k", "x");
    SuiteSupport.awaitSequenced(boxline, "remote-redrive", 1);
    RemoteConsumers members = boxline.remoteConsumers();
    List<Delivery> got = fetchUntil(members, "remote-redrive", 1);
    members.settle(
        "remote-redrive",
        "r1",
        List.of(new Settlement(got.get(0).ackId(), Outcome.DEAD, null, "poison")));
    for (int i = 0; i < 3; i++) {
      RemoteConsumers.Batch quiet = members.fetch("remote-redrive", "r1", 1, 10);
      assertThat(quiet.deliveries()).isEmpty();
      assertThat(quiet.checkInWithin()).as("no check-in due soon").isGreaterThan(WAIT);
    }
    assertThat(other.deadLetters().redrive(DeadLetterQuery.of("remote-redrive"))).isEqualTo(1);
    List<Delivery> again = new ArrayList<>();
    Await.until(
        Duration.ofSeconds(10),
        "the redriven event reaches r1",
        () -> again.addAll(members.fetch("remote-redrive", "r1", 1, 10).deliveries()));
    assertThat(again).extracting(d -> body(d.event())).containsExactly("x");
  }

  private static List<Delivery> fetchUntil(RemoteConsumers members, String subscription, int n) {
    return fetchUntil(members, subscription, "r1", 100, n);
  }

  /** Fetches until one fetch gives at least {@code n} events (sequencing and leases take time). */
  private static List<Delivery> fetchUntil(
      RemoteConsumers members, String subscription, String member, int max, int n) {
    List<Delivery> got = new ArrayList<>();
    Await.until(
        WAIT,
        member + " fetches " + n + " events of " + subscription,
        () -> {
          got.clear();
          got.addAll(members.fetch(subscription, member, 1, max).deliveries());
          return got.size() >= n;
        });
    return got;
  }
}
