package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BusySubscriptionException;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.FailureCounts;
import io.boxline.GroupState;
import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What an operator sees and cleans up through {@link io.boxline.Admin}: listings, reading the log
 * without a subscription, failure counts, and deleting subscriptions, topics and namespaces.
 */
public abstract class AdminBehaviour extends DatabaseSuite {
  private Boxline boxline;

  @BeforeEach
  void start() {
    boxline = db.boxline(b -> b.retentionInterval(Duration.ofMillis(200)));
  }

  private long logRows() {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM " + db.schema() + ".log")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void everythingCreatedIsListedAndTheLogIsReadWithoutMovingACursor() {
    TopicName t = topic(boxline, "acme/admin/orders", 2);
    subscribe(boxline, "billing", t);
    SuiteSupport.publish(boxline, t, "k", 14);
    SuiteSupport.awaitSequenced(boxline, "billing", 14);

    assertThat(boxline.admin().namespaces())
        .extracting(NamespacePath::toString)
        .contains("acme", "acme/admin");
    assertThat(boxline.admin().subscriptions())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.topics()).containsExactly(t);
              assertThat(s.start()).isEqualTo(io.boxline.StartPosition.earliest());
              assertThat(s.lastActive()).isEqualTo(s.createdAt());
            });
    // Each start position is stored as given and shown by the listing and by name.
    java.time.Instant at = java.time.Instant.parse("2026-01-02T03:04:05.123456Z");
    boxline
        .admin()
        .createSubscription(
            io.boxline.SubscriptionSpec.of("audit", t).startAt(io.boxline.StartPosition.latest()));
    boxline
        .admin()
        .createSubscription(
            io.boxline.SubscriptionSpec.of("replay", t).startAt(io.boxline.StartPosition.at(at)));
    assertThat(boxline.admin().subscriptions())
        .extracting(io.boxline.SubscriptionInfo::name, io.boxline.SubscriptionInfo::start)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("audit", io.boxline.StartPosition.latest()),
            org.assertj.core.groups.Tuple.tuple("billing", io.boxline.StartPosition.earliest()),
            org.assertj.core.groups.Tuple.tuple("replay", io.boxline.StartPosition.at(at)));
    boxline.admin().deleteSubscription("audit", false);
    boxline.admin().deleteSubscription("replay", false);
    io.boxline.TopicState state = boxline.admin().topicState(t);
    assertThat(state.heads()).hasSize(2);
    assertThat(state.events()).isEqualTo(14);
    assertThat(state.retention()).isEqualTo(io.boxline.RetentionPolicy.forever());
    List<Event> all = new java.util.ArrayList<>();
    for (int p = 0; p < 2; p++) {
      all.addAll(boxline.admin().events(EventQuery.of(t, p)));
    }
    assertThat(all).hasSize(14);
    Event some = all.get(3);
    assertThat(boxline.admin().events(EventQuery.of(t, some.partition()).key(some.key()).limit(50)))
        .isNotEmpty()
        .allSatisfy(e -> assertThat(e.key()).isEqualTo(some.key()));
    assertThat(boxline.admin().events(EventQuery.of(t, some.partition()).eventId(some.id())))
        .singleElement()
        .satisfies(e -> assertThat(body(e)).isEqualTo(body(some)));
    assertThat(boxline.admin().event(t, some.partition(), some.sequence()))
        .hasValueSatisfying(e -> assertThat(e.id()).isEqualTo(some.id()));
    assertThat(boxline.admin().event(t, some.partition(), 1_000)).isEmpty();
    assertThat(boxline.admin().events(EventQuery.of(t, some.partition()).after(1).limit(2)))
        .extracting(Event::sequence)
        .containsExactly(2L, 3L);
    assertThatThrownBy(() -> boxline.admin().events(EventQuery.of(t, 2)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("partitions 0 to 1");
    assertThatThrownBy(
            () -> boxline.admin().events(EventQuery.of(TopicName.of("acme/admin", "none"), 0)))
        .isInstanceOf(NotFoundException.class);
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("billing")))
        .as("reading moved no cursor")
        .isZero();
  }

  @Test
  void aSubscriptionWithLiveConsumersIsDeletedOnlyWhenForcedAndItsNameStartsAfresh() {
    TopicName t = topic(boxline, "acme/admin/live", 2);
    subscribe(boxline, "live", t);
    List<String> seen = new CopyOnWriteArrayList<>();
    Consumer c = boxline.consumer("live").handler(e -> seen.add(body(e))).start();
    SuiteSupport.publish(boxline, t, "k", 6);
    Await.until(WAIT, "6 handled", () -> c.handledCount() == 6);

    assertThatThrownBy(() -> boxline.admin().deleteSubscription("live", false))
        .isInstanceOf(BusySubscriptionException.class)
        .hasMessageContaining("live consumers");
    assertThat(boxline.admin().subscription("live")).isPresent();
    assertThat(boxline.admin().deleteSubscription("live", true)).isTrue();
    assertThat(boxline.admin().subscription("live")).isEmpty();
    assertThat(boxline.admin().deleteSubscription("live", true)).isFalse();
    c.close();

    boxline
        .admin()
        .createSubscription(SubscriptionSpec.of("live", t).startAt(StartPosition.earliest()));
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("live")))
        .as("a subscription created again under the name starts afresh")
        .isZero();
    List<String> again = new CopyOnWriteArrayList<>();
    boxline.consumer("live").handler(e -> again.add(body(e))).start();
    Await.until(WAIT, "the 6 events again", () -> again.size() == 6);
    assertThat(again).containsExactlyInAnyOrderElementsOf(seen);
  }

  @Test
  void aSubscriptionRenamedIntoANamespaceKeepsItsCursorsAndPolicy() {
    TopicName t = topic(boxline, "acme/admin/moved", 2);
    subscribe(boxline, "moved", t);
    io.boxline.GroupPolicy policy = io.boxline.GroupPolicy.DEFAULT.withBatchSize(7);
    boxline.admin().setGroupPolicy("moved", policy);
    List<String> seen = new CopyOnWriteArrayList<>();
    Consumer c = boxline.consumer("moved").handler(e -> seen.add(body(e))).start();
    SuiteSupport.publish(boxline, t, "k", 6);
    Await.until(WAIT, "6 handled", () -> c.handledCount() == 6);
    long id = boxline.admin().subscription("moved").orElseThrow().id();

    assertThatThrownBy(() -> boxline.admin().renameSubscription("moved", "acme/moved"))
        .isInstanceOf(BusySubscriptionException.class)
        .hasMessageContaining("live consumers");
    c.close();
    Await.until(
        WAIT, "the consumer left", () -> boxline.admin().group("moved").members().isEmpty());
    assertThat(boxline.admin().renameSubscription("moved", "acme/moved").name())
        .isEqualTo("acme/moved");

    assertThat(boxline.admin().subscription("moved")).isEmpty();
    assertThat(boxline.admin().subscription("acme/moved").orElseThrow().id()).isEqualTo(id);
    assertThat(SuiteSupport.totalPosition(boxline.admin().lag("acme/moved"))).isEqualTo(6);
    assertThat(boxline.admin().groupPolicy("acme/moved")).isEqualTo(policy);
    SuiteSupport.publish(boxline, t, "n", 3);
    List<String> after = new CopyOnWriteArrayList<>();
    boxline.consumer("acme/moved").handler(e -> after.add(body(e))).start();
    Await.until(WAIT, "the 3 new events under the new name", () -> after.size() == 3);
    assertThat(after).doesNotContainAnyElementsOf(seen);

    subscribe(boxline, "other", t);
    assertThatThrownBy(() -> boxline.admin().renameSubscription("other", "acme/moved"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("exists already");
    assertThatThrownBy(() -> boxline.admin().renameSubscription("nothing", "acme/x"))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> boxline.admin().renameSubscription("other", "acme//x"))
        .isInstanceOf(ValidationException.class);
  }

  @Test
  void anAbandonedSubscriptionStopsHoldingRetentionBackOnceDeleted() {
    TopicName t = topic(boxline, "acme/admin/kept", 1);
    subscribe(boxline, "abandoned", t);
    boxline.admin().setRetention(t, RetentionPolicy.byAge(Duration.ofMillis(200)));
    SuiteSupport.publish(boxline, t, "k", 5);
    SuiteSupport.awaitSequenced(boxline, "abandoned", 5);
    Await.until(
        WAIT,
        "retention runs after the events aged",
        () -> boxline.stats().retentionRuns() >= 3 && olderThanOneSecond() == 5);
    assertThat(logRows()).as("kept for the subscription that has not read them").isEqualTo(5);

    assertThat(boxline.admin().deleteSubscription("abandoned", false)).isTrue();
    Await.until(WAIT, "the log purged", () -> logRows() == 0);
  }

  private long olderThanOneSecond() {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM "
                    + db.schema()
                    + ".log WHERE "
                    + db.olderThanSeconds("created_at", 1))) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aTopicReadBySubscriptionsIsDeletedOnlyWhenForcedAndCanBeCreatedAgain() {
    TopicName t = topic(boxline, "acme/admin/gone", 2);
    TopicName kept = topic(boxline, "acme/admin/kept", 1);
    subscribe(boxline, "reader", t, kept);
    SuiteSupport.publish(boxline, t, "k", 4);
    SuiteSupport.awaitSequenced(boxline, "reader", 4);

    assertThatThrownBy(() -> boxline.admin().deleteTopic(t, false))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("[reader]");
    assertThat(boxline.admin().deleteTopic(t, true)).isTrue();
    assertThat(boxline.admin().topic(t)).isEmpty();
    assertThat(boxline.admin().subscription("reader").orElseThrow().topics()).containsExactly(kept);
    assertThat(logRows()).isZero();
    assertThatThrownBy(() -> boxline.admin().events(EventQuery.of(t, 0)))
        .isInstanceOf(NotFoundException.class);
    assertThat(boxline.admin().deleteTopic(t, true)).isFalse();

    topic(boxline, "acme/admin/gone", 3);
    SuiteSupport.Recorder fresh = SuiteSupport.record(boxline, "fresh", t);
    SuiteSupport.publish(boxline, t, "n", 3);
    Await.until(WAIT, "events on the topic created again", () -> fresh.size() == 3);
    assertThatThrownBy(() -> boxline.admin().deleteNamespace(NamespacePath.of("acme/admin")))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("not empty");
  }

  @Test
  void failureCountsShowWhatEachSubscriptionSetAside() {
    TopicName t = topic(boxline, "acme/admin/fail", 1);
    subscribe(boxline, "picky", t);
    assertThat(boxline.admin().failures("picky")).isEqualTo(FailureCounts.none("picky"));
    boxline
        .consumer("picky")
        .retryPolicy(
            RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                .inPlaceAttempts(1)
                .maxAttempts(2)
                .jitter(0))
        .handler(
            e -> {
              if (body(e).startsWith("bad")) {
                throw new IllegalStateException("no");
              }
            })
        .start();
    boxline.inTransaction(tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "a", "bad-1")));
    boxline.inTransaction(
        tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, "b", "good-1")));
    Await.until(
        WAIT, "one dead letter", () -> boxline.admin().failures("picky").deadLetters() == 1);
    assertThat(boxline.admin().failures()).containsExactly(new FailureCounts("picky", 0, 0, 1));
    assertThat(boxline.admin().inboxSize("picky")).isZero();
    assertThat(boxline.admin().retrying("picky", 100)).as("nothing waits any more").isEmpty();
    assertThatThrownBy(() -> boxline.admin().retrying("picky", 0))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("between 1 and 10000");
    assertThatThrownBy(() -> boxline.admin().failures("nobody"))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void retriesAndDeadLettersArePagedInLogOrder() {
    TopicName t = topic(boxline, "acme/admin/pages", 3);
    subscribe(boxline, "paged", t);
    // Keys "r…" fail until their retry in an hour; keys "d…" go straight to the dead letters.
    Consumer c =
        boxline
            .consumer("paged")
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofHours(1), Duration.ofHours(1))
                    .inPlaceAttempts(1)
                    .maxAttempts(5)
                    .jitter(0))
            .retryPolicy(
                "doomed",
                RetryPolicy.exponential(Duration.ofMillis(1), Duration.ofMillis(1))
                    .inPlaceAttempts(1)
                    .maxAttempts(1))
            .handler(
                e -> {
                  throw new IllegalStateException("no " + e.key());
                })
            .start();
    for (int i = 0; i < 7; i++) {
      int n = i;
      boxline.inTransaction(
          tx -> {
            boxline.publisher().publish(tx, SuiteSupport.raw(t, "r" + n, "later"));
            boxline
                .publisher()
                .publish(
                    tx,
                    io.boxline.OutgoingEvent.builder(t)
                        .key("d" + n)
                        .type("doomed")
                        .payload("x".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                        .build());
            return null;
          });
    }
    Await.until(
        WAIT,
        "7 retrying and 7 dead",
        () ->
            boxline.admin().failures("paged").retrying() == 7
                && boxline.admin().failures("paged").deadLetters() == 7);

    List<io.boxline.RetryingEvent> all = boxline.admin().retrying("paged", 100);
    List<io.boxline.RetryingEvent> paged = new java.util.ArrayList<>();
    io.boxline.EventPosition after = null;
    for (int page = 0; page < 10; page++) {
      List<io.boxline.RetryingEvent> p = boxline.admin().retrying("paged", after, 3);
      if (p.isEmpty()) {
        break;
      }
      assertThat(p.size()).isLessThanOrEqualTo(3);
      paged.addAll(p);
      after = io.boxline.EventPosition.of(p.get(p.size() - 1).event());
    }
    assertThat(all).hasSize(7).allSatisfy(r -> assertThat(r.lastError()).contains("no r"));
    // (events carry byte arrays, so they are compared by id)
    assertThat(paged).extracting(r -> r.event().id()).isEqualTo(ids(all, r -> r.event().id()));
    assertThat(all.stream().map(r -> io.boxline.EventPosition.of(r.event())).toList())
        .isSortedAccordingTo(
            java.util.Comparator.comparing((io.boxline.EventPosition x) -> x.partition())
                .thenComparingLong(io.boxline.EventPosition::sequence));

    io.boxline.DeadLetterQuery q = io.boxline.DeadLetterQuery.of("paged").limit(2);
    List<io.boxline.DeadLetter> dead = new java.util.ArrayList<>();
    for (List<io.boxline.DeadLetter> p = boxline.deadLetters().list(q);
        !p.isEmpty();
        p =
            boxline
                .deadLetters()
                .list(q.after(io.boxline.EventPosition.of(p.get(p.size() - 1).event())))) {
      assertThat(p.size()).isLessThanOrEqualTo(2);
      dead.addAll(p);
    }
    assertThat(dead)
        .extracting(d -> d.event().id())
        .isEqualTo(
            ids(
                boxline.deadLetters().list(io.boxline.DeadLetterQuery.of("paged")),
                d -> d.event().id()));
    assertThat(dead).hasSize(7).allSatisfy(d -> assertThat(d.event().key()).startsWith("d"));
    c.close();
  }

  private static <T> List<java.util.UUID> ids(
      List<T> items, java.util.function.Function<T, java.util.UUID> id) {
    return items.stream().map(id).toList();
  }

  @Test
  void theGroupShowsMembersLeasesAndLagPerPartition() {
    TopicName t = topic(boxline, "acme/admin/group", 4);
    subscribe(boxline, "workers", t);
    SuiteSupport.publish(boxline, t, "k", 8);
    SuiteSupport.awaitSequenced(boxline, "workers", 8);
    GroupState idle = boxline.admin().group("workers");
    assertThat(idle.members()).isEmpty();
    assertThat(idle.partitions()).hasSize(4).allSatisfy(p -> assertThat(p.owner()).isNull());
    assertThat(idle.partitions().stream().mapToLong(p -> p.lag().backlog()).sum()).isEqualTo(8);

    // Handlers that wait keep every partition leased (idle partitions are released after a while).
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Consumer c =
        boxline
            .consumer("workers")
            .concurrency(4)
            .handler(e -> SuiteSupport.awaitRelease(release))
            .start();
    for (int p = 0; p < 4; p++) {
      String key = SuiteSupport.keyFor(p, 4);
      boxline.inTransaction(
          tx -> boxline.publisher().publish(tx, SuiteSupport.raw(t, key, "held")));
    }
    Await.until(
        WAIT,
        "the consumer holds every partition",
        () ->
            boxline.admin().group("workers").partitions().stream()
                .allMatch(p -> c.id().equals(p.owner())));
    GroupState busy = boxline.admin().group("workers");
    assertThat(busy.members())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.id()).isEqualTo(c.id());
              assertThat(m.leases()).isEqualTo(4);
              assertThat(m.lastCheckIn()).isNotNull();
              assertThat(m.deadline()).isAfter(m.lastCheckIn());
            });
    assertThat(busy.partitions()).allSatisfy(p -> assertThat(p.epoch()).isPositive());
    assertThat(busy.policy()).isEqualTo(boxline.admin().groupPolicy("workers"));

    // Each check-in reports where the member runs and its handler calls in progress: here one
    // blocked call per partition, the oldest of each partition's events.
    Await.until(
        WAIT,
        "the member reports a call in progress on every partition",
        () ->
            boxline.admin().group("workers").members().stream()
                    .flatMap(m -> m.inFlight().stream())
                    .map(GroupState.InFlight::partition)
                    .distinct()
                    .count()
                == 4);
    GroupState.Member reported = boxline.admin().group("workers").members().get(0);
    assertThat(reported.process())
        .isEqualTo(ProcessHandle.current().pid() + "@" + reported.host())
        .isNotBlank();
    Map<Integer, Long> lowest = new java.util.HashMap<>();
    for (GroupState.Partition p : boxline.admin().group("workers").partitions()) {
      lowest.put(p.lag().partition(), p.lag().position() + 1);
    }
    assertThat(reported.inFlight())
        .hasSize(4)
        .allSatisfy(
            f -> {
              assertThat(f.topic()).isEqualTo(t);
              assertThat(f.events()).isEqualTo(1);
              assertThat(f.toSequence()).isEqualTo(f.fromSequence());
              assertThat(f.fromSequence()).isEqualTo(lowest.get(f.partition()));
              assertThat(f.startedAt()).isBeforeOrEqualTo(java.time.Instant.now());
            });
    release.countDown();
    Await.until(WAIT, "all handled", () -> c.handledCount() == 12);
    c.close();
  }
}
