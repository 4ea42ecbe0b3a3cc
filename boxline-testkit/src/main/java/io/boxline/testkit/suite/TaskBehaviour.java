package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.HandlerDecision;
import io.boxline.PublishResult;
import io.boxline.RetryPolicy;
import io.boxline.TaskOptions;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Tasks scheduled in transactions: commit-only, idempotency, ordering keys, blocking and unblock,
 * run-at.
 */
public abstract class TaskBehaviour {
  public record SendEmail(String to, int n) {}

  protected TestDatabase db;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("task"));
    boxline = db.boxline(b -> b);
  }

  @AfterEach
  void close() {
    db.close();
  }

  private static final RetryPolicy QUICK =
      RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(50))
          .inPlaceAttempts(1)
          .maxAttempts(2);

  @Test
  void tasksRunOnlyIfTheirTransactionCommitsAndOnceByIdempotencyKey() throws Exception {
    List<SendEmail> sent = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .handle("send-email", SendEmail.class, (p, task) -> sent.add(p))
        .start();
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false);
      boxline.tasks().schedule(c, "send-email", new SendEmail("rolled@back", 0));
      c.rollback();
      PublishResult first =
          boxline
              .tasks()
              .schedule(
                  c,
                  "send-email",
                  new SendEmail("a@x", 1),
                  TaskOptions.options().idempotencyKey("welcome-a"));
      PublishResult again =
          boxline
              .tasks()
              .schedule(
                  c,
                  "send-email",
                  new SendEmail("a@x", 2),
                  TaskOptions.options().idempotencyKey("welcome-a"));
      c.commit();
      boxline.publisher().committed();
      assertThat(again.duplicate()).isTrue();
      assertThat(again.eventId()).isEqualTo(first.eventId());
    }
    Await.until(WAIT, "one email", () -> sent.size() == 1);
    assertThat(sent).containsExactly(new SendEmail("a@x", 1));
  }

  @Test
  void aBlockedTaskHoldsItsOrderingKeyUntilUnblockedWhileOthersRun() {
    AtomicBoolean broken = new AtomicBoolean(true);
    List<String> ran = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handle(
            "charge",
            SendEmail.class,
            (p, task) -> {
              if (p.n() == 1 && p.to().equals("acct-1") && broken.get()) {
                throw new IllegalStateException("card declined");
              }
              ran.add(p.to() + ":" + p.n());
            })
        .start();
    boxline.inTransaction(
        tx -> {
          for (int n = 1; n <= 3; n++) {
            boxline
                .tasks()
                .schedule(
                    tx,
                    "charge",
                    new SendEmail("acct-1", n),
                    TaskOptions.options().orderingKey("acct-1"));
            boxline
                .tasks()
                .schedule(
                    tx,
                    "charge",
                    new SendEmail("acct-2", n),
                    TaskOptions.options().orderingKey("acct-2"));
          }
          boxline.tasks().schedule(tx, "charge", new SendEmail("free", 0));
          return null;
        });
    Await.until(
        WAIT,
        "acct-2 and keyless ran",
        () -> ran.containsAll(List.of("acct-2:1", "acct-2:2", "acct-2:3", "free:0")));
    Await.until(WAIT, "acct-1:1 blocked", () -> boxline.tasks().blocked().size() == 1);
    assertThat(ran).noneMatch(r -> r.startsWith("acct-1"));
    assertThat(boxline.tasks().blocked().get(0).lastError()).contains("card declined");
    broken.set(false);
    assertThat(boxline.tasks().unblock(boxline.tasks().blocked().get(0).event().id())).isTrue();
    Await.until(
        WAIT,
        "acct-1 ran in order",
        () -> ran.stream().filter(r -> r.startsWith("acct-1")).count() == 3);
    assertThat(ran.stream().filter(r -> r.startsWith("acct-1")).toList())
        .containsExactly("acct-1:1", "acct-1:2", "acct-1:3");
    assertThat(boxline.tasks().blocked()).isEmpty();
  }

  @Test
  void tasksRunNotBeforeTheirTimeAndDecisionsApply() {
    Map<String, Instant> ranAt = new ConcurrentHashMap<>();
    Map<String, Integer> tries = new ConcurrentHashMap<>();
    boxline
        .tasks()
        .worker()
        .handle(
            "job",
            SendEmail.class,
            (p, task) -> {
              int n = tries.merge(p.to(), 1, Integer::sum);
              if (p.to().equals("skip")) {
                throw HandlerDecision.ignore("not needed any more");
              }
              if (p.to().equals("again") && n == 1) {
                throw HandlerDecision.retryIn(Duration.ofMillis(300), "busy");
              }
              ranAt.put(p.to(), Instant.now());
            })
        .start();
    Instant runAt = Instant.now().plusMillis(1200);
    boxline.inTransaction(
        tx -> {
          boxline
              .tasks()
              .schedule(tx, "job", new SendEmail("later", 0), TaskOptions.options().runAt(runAt));
          boxline.tasks().schedule(tx, "job", new SendEmail("skip", 0));
          boxline.tasks().schedule(tx, "job", new SendEmail("again", 0));
          boxline.tasks().schedule(tx, "unknown-type", new SendEmail("x", 0));
          return null;
        });
    Await.until(
        WAIT,
        "later and again ran",
        () -> ranAt.containsKey("later") && ranAt.containsKey("again"));
    assertThat(ranAt.get("later")).isAfterOrEqualTo(runAt);
    assertThat(tries.get("again")).isEqualTo(2);
    assertThat(tries.get("skip")).isEqualTo(1);
    assertThat(ranAt).doesNotContainKey("skip");
    Await.until(WAIT, "unknown type blocked", () -> boxline.tasks().blocked().size() == 1);
    assertThat(boxline.tasks().blocked().get(0).event().type()).isEqualTo("unknown-type");
  }

  /**
   * A task whose stored row was overwritten with headers that are not a JSON object of strings (as
   * a script could) is blocked with the reason after the retry policy, without its handler being
   * called; the other tasks run.
   */
  @Test
  void aTaskStoredMalformedIsBlockedAndTheOthersRun() throws Exception {
    PublishResult mangled =
        boxline.inTransaction(
            tx -> {
              for (int i = 0; i < 5; i++) {
                boxline.tasks().schedule(tx, "send-email", new SendEmail("ok@x", i));
              }
              return boxline.tasks().schedule(tx, "send-email", new SendEmail("mangled@x", 9));
            });
    Await.until(
        WAIT,
        "tasks sequenced",
        () -> {
          try (Connection c = db.dataSource().getConnection();
              java.sql.Statement st = c.createStatement();
              java.sql.ResultSet rs = st.executeQuery("SELECT count(*) FROM " + db.table("log"))) {
            rs.next();
            return rs.getLong(1) == 6;
          } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
          }
        });
    boolean pg = db.dialect() == TestDatabase.Dialect.POSTGRESQL;
    try (Connection c = db.dataSource().getConnection();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "UPDATE "
                    + db.table("log")
                    + " SET headers = "
                    + (pg ? "CAST(? AS jsonb)" : "?")
                    + " WHERE event_id = ?")) {
      ps.setString(1, "{\"attempt\": 1}");
      if (pg) {
        ps.setObject(2, mangled.eventId());
      } else {
        ps.setString(2, mangled.eventId().toString());
      }
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
    List<SendEmail> sent = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handle("send-email", SendEmail.class, (p, task) -> sent.add(p))
        .start();
    Await.until(WAIT, "the mangled task blocked", () -> boxline.tasks().blocked().size() == 1);
    assertThat(boxline.tasks().blocked().get(0).event().id()).isEqualTo(mangled.eventId());
    assertThat(boxline.tasks().blocked().get(0).lastError())
        .contains("MalformedEventException")
        .contains("header 'attempt' is number, not a string");
    Await.until(WAIT, "the other five ran", () -> sent.size() == 5);
    assertThat(sent).extracting(SendEmail::to).containsOnly("ok@x");
  }
}
