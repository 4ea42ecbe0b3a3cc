package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.spi.CommitOutcome;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CursorCommitterTest {
  private final ExecutorService workers = Executors.newCachedThreadPool();

  @AfterEach
  void stopWorkers() throws InterruptedException {
    workers.shutdownNow();
    assertThat(workers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  private static Settlement move(int partition, long position) {
    return Settlement.move(PartitionKey.of(1, partition), 1, position - 1, position);
  }

  /** A store double: records each call's moves; the first call waits for {@code release}. */
  private static final class Calls {
    final List<List<Settlement>> calls = new CopyOnWriteArrayList<>();
    final CountDownLatch firstEntered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final Map<PartitionKey, CommitOutcome> outcomes = new ConcurrentHashMap<>();

    List<CommitOutcome> commit(List<Settlement> moves) {
      calls.add(List.copyOf(moves));
      if (calls.size() == 1) {
        firstEntered.countDown();
        try {
          assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      }
      List<CommitOutcome> out = new ArrayList<>();
      for (Settlement m : moves) {
        out.add(outcomes.getOrDefault(m.partition(), CommitOutcome.COMMITTED));
      }
      return out;
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("timed out waiting for " + what).isLessThan(deadline);
      Thread.sleep(1);
    }
  }

  @Test
  void aLoneMoveCommitsAtOnceInItsOwnCall() {
    Calls store = new Calls();
    store.release.countDown();
    CursorCommitter committer = new CursorCommitter(store::commit);

    assertThat(committer.commit(move(0, 5))).isEqualTo(CommitOutcome.COMMITTED);

    assertThat(store.calls).containsExactly(List.of(move(0, 5)));
    assertThat(committer.calls()).isEqualTo(1);
    assertThat(committer.moves()).isEqualTo(1);
  }

  /**
   * The consumers of one instance: the moves of several subscriptions waiting at one moment go in
   * one call, in subscription, topic and partition order; the same partition of two subscriptions
   * is two cursors, so both go.
   */
  @Test
  void lanesOfSeveralSubscriptionsCommitInOneCall() throws Exception {
    List<List<io.boxline.spi.SubscriptionSettlement>> calls = new CopyOnWriteArrayList<>();
    CountDownLatch firstEntered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CursorCommitter committer =
        CursorCommitter.across(
            all -> {
              calls.add(List.copyOf(all));
              if (calls.size() == 1) {
                firstEntered.countDown();
                try {
                  assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              }
              List<CommitOutcome> out = new ArrayList<>();
              all.forEach(m -> out.add(CommitOutcome.COMMITTED));
              return out;
            },
            new AtomicLong(),
            new AtomicLong());
    CursorCommitter.Lane seven = committer.lane(7);
    CursorCommitter.Lane three = committer.lane(3);
    Future<CommitOutcome> first = workers.submit(() -> seven.commit(move(0, 1), null));
    assertThat(firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    List<Future<CommitOutcome>> later = new ArrayList<>();
    later.add(workers.submit(() -> seven.commit(move(2, 5), null)));
    later.add(workers.submit(() -> three.commit(move(2, 9), null)));
    later.add(workers.submit(() -> three.commit(move(1, 4), null)));
    await("three moves waiting", () -> committer.waiting() == 3);
    release.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    for (Future<CommitOutcome> f : later) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    }
    assertThat(calls).hasSize(2);
    assertThat(calls.get(1))
        .containsExactly(
            new io.boxline.spi.SubscriptionSettlement(3, move(1, 4)),
            new io.boxline.spi.SubscriptionSettlement(3, move(2, 9)),
            new io.boxline.spi.SubscriptionSettlement(7, move(2, 5)));
    assertThat(committer.calls()).isEqualTo(2);
    assertThat(committer.moves()).isEqualTo(4);
  }

  /** A call of several subscriptions that fails is tried per subscription: one fails, not all. */
  @Test
  void aFailedCallOfSeveralSubscriptionsFailsOnlyTheSubscriptionThatFails() throws Exception {
    CountDownLatch firstEntered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicLong callCount = new AtomicLong();
    CursorCommitter committer =
        CursorCommitter.across(
            all -> {
              if (callCount.incrementAndGet() == 1) {
                firstEntered.countDown();
                try {
                  assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              }
              if (all.stream().anyMatch(m -> m.subscriptionId() == 3)) {
                throw new IllegalStateException("subscription 3 was deleted");
              }
              List<CommitOutcome> out = new ArrayList<>();
              all.forEach(m -> out.add(CommitOutcome.COMMITTED));
              return out;
            },
            new AtomicLong(),
            new AtomicLong());
    Future<CommitOutcome> first = workers.submit(() -> committer.lane(7).commit(move(0, 1), null));
    assertThat(firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    Future<CommitOutcome> ok = workers.submit(() -> committer.lane(7).commit(move(1, 2), null));
    Future<CommitOutcome> bad = workers.submit(() -> committer.lane(3).commit(move(1, 2), null));
    await("two moves waiting", () -> committer.waiting() == 2);
    release.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(ok.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThatThrownBy(() -> bad.get(10, TimeUnit.SECONDS))
        .hasRootCauseMessage("subscription 3 was deleted");
    // the first alone, the pair together (failed), then each subscription alone
    assertThat(callCount).hasValue(4);
  }

  @Test
  void theCommittersOfOneInstanceCountIntoTheSameCounters() {
    Calls store = new Calls();
    store.release.countDown();
    AtomicLong calls = new AtomicLong();
    AtomicLong moves = new AtomicLong();
    CursorCommitter first = new CursorCommitter(store::commit, calls, moves);
    CursorCommitter second = new CursorCommitter(store::commit, calls, moves);

    first.commit(move(0, 5));
    second.commit(move(1, 7));
    second.commit(move(1, 9));

    assertThat(calls).hasValue(3);
    assertThat(moves).hasValue(3);
    assertThat(first.calls()).isEqualTo(3);
  }

  @Test
  void movesThatArriveDuringACallGoTogetherInTheNextWithTheirOwnOutcomes() throws Exception {
    Calls store = new Calls();
    store.outcomes.put(PartitionKey.of(1, 2), CommitOutcome.FENCED);
    store.outcomes.put(PartitionKey.of(1, 4), CommitOutcome.CURSOR_MOVED);
    CursorCommitter committer = new CursorCommitter(store::commit);
    Future<CommitOutcome> first = workers.submit(() -> committer.commit(move(0, 1)));
    assertThat(store.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();

    List<Future<CommitOutcome>> later = new ArrayList<>();
    for (int p = 4; p >= 1; p--) { // out of partition order on purpose
      int partition = p;
      later.add(workers.submit(() -> committer.commit(move(partition, 10 + partition))));
    }
    await("four moves waiting", () -> committer.waiting() == 4);
    store.release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(later.get(0).get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.CURSOR_MOVED); // 4
    assertThat(later.get(1).get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED); // 3
    assertThat(later.get(2).get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.FENCED); // 2
    assertThat(later.get(3).get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED); // 1
    assertThat(store.calls).hasSize(2);
    assertThat(store.calls.get(1))
        .as("one call, in partition order")
        .containsExactly(move(1, 11), move(2, 12), move(3, 13), move(4, 14));
    assertThat(committer.calls()).isEqualTo(2);
    assertThat(committer.moves()).isEqualTo(5);
  }

  /** A committer whose leaders wait up to {@code companyWait} for expected moves. */
  private static CursorCommitter waitingUpTo(Calls store, Duration companyWait) {
    return new CursorCommitter(
        store::commit, new AtomicLong(), new AtomicLong(), companyWait.toNanos());
  }

  /**
   * Partitions 0 and 1 handed to workers; 0's move is in, its leader waiting for 1's (30-s bound).
   */
  private record LeaderWaiting(
      Calls store,
      CursorCommitter committer,
      CursorCommitter.Expected second,
      Future<CommitOutcome> first) {}

  private LeaderWaiting leaderWaitingForASecondMove() throws InterruptedException {
    Calls store = new Calls();
    store.release.countDown();
    CursorCommitter committer = waitingUpTo(store, Duration.ofSeconds(30));
    CursorCommitter.Expected zero = committer.expect();
    CursorCommitter.Expected one = committer.expect();
    Future<CommitOutcome> first = workers.submit(() -> committer.commit(move(0, 1), zero));
    await("the first move waiting for company", () -> committer.waiting() == 1);
    return new LeaderWaiting(store, committer, one, first);
  }

  @Test
  void aLeaderWaitsForTheMovesOfPartitionsStartedWithItsAndCommitsThemInOneCall() throws Exception {
    LeaderWaiting w = leaderWaitingForASecondMove();
    assertThat(w.store().calls)
        .as("no call while a started partition's move is expected")
        .isEmpty();

    assertThat(w.committer().commit(move(1, 2), w.second())).isEqualTo(CommitOutcome.COMMITTED);

    assertThat(w.first().get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(w.store().calls).containsExactly(List.of(move(0, 1), move(1, 2)));
  }

  @Test
  void aStartedPartitionThatEndsWithoutAMoveReleasesTheLeaderAtOnce() throws Exception {
    LeaderWaiting w = leaderWaitingForASecondMove();

    w.second().close(); // its worker found nothing to deliver
    w.second().close(); // closing twice counts once

    // Well inside the 30-s bound: the leader stopped waiting when nothing more was expected.
    assertThat(w.first().get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(w.store().calls).containsExactly(List.of(move(0, 1)));
    assertThat(w.committer().commit(move(2, 3), w.committer().expect()))
        .as("nothing left expected: a lone move commits at once")
        .isEqualTo(CommitOutcome.COMMITTED);
  }

  @Test
  void aLeaderWaitsNoLongerThanTheBoundForAMoveThatDoesNotCome() throws Exception {
    Calls store = new Calls();
    store.release.countDown();
    CursorCommitter committer = waitingUpTo(store, Duration.ofMillis(20));
    CursorCommitter.Expected zero = committer.expect();
    committer.expect(); // a slow handler: its move comes much later

    assertThat(workers.submit(() -> committer.commit(move(0, 1), zero)).get(10, TimeUnit.SECONDS))
        .isEqualTo(CommitOutcome.COMMITTED);
    assertThat(store.calls).containsExactly(List.of(move(0, 1)));
  }

  @Test
  void twoMovesOfOnePartitionNeverShareACall() throws Exception {
    Calls store = new Calls();
    CursorCommitter committer = new CursorCommitter(store::commit);
    Future<CommitOutcome> first = workers.submit(() -> committer.commit(move(0, 1)));
    assertThat(store.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    Future<CommitOutcome> a = workers.submit(() -> committer.commit(move(7, 2)));
    await("one move waiting", () -> committer.waiting() == 1);
    Future<CommitOutcome> b = workers.submit(() -> committer.commit(move(7, 3)));
    await("two moves waiting", () -> committer.waiting() == 2);
    store.release.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(b.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(store.calls)
        .containsExactly(List.of(move(0, 1)), List.of(move(7, 2)), List.of(move(7, 3)));
  }

  /** A committer over {@code store} whose second call throws what {@code failure} gives. */
  private static CursorCommitter secondCallThrows(
      Calls store, java.util.function.Supplier<? extends Throwable> failure) {
    return new CursorCommitter(
        moves -> {
          List<CommitOutcome> out = store.commit(moves);
          if (store.calls.size() == 2) {
            Throwable t = failure.get();
            if (t instanceof Error e) {
              throw e;
            }
            throw (RuntimeException) t;
          }
          return out;
        });
  }

  /**
   * Commits move 0 (the first call, held until released) with moves of partitions 1 and 2 waiting
   * behind it, releases it and checks that it committed; returns the two waiting moves.
   */
  private List<Future<CommitOutcome>> twoMovesBehindACall(Calls store, CursorCommitter committer)
      throws Exception {
    Future<CommitOutcome> first = workers.submit(() -> committer.commit(move(0, 1)));
    assertThat(store.firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    Future<CommitOutcome> a = workers.submit(() -> committer.commit(move(1, 2)));
    Future<CommitOutcome> b = workers.submit(() -> committer.commit(move(2, 2)));
    await("two moves waiting", () -> committer.waiting() == 2);
    store.release.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(CommitOutcome.COMMITTED);
    return List.of(a, b);
  }

  @Test
  void aFailedCallFailsEveryMoveInItAndTheNextCallRunsAgain() throws Exception {
    Calls store = new Calls();
    IllegalStateException down = new IllegalStateException("database down");
    CursorCommitter committer = secondCallThrows(store, () -> down);
    List<Future<CommitOutcome>> waiting = twoMovesBehindACall(store, committer);
    for (Future<CommitOutcome> f : waiting) {
      assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).hasCause(down);
    }
    assertThat(committer.commit(move(1, 2))).isEqualTo(CommitOutcome.COMMITTED);
    assertThat(store.calls).hasSize(3);
  }

  @Test
  void anErrorInTheCallStillDecidesTheWaitingMoves() throws Exception {
    Calls store = new Calls();
    CursorCommitter committer = secondCallThrows(store, () -> new StackOverflowError("simulated"));
    List<Future<CommitOutcome>> waiting = twoMovesBehindACall(store, committer);
    // The leader of the second call gets the Error, the other move a failure: neither hangs.
    int errors = 0;
    int failures = 0;
    for (Future<CommitOutcome> f : waiting) {
      try {
        f.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof StackOverflowError) {
          errors++;
        } else if (e.getCause() instanceof IllegalStateException) {
          failures++;
        }
      }
    }
    assertThat(errors).isEqualTo(1);
    assertThat(failures).isEqualTo(1);
    assertThat(committer.commit(move(3, 1))).isEqualTo(CommitOutcome.COMMITTED);
  }

  @Test
  void aStoreThatAnswersTheWrongNumberOfOutcomesFailsTheMoves() {
    CursorCommitter committer = new CursorCommitter(moves -> List.of());
    assertThatThrownBy(() -> committer.commit(move(0, 1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("returned 0 outcomes for 1 moves");
  }
}
