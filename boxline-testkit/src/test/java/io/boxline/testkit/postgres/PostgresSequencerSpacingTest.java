package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Under load (a batch carried more than one event), commits that arrive within the batch spacing
 * after a batch travel together in the next one; commits that come one at a time are not held.
 */
class PostgresSequencerSpacingTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  /**
   * Batches the sequencer needs for 4 threads × 25 commits, with the given spacing, and the
   * milliseconds the commits took.
   */
  private static long[] batchesFor100ConcurrentCommits(Duration spacing) throws Exception {
    try (TestDatabase db = TestDatabase.create("spacing")) {
      Boxline boxline = db.boxline(b -> b.sequencerBatchSpacing(spacing));
      TopicName t = SuiteSupport.topic(boxline, "acme/spacing/events", 1);
      SuiteSupport.publish(boxline, t, "first", 1);
      Await.until(WAIT, "the first event sequenced", () -> boxline.stats().eventsSequenced() == 1);
      long batchesBefore = boxline.stats().sequencerBatches();

      long started = System.nanoTime();
      ExecutorService producers = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
          String key = "p" + p;
          done.add(producers.submit(() -> SuiteSupport.publish(boxline, t, key, 25)));
        }
        for (Future<?> f : done) {
          f.get(30, TimeUnit.SECONDS);
        }
      } finally {
        producers.shutdownNow();
      }
      long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
      Await.until(WAIT, "all 101 sequenced", () -> boxline.stats().eventsSequenced() == 101);
      return new long[] {boxline.stats().sequencerBatches() - batchesBefore, elapsedMillis};
    }
  }

  @Test
  void concurrentCommitsGatherIntoFewBatches() throws Exception {
    // Spacing 100 ms (the most allowed): once a batch carries two events, the commits of the next
    // 100 ms wait and travel together, so 100 commits made in T ms need about T / 100 batches
    // (plus the one-event batches before load showed). Without spacing each batch takes what has
    // committed at that moment: dozens of batches.
    long[] spaced = batchesFor100ConcurrentCommits(Duration.ofMillis(100));
    long[] unspaced = batchesFor100ConcurrentCommits(Duration.ZERO);
    assertThat(spaced[0])
        .as("batches with spacing, commits made in %d ms", spaced[1])
        .isLessThanOrEqualTo(5 + spaced[1] / 100);
    assertThat(unspaced[0]).as("batches without spacing").isGreaterThan(spaced[0]);
  }

  @Test
  void commitsThatComeOneAtATimeAreNotHeld() {
    try (TestDatabase db = TestDatabase.create("spacing_lone")) {
      Boxline boxline = db.boxline(b -> b.sequencerBatchSpacing(Duration.ofMillis(100)));
      TopicName t = SuiteSupport.topic(boxline, "acme/spacing/lone", 1);
      SuiteSupport.publish(boxline, t, "warm", 1);
      Await.until(WAIT, "the first event sequenced", () -> boxline.stats().eventsSequenced() == 1);

      // Each commit waits for the one before it to be sequenced, so every batch carries one event
      // and none may be spaced. Were they, each would wait up to 100 ms after the batch before it:
      // about 2 s for 20. Sequenced at once they take a few milliseconds each.
      long started = System.nanoTime();
      for (int i = 1; i <= 20; i++) {
        SuiteSupport.publish(boxline, t, "k", 1);
        long expected = 1 + i;
        Await.until(
            WAIT, "event " + i + " sequenced", () -> boxline.stats().eventsSequenced() == expected);
      }
      long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
      assertThat(elapsedMillis).as("20 lone commits sequenced one by one").isLessThan(1_000);
    }
  }
}
