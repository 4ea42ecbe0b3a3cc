package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.fault.FaultFixture.Part;
import io.boxline.testkit.fault.GroupFaults.CursorRow;
import io.boxline.testkit.fault.GroupFaults.Delivery;
import io.boxline.testkit.fault.GroupFaults.LeaseRow;
import io.boxline.testkit.process.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
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
 * A consumer process is frozen with SIGSTOP in the middle of a batch (a stop-the-world pause, a
 * stalled VM) while another member of its group stands by. Contract (fencing, contract point 5):
 * once the frozen member's deadline passes the other one takes the partition with a newer epoch,
 * copies that epoch onto the cursor and delivers from the committed cursor; when the frozen member
 * wakes up (SIGCONT) and finishes its batch, its cursor commit is rejected, the cursor never moves
 * back, and the partition stays with the new owner. Duplicates are only the frozen member's
 * in-flight batch.
 *
 * <p>Topology: the test JVM sets the group policy, runs the sequencer and publishes; the topic has
 * one partition. Member {@code a} blocks its handler after recording a marker event (so its batch
 * is provably in flight), and is frozen there; member {@code b} is a second child process.
 */
class GroupFencingSigstopTest {
  private static final int BATCH = 50;
  private static final int CONCURRENCY = 2;
  private static final String SUBSCRIPTION = "group-fence";

  /** Events before the marker: the marker is the 26th event of A's 7th batch (seqs 301..350). */
  private static final int BEFORE_MARKER = 325;

  private static final int AFTER_MARKER = 100;
  private static final int DURING_FREEZE = 150;
  private static final int AFTER_RESUME = 40;

  /** No idle release while the test looks at who holds the lease. */
  private static final GroupPolicy POLICY =
      GroupFaults.POLICY.withIdleRelease(Duration.ofSeconds(120));

  private GroupFaults g;

  @BeforeEach
  void setUp() {
    g = GroupFaults.create("groupfence");
  }

  @AfterEach
  void tearDown() {
    g.close();
  }

  @Test
  @Timeout(90)
  void frozenMembersStaleCommitIsRejectedAfterTakeover() throws IOException {
    FaultFixture fx = g.fx();
    TopicName topic = TopicName.of("fault/fence", "orders");
    Boxline boxline = fx.db().boxline(b -> b.instanceId("parent-sequencer"));
    boxline.admin().createNamespace(NamespacePath.of("fault/fence"));
    boxline.admin().createTopic(topic, 1);
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    boxline.admin().setDefaultGroupPolicy(POLICY);
    g.createHandledTable();
    Path gate = ChildJvm.logDirectory().resolve(fx.schema() + "-gate");
    Files.deleteIfExists(gate);

    // The whole first backlog is in the log before A starts, so A's batches are exactly
    // 1..50, 51..100, ...: the marker (seq 326) sits in the batch 301..350.
    Set<UUID> published = new HashSet<>();
    published.addAll(Publishing.wave(boxline, List.of(topic), BEFORE_MARKER, 25, "before"));
    UUID marker = publishMarker(boxline, topic);
    published.add(marker);
    published.addAll(Publishing.wave(boxline, List.of(topic), AFTER_MARKER, 25, "after"));
    int firstBacklog = BEFORE_MARKER + 1 + AFTER_MARKER;
    Await.until(
        Duration.ofSeconds(30), "first backlog in the log", fx::logCount, n -> n == firstBacklog);
    assertThat(published).hasSize(firstBacklog);
    long markerSeq = BEFORE_MARKER + 1;
    long batchStart = markerSeq - (markerSeq - 1) % BATCH; // 301
    long batchEnd = batchStart + BATCH - 1; // 350

    ChildJvm a =
        g.startMember(
            "a", 1, SUBSCRIPTION, BATCH, CONCURRENCY, "--blockType=fault.marker", "--gate=" + gate);
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "a handles up to the marker and blocks in its batch",
        a,
        () -> g.handledCount("a", 1) >= markerSeq);
    a.awaitOutput(Duration.ofSeconds(5), "BLOCKED on event " + marker);
    Part part = g.cursorRows(SUBSCRIPTION).keySet().iterator().next();
    CursorRow cursorOfA = g.cursorRows(SUBSCRIPTION).get(part);
    LeaseRow leaseOfA = g.leases(SUBSCRIPTION).get(part);
    assertThat(leaseOfA.owner()).as("lease owner while a is in its batch").isEqualTo("a");
    assertThat(cursorOfA.owner()).as("cursor owner while a is in its batch").isEqualTo("a");
    assertThat(cursorOfA.epoch()).as("cursor epoch = a's lease epoch").isEqualTo(leaseOfA.epoch());
    assertThat(cursorOfA.position())
        .as("a's committed cursor: the batches before the marker's")
        .isEqualTo(batchStart - 1);
    assertThat(g.handledCount("a", 1)).as("a's deliveries so far").isEqualTo(markerSeq);

    // B joins while a holds the only partition: it gets nothing (a is at its fair share).
    ChildJvm b = g.startMember("b", 1, SUBSCRIPTION, BATCH, CONCURRENCY);
    b.awaitOutput(Duration.ofSeconds(30), "READY");
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(15),
        "b checked in with the group",
        b,
        () -> g.liveMembers(SUBSCRIPTION).equals(Set.of("a", "b")));
    assertThat(g.leases(SUBSCRIPTION).get(part).owner())
        .as("lease owner after b joined")
        .isEqualTo("a");

    // Bound, from the policy (2 members): a's member row expires at most deadline(2) after its last
    // check-in (<= the SIGSTOP); b, the only other member, checks in at least every
    // JITTER × interval(2) and reclaims and takes the partition in that one check-in:
    //   takeover <= deadline(2) + JITTER × interval(2) + LOADED_MACHINE_SLACK,
    // and never before deadline(2) - JITTER × interval(2) (a was alive until the SIGSTOP).
    Duration interval = POLICY.checkInInterval(2);
    Duration deadline = POLICY.deadline(2);
    long boundMillis =
        deadline.toMillis()
            + GroupFaults.times(interval, GroupFaults.JITTER)
            + GroupFaults.LOADED_MACHINE_SLACK.toMillis();
    long floorMillis = deadline.toMillis() - GroupFaults.times(interval, GroupFaults.JITTER) - 100;

    long t0 = System.nanoTime();
    a.pause();
    Await.until(
        Duration.ofMillis(3 * boundMillis),
        "b takes the lease of the frozen a",
        () -> {
          if (!b.isAlive()) {
            throw new AssertionError("b died; its output:\n" + b.tail(80));
          }
          return g.leases(SUBSCRIPTION).get(part);
        },
        l -> "b".equals(l.owner()));
    long takeoverMillis = GroupFaults.millisSince(t0);
    System.out.printf(
        "takeover from SIGSTOPped a: %d ms (bound %d ms = deadline %d + %.1f × interval %d + slack"
            + " %d; floor %d ms)%n",
        takeoverMillis,
        boundMillis,
        deadline.toMillis(),
        GroupFaults.JITTER,
        interval.toMillis(),
        GroupFaults.LOADED_MACHINE_SLACK.toMillis(),
        floorMillis);
    assertThat(takeoverMillis)
        .as("time from SIGSTOP until b owns the lease (ms)")
        .isLessThanOrEqualTo(boundMillis)
        .isGreaterThanOrEqualTo(floorMillis);
    LeaseRow leaseOfB = g.leases(SUBSCRIPTION).get(part);
    assertThat(leaseOfB.epoch()).as("b's lease epoch").isGreaterThan(leaseOfA.epoch());
    Await.until(
        Duration.ofSeconds(10),
        "b copies its lease epoch onto the cursor",
        () -> g.cursorRows(SUBSCRIPTION).get(part),
        c -> c.epoch() == leaseOfB.epoch() && "b".equals(c.owner()));

    // More events while a is frozen; b delivers everything from a's committed cursor on.
    published.addAll(Publishing.wave(boxline, List.of(topic), DURING_FREEZE, 25, "frozen"));
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "b moves the cursor to the partition's last sequence",
        b,
        () -> fx.logCount() == published.size() && fx.caughtUp(SUBSCRIPTION));
    long lastSeq = fx.lastSequences().get(part);
    assertThat(lastSeq).isEqualTo(published.size());
    assertThat(g.handledCount("b", 1))
        .as("b's deliveries: from a's committed cursor + 1 to the last sequence")
        .isEqualTo(lastSeq - cursorOfA.position());
    assertThat(a.isAlive()).as("a is frozen, not dead").isTrue();
    assertThat(g.handledCount("a", 1)).as("a's deliveries while frozen").isEqualTo(markerSeq);

    // Wake a up: its handler returns, it finishes (or abandons) its batch and commits with its old
    // epoch, which must be rejected.
    long beatBefore = g.heartbeatMicros(SUBSCRIPTION, "a");
    Files.writeString(gate, "open", StandardCharsets.UTF_8);
    a.resume();
    a.awaitOutput(Duration.ofSeconds(20), "UNBLOCKED after event " + marker);
    a.awaitOutput(Duration.ofSeconds(20), " fenced=1 ");
    a.awaitOutput(Duration.ofSeconds(5), "LOST [" + topic + "#0]");
    CursorRow afterResume = g.cursorRows(SUBSCRIPTION).get(part);
    assertThat(afterResume)
        .as("cursor after a's stale commit: unchanged, b's")
        .isEqualTo(new CursorRow(part, lastSeq, leaseOfB.epoch(), "b"));

    // a is a live member again (it checks in), but the partition stays with b.
    Await.until(
        Duration.ofSeconds(15),
        "a checks in after waking up",
        () -> g.heartbeatMicros(SUBSCRIPTION, "a"),
        x -> x > beatBefore);
    long firstBeat = g.heartbeatMicros(SUBSCRIPTION, "a");
    Await.until(
        Duration.ofSeconds(15),
        "a checks in again",
        () -> g.heartbeatMicros(SUBSCRIPTION, "a"),
        x -> x > firstBeat);
    assertThat(g.liveMembers(SUBSCRIPTION)).isEqualTo(Set.of("a", "b"));
    LeaseRow leaseAtEnd = g.leases(SUBSCRIPTION).get(part);
    assertThat(leaseAtEnd.owner()).as("lease owner after a woke up").isEqualTo("b");
    assertThat(leaseAtEnd.epoch()).as("lease epoch after a woke up").isEqualTo(leaseOfB.epoch());
    assertThat(g.cursorRows(SUBSCRIPTION).get(part))
        .as("cursor after a woke up")
        .isEqualTo(new CursorRow(part, lastSeq, leaseOfB.epoch(), "b"));

    // New events still go to b only.
    long aBefore = g.handledCount("a", 1);
    published.addAll(Publishing.wave(boxline, List.of(topic), AFTER_RESUME, 20, "resumed"));
    FaultFixture.awaitWhileAlive(
        Duration.ofSeconds(30),
        "b delivers the events published after a woke up",
        b,
        () -> fx.logCount() == published.size() && fx.caughtUp(SUBSCRIPTION));
    assertThat(g.handledCount("a", 1)).as("a's deliveries after the rejection").isEqualTo(aBefore);
    assertThat(g.cursorRows(SUBSCRIPTION).get(part))
        .as("cursor at the end")
        .isEqualTo(new CursorRow(part, published.size(), leaseOfB.epoch(), "b"));

    assertThat(a.stop(Duration.ofSeconds(20))).as("a exit code on graceful stop").isZero();
    assertThat(b.stop(Duration.ofSeconds(20))).as("b exit code on graceful stop").isZero();
    assertThat(a.output())
        .as("a's final line")
        .contains("STOPPED clean=true handled=" + (batchStart - 1) + " fenced=1 lost=1");

    fx.verifyLog(published);
    Map<UUID, List<Delivery>> byEvent = g.verifyDeliveries(published);
    TreeSet<Long> dupSeqs = new TreeSet<>();
    for (List<Delivery> ds : GroupFaults.duplicated(byEvent)) {
      assertThat(ds).as("deliveries of duplicated event").hasSize(2);
      assertThat(ds.stream().map(Delivery::member).sorted().toList())
          .as("members that delivered %s", ds)
          .containsExactly("a", "b");
      dupSeqs.add(ds.get(0).seq());
    }
    Set<Long> mustRepeat = new TreeSet<>();
    for (long s = batchStart; s <= markerSeq; s++) {
      mustRepeat.add(s);
    }
    // At least what a handled of its batch before freezing, at most the whole batch (a may have
    // handled the rest of it after waking, before it noticed the loss).
    assertThat(dupSeqs).as("seqs delivered by both a and b").containsAll(mustRepeat);
    assertThat(dupSeqs)
        .as("seqs delivered by both a and b")
        .allMatch(s -> s >= batchStart && s <= batchEnd);
    assertThat(dupSeqs.size()).isLessThanOrEqualTo(BATCH).isLessThanOrEqualTo(CONCURRENCY * BATCH);
    System.out.printf(
        "published %d; a committed %d and froze at seq %d; duplicates %d (seqs %d..%d; bound %d)%n",
        published.size(),
        cursorOfA.position(),
        markerSeq,
        dupSeqs.size(),
        dupSeqs.first(),
        dupSeqs.last(),
        BATCH);
  }

  private static UUID publishMarker(Boxline boxline, TopicName topic) {
    OutgoingEvent marker =
        OutgoingEvent.builder(topic)
            .type("fault.marker")
            .key("marker")
            .payload("marker".getBytes(StandardCharsets.UTF_8))
            .build();
    List<PublishResult> r =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, List.of(marker)));
    return r.get(0).eventId();
  }
}
