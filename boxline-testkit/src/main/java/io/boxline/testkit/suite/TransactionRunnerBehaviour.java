package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.body;
import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.subscribe;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetterQuery;
import io.boxline.PartitionLag;
import io.boxline.RetryPolicy;
import io.boxline.StoreException;
import io.boxline.TopicName;
import io.boxline.TransactionRunner;
import io.boxline.TransactionWork;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A transactional handler in transactions an application framework runs ({@link
 * TransactionRunner}): the cursor is locked, the handler writes and the cursor moves on the
 * runner's connection, and only the runner commits — so the handler's writes are applied exactly
 * once, through failures retried in place, retries from the parking store and a dead letter.
 */
public abstract class TransactionRunnerBehaviour extends DatabaseSuite {

  /** A framework's transaction manager, reduced to what the contract needs. */
  static final class PlainRunner implements TransactionRunner {
    final DataSource dataSource;
    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger rollbacks = new AtomicInteger();

    PlainRunner(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    public <T> T inNewTransaction(TransactionWork<T> work) {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        try {
          T result = work.run(c);
          c.commit();
          commits.incrementAndGet();
          return result;
        } catch (SQLException | RuntimeException e) {
          c.rollback();
          rollbacks.incrementAndGet();
          throw e instanceof RuntimeException r ? r : new StoreException("work failed", e);
        }
      } catch (SQLException e) {
        throw new StoreException("runner failed", e);
      }
    }
  }

  private int effects(String body) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement("select count(*) from " + db.table("effects") + " where body = ?")) {
      ps.setString(1, body);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  @Test
  void theHandlersWritesAndTheCursorCommitInTheRunnersTransactionExactlyOnce() throws Exception {
    Boxline boxline = db.boxline(b -> b);
    TopicName t = topic(boxline, "acme/runner/orders", 2);
    subscribe(boxline, "effects", t);
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute("create table " + db.table("effects") + " (body varchar(40))");
    }
    List<String> bodies = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      bodies.add("ok-" + i);
    }
    bodies.add("flaky-once");
    bodies.add("flaky-parked");
    bodies.add("poison");
    for (String b : bodies) {
      boxline.inTransaction(tx -> boxline.publisher().publish(tx, raw(t, b, b)));
    }
    PlainRunner runner = new PlainRunner(db.dataSource());
    Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    Consumer consumer =
        boxline
            .consumer("effects")
            .batchSize(10)
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                    .inPlaceAttempts(2)
                    .maxAttempts(4)
                    .jitter(0))
            .transactionalHandler(
                (e, tx) -> {
                  String b = body(e);
                  int n = attempts.computeIfAbsent(b, k -> new AtomicInteger()).incrementAndGet();
                  try (PreparedStatement ps =
                      tx.prepareStatement("insert into " + db.table("effects") + " values (?)")) {
                    ps.setString(1, b);
                    ps.executeUpdate();
                  }
                  // Call 1 is the batch's transaction; a failure there redoes the batch one
                  // event per transaction, attempts 1 and 2 in place, 3 and 4 from the parking
                  // store. flaky-once fails in the batch only; flaky-parked until it is retried
                  // from the store (call 4); poison always, so it is dead-lettered (call 5).
                  if ((b.equals("flaky-once") && n == 1)
                      || (b.equals("flaky-parked") && n < 4)
                      || b.equals("poison")) {
                    throw new IllegalStateException("attempt " + n + " of " + b + " fails");
                  }
                },
                runner)
            .start();
    try {
      Await.until(
          SuiteSupport.WAIT,
          "the dead letter",
          () -> boxline.deadLetters().list(DeadLetterQuery.of("effects")).size() == 1);
      Await.until(
          SuiteSupport.WAIT,
          "the cursor past everything",
          () ->
              boxline.admin().lag("effects").stream().mapToLong(PartitionLag::backlog).sum() == 0
                  && boxline.admin().failures("effects").retrying() == 0);
    } finally {
      consumer.close();
    }
    for (String b : bodies) {
      assertThat(effects(b))
          .as("effects of %s (attempts %s)", b, attempts.get(b))
          .isEqualTo(b.equals("poison") ? 0 : 1);
    }
    assertThat(attempts.get("flaky-parked").get()).isEqualTo(4);
    assertThat(attempts.get("poison").get()).isEqualTo(5);
    assertThat(boxline.deadLetters().list(DeadLetterQuery.of("effects")).get(0).event().key())
        .isEqualTo("poison");
    assertThat(runner.rollbacks.get()).as("every failed attempt rolled back").isPositive();
    assertThat(runner.commits.get()).as("the runner committed every handled batch").isPositive();
  }
}
