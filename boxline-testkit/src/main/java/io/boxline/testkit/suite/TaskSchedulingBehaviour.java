package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.DeadLetter;
import io.boxline.HandlerDecision;
import io.boxline.PublishResult;
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
import org.junit.jupiter.api.Test;

/**
 * Tasks scheduled in transactions: commit-only, idempotency, ordering keys, blocking and unblock
 * (by hand and automatically), run-at and the handler's decisions, tasks stored malformed. A
 * dialect's test class extends this and says how to get a database.
 */
public abstract class TaskSchedulingBehaviour extends TaskFixture {

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

  /**
   * A task worker's handler timeout: a task that hangs is interrupted at each attempt and blocked
   * under the retry policy with the timeout as its reason, while the other tasks run.
   */
  @Test
  void aTaskThatHangsIsInterruptedAndBlockedWhileOthersRun() {
    List<String> ran = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicInteger interrupted =
        new java.util.concurrent.atomic.AtomicInteger();
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handlerTimeout(Duration.ofMillis(300))
        .handle(
            "charge",
            SendEmail.class,
            (p, task) -> {
              if (p.to().equals("hangs")) {
                try {
                  new java.util.concurrent.CountDownLatch(1).await(); // never released
                } catch (InterruptedException e) {
                  interrupted.incrementAndGet();
                  Thread.currentThread().interrupt();
                  return;
                }
              }
              ran.add(p.to());
            })
        .start();
    boxline.inTransaction(
        tx -> {
          boxline.tasks().schedule(tx, "charge", new SendEmail("hangs", 1));
          boxline.tasks().schedule(tx, "charge", new SendEmail("fine", 2));
          return null;
        });
    Await.until(WAIT, "the other task ran", () -> ran.contains("fine"));
    Await.until(WAIT, "the hanging task blocked", () -> boxline.tasks().blocked().size() == 1);
    assertThat(interrupted.get()).isEqualTo(2); // two attempts under QUICK, each interrupted
    assertThat(ran).doesNotContain("hangs");
    assertThat(boxline.tasks().blocked().get(0).lastError()).containsIgnoringCase("timeout");
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
    assertThat(boxline.admin().blockedTasks()).as("Admin counts the blocked task").isEqualTo(1);
    broken.set(false);
    assertThat(boxline.tasks().unblock(boxline.tasks().blocked().get(0).event().id())).isTrue();
    Await.until(
        WAIT,
        "acct-1 ran in order",
        () -> ran.stream().filter(r -> r.startsWith("acct-1")).count() == 3);
    assertThat(ran.stream().filter(r -> r.startsWith("acct-1")).toList())
        .containsExactly("acct-1:1", "acct-1:2", "acct-1:3");
    assertThat(boxline.tasks().blocked()).isEmpty();
    assertThat(boxline.admin().blockedTasks()).isZero();
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

  @Test
  void blockedTasksAreUnblockedAutomaticallyAfterTheConfiguredTime() {
    AtomicBoolean broken = new AtomicBoolean(true);
    Map<String, Instant> ranAt = new ConcurrentHashMap<>();
    List<DeadLetter> seenBlocked = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handle(
            "charge",
            SendEmail.class,
            (p, task) -> {
              if (broken.get()) {
                throw new IllegalStateException("card declined");
              }
              ranAt.put(p.to(), Instant.now());
            })
        .start();
    boxline.inTransaction(tx -> boxline.tasks().schedule(tx, "charge", new SendEmail("c", 0)));
    Await.until(
        WAIT,
        "the task blocked",
        () -> {
          seenBlocked.addAll(boxline.tasks().blocked());
          return !seenBlocked.isEmpty();
        });
    broken.set(false);
    // Nobody calls unblock: the loop must.
    Await.until(WAIT, "the task ran after being unblocked", () -> ranAt.containsKey("c"));
    assertThat(ranAt.get("c")).isAfterOrEqualTo(seenBlocked.get(0).deadAt().plusSeconds(1));
    assertThat(boxline.tasks().blocked()).isEmpty();
    assertThat(boxline.tasks().stats().autoUnblocked()).isEqualTo(1);
    assertThat(boxline.tasks().stats().autoUnblockRuns()).isPositive();
  }

  @Test
  void withoutAutoUnblockABlockedTaskStaysBlocked() {
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .handle(
            "charge",
            SendEmail.class,
            (p, task) -> {
              throw new IllegalStateException("card declined");
            })
        .start();
    boxline.inTransaction(tx -> boxline.tasks().schedule(tx, "charge", new SendEmail("c", 0)));
    Await.until(WAIT, "the task blocked", () -> boxline.tasks().blocked().size() == 1);
    assertThat(boxline.tasks().stats().autoUnblockRuns()).isZero();
    assertThat(
            Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(n -> n.startsWith("boxline-task-unblock-" + boxline.instanceId())))
        .isEmpty();
  }
}
