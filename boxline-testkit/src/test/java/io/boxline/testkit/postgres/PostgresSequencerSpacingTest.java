package io.boxline.testkit.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.suite.SuiteSupport;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Commits that arrive within the batch spacing after a batch travel together in the next one. */
class PostgresSequencerSpacingTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void commitsWithinTheSpacingAfterABatchAreSequencedTogether() {
    try (TestDatabase db = TestDatabase.create("spacing")) {
      Boxline boxline = db.boxline(b -> b.sequencerBatchSpacing(Duration.ofMillis(100)));
      TopicName t = SuiteSupport.topic(boxline, "acme/spacing/events", 1);
      SuiteSupport.publish(boxline, t, "first", 1);
      Await.until(WAIT, "the first event sequenced", () -> boxline.stats().eventsSequenced() == 1);
      long batchesBefore = boxline.stats().sequencerBatches();

      long started = System.nanoTime();
      SuiteSupport.publish(boxline, t, "k", 10); // ten transactions, each reporting its commit
      long elapsedMillis = (System.nanoTime() - started) / 1_000_000;
      Await.until(WAIT, "all eleven sequenced", () -> boxline.stats().eventsSequenced() == 11);

      // Without spacing each commit starts a batch of its own (about ten). With it, the commits
      // gather into one batch per 100 ms window (the most spacing allows) that the publishing
      // touched: the first may find the sequencer idle and go at once, and the windows need not
      // start when the publishing does.
      long batches = boxline.stats().sequencerBatches() - batchesBefore;
      assertThat(batches)
          .as("batches for 10 commits made in %d ms", elapsedMillis)
          .isLessThanOrEqualTo(3 + elapsedMillis / 100)
          .isLessThan(10);
    }
  }
}
