package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetter;
import io.boxline.HandlerDecision;
import io.boxline.PayloadCodec;
import io.boxline.PublishResult;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.TaskOptions;
import io.boxline.TaskSettings;
import io.boxline.Tasks;
import io.boxline.TopicName;
import io.boxline.UnknownTaskPolicy;
import io.boxline.ValidationException;
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
 * run-at; and their configuration: codecs, unknown types, per-type retries, attempt numbers, the
 * executor, batch size and shutdown timeout, automatic unblock, retention and partitions.
 */
public abstract class TaskBehaviour {
  public record SendEmail(String to, int n) {}

  protected TestDatabase db;
  protected Boxline boxline;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open(TestInfo info) {
    String test = info.getTestMethod().map(m -> m.getName()).orElse("task");
    db = newDatabase(test);
    boxline = db.boxline(b -> configure(test, b));
  }

  /** The few tests of instance-wide task settings get them here, before the instance starts. */
  private static Boxline.Builder configure(String test, Boxline.Builder b) {
    return switch (test) {
      case "blockedTasksAreUnblockedAutomaticallyAfterTheConfiguredTime" ->
          b.tasks(
              TaskSettings.defaults()
                  .autoUnblockAfter(Duration.ofSeconds(1))
                  .autoUnblockInterval(Duration.ofMillis(100)));
      case "finishedTasksGoAfterTheRetentionAndUnfinishedOnesStay" ->
          b.retentionInterval(Duration.ofMillis(100))
              .tasks(
                  TaskSettings.defaults().retention(RetentionPolicy.byAge(Duration.ofSeconds(1))));
      case "theTasksTopicHasTheConfiguredPartitionsAndAnotherCountFailsClearly" ->
          b.tasks(TaskSettings.defaults().partitions(4));
      case "tasksWithoutAnOrderingKeyRunInParallelWithParallelism" ->
          b.tasks(TaskSettings.defaults().partitions(1)); // one partition: only parallelism helps
      default -> b;
    };
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

  // ---------------------------------------------------------------- configuration

  /** A codec that is not JSON, so a worker decoding with the wrong one is noticed. */
  private static final PayloadCodec PIPE =
      new PayloadCodec() {
        @Override
        public String contentType() {
          return "text/x-pipe";
        }

        @Override
        public byte[] encode(Object value) {
          SendEmail e = (SendEmail) value;
          return (e.to() + "|" + e.n()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        public <T> T decode(byte[] payload, Class<T> type) {
          String[] parts =
              new String(payload, java.nio.charset.StandardCharsets.UTF_8).split("\\|");
          return type.cast(new SendEmail(parts[0], Integer.parseInt(parts[1])));
        }
      };

  @Test
  void aWorkerDecodesWithItsCodecAndBlocksTasksWrittenWithAnother() {
    List<SendEmail> sent = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .codec(PIPE)
        .retryPolicy(QUICK)
        .handle("send-email", SendEmail.class, (p, task) -> sent.add(p))
        .start();
    PublishResult json =
        boxline.inTransaction(
            tx -> {
              boxline
                  .tasks()
                  .schedule(
                      tx,
                      "send-email",
                      new SendEmail("pipe@x", 7),
                      TaskOptions.options().codec(PIPE));
              return boxline.tasks().schedule(tx, "send-email", new SendEmail("json@x", 8));
            });
    Await.until(WAIT, "the pipe task ran", () -> sent.size() == 1);
    assertThat(sent).containsExactly(new SendEmail("pipe@x", 7));
    Await.until(WAIT, "the JSON task blocked", () -> boxline.tasks().blocked().size() == 1);
    DeadLetter blocked = boxline.tasks().blocked().get(0);
    assertThat(blocked.event().id()).isEqualTo(json.eventId());
    assertThat(blocked.lastError())
        .contains("encoded as 'application/json'")
        .contains("decodes 'text/x-pipe'");
  }

  @Test
  void anUnknownTypeIgnoredByPolicyIsCountedAndDoesNotHoldItsKey() {
    List<String> ran = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .unknownType(UnknownTaskPolicy.IGNORE)
        .handle("known", SendEmail.class, (p, task) -> ran.add(p.to()))
        .start();
    boxline.inTransaction(
        tx -> {
          TaskOptions sameKey = TaskOptions.options().orderingKey("k");
          boxline.tasks().schedule(tx, "mystery", new SendEmail("m", 0), sameKey);
          boxline.tasks().schedule(tx, "known", new SendEmail("after", 1), sameKey);
          return null;
        });
    Await.until(WAIT, "the task behind the unknown one ran", () -> ran.contains("after"));
    assertThat(boxline.tasks().blocked()).isEmpty();
    assertThat(boxline.tasks().stats().unknownTasks()).isEqualTo(1);
    assertThat(boxline.tasks().stats().unknownIgnored()).isEqualTo(1);
  }

  @Test
  void anUnknownTypeRetriedByPolicyIsBlockedOnceAttemptsRunOut() {
    boxline
        .tasks()
        .worker()
        .unknownType(UnknownTaskPolicy.RETRY)
        .retryPolicy(QUICK)
        .handle("known", SendEmail.class, (p, task) -> {})
        .start();
    boxline.inTransaction(tx -> boxline.tasks().schedule(tx, "mystery", new SendEmail("m", 0)));
    Await.until(WAIT, "the unknown task blocked", () -> boxline.tasks().blocked().size() == 1);
    DeadLetter blocked = boxline.tasks().blocked().get(0);
    assertThat(blocked.attempts()).isEqualTo(QUICK.maxAttempts());
    assertThat(blocked.lastError()).contains("no handler for task type 'mystery'");
    assertThat(boxline.tasks().stats().unknownTasks()).isEqualTo(QUICK.maxAttempts());
    assertThat(boxline.tasks().stats().unknownIgnored()).isZero();
  }

  @Test
  void aCustomUnknownTypePolicyHandlesTheTask() {
    List<String> forwarded = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        .unknownType(task -> forwarded.add(task.type() + ":" + task.key()))
        .handle("known", SendEmail.class, (p, task) -> {})
        .start();
    boxline.inTransaction(
        tx ->
            boxline
                .tasks()
                .schedule(
                    tx, "mystery", new SendEmail("m", 0), TaskOptions.options().orderingKey("k1")));
    Await.until(WAIT, "the custom policy saw the task", () -> forwarded.size() == 1);
    assertThat(forwarded).containsExactly("mystery:k1");
    assertThat(boxline.tasks().blocked()).isEmpty();
    assertThat(boxline.tasks().stats().unknownTasks()).isEqualTo(1);
  }

  @Test
  void aTaskTypesRetryPolicyOverridesTheWorkers() {
    Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
    Tasks.ContextTaskHandler<SendEmail> failing =
        (p, ctx) -> {
          attempts
              .computeIfAbsent(ctx.type(), t -> new CopyOnWriteArrayList<>())
              .add(ctx.attempt());
          throw new IllegalStateException("always fails");
        };
    boxline
        .tasks()
        .worker()
        .retryPolicy(QUICK)
        .retryPolicy("patient", QUICK.maxAttempts(4))
        .handleWithContext("hasty", SendEmail.class, failing)
        .handleWithContext("patient", SendEmail.class, failing)
        .start();
    boxline.inTransaction(
        tx -> {
          boxline.tasks().schedule(tx, "hasty", new SendEmail("h", 0));
          return boxline.tasks().schedule(tx, "patient", new SendEmail("p", 0));
        });
    Await.until(WAIT, "both blocked", () -> boxline.tasks().blocked().size() == 2);
    assertThat(attempts.get("hasty")).containsExactly(1, 2);
    assertThat(attempts.get("patient")).containsExactly(1, 2, 3, 4);
  }

  @Test
  void theHandlerSeesTheAttemptNumberAcrossInPlaceAndParkedRetries() {
    List<Integer> seen = new CopyOnWriteArrayList<>();
    List<Integer> succeededOn = new CopyOnWriteArrayList<>();
    boxline
        .tasks()
        .worker()
        // Two attempts in place, then parked ones: the count must carry over.
        .retryPolicy(
            RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(50))
                .inPlaceAttempts(2)
                .maxAttempts(6))
        .handleWithContext(
            "job",
            SendEmail.class,
            (p, ctx) -> {
              seen.add(ctx.attempt());
              if (ctx.attempt() < 4) {
                throw new IllegalStateException("not yet");
              }
              assertThat(ctx.task().type()).isEqualTo("job");
              succeededOn.add(ctx.attempt());
            })
        .start();
    boxline.inTransaction(tx -> boxline.tasks().schedule(tx, "job", new SendEmail("j", 0)));
    Await.until(WAIT, "the job succeeded", () -> !succeededOn.isEmpty());
    assertThat(seen).containsExactly(1, 2, 3, 4);
    assertThat(succeededOn).containsExactly(4);
  }

  @Test
  void tasksRunOnTheGivenExecutorInBatchesOfTheGivenSize() throws Exception {
    java.util.concurrent.atomic.AtomicInteger threads =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(
            2, r -> new Thread(r, "task-pool-" + threads.incrementAndGet()));
    try {
      List<String> ranOn = new CopyOnWriteArrayList<>();
      assertThatThrownBy(() -> boxline.tasks().worker().batchSize(0))
          .isInstanceOf(ValidationException.class)
          .hasMessage("batchSize must be between 1 and 10000, got 0");
      boxline
          .tasks()
          .worker()
          .executor(pool)
          .batchSize(1)
          .handle("job", SendEmail.class, (p, task) -> ranOn.add(Thread.currentThread().getName()))
          .start();
      boxline.inTransaction(
          tx -> {
            for (int i = 0; i < 5; i++) {
              boxline
                  .tasks()
                  .schedule(
                      tx, "job", new SendEmail("j", i), TaskOptions.options().orderingKey("k"));
            }
            return null;
          });
      Await.until(WAIT, "five ran", () -> ranOn.size() == 5);
      assertThat(ranOn).allMatch(name -> name.startsWith("task-pool-"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void tasksWithoutAnOrderingKeyRunInParallelWithParallelism() {
    // Four tasks that each wait until all four run at once, on a tasks topic of one partition:
    // only possible when tasks of one partition run in parallel.
    java.util.concurrent.CountDownLatch allIn = new java.util.concurrent.CountDownLatch(4);
    java.util.concurrent.atomic.AtomicInteger together =
        new java.util.concurrent.atomic.AtomicInteger();
    boxline
        .tasks()
        .worker()
        .parallelism(8)
        .concurrency(1)
        .handle(
            "job",
            SendEmail.class,
            (p, task) -> {
              allIn.countDown();
              try {
                if (allIn.await(20, java.util.concurrent.TimeUnit.SECONDS)) {
                  together.incrementAndGet();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            })
        .start();
    boxline.inTransaction(
        tx -> {
          for (int i = 0; i < 4; i++) {
            boxline.tasks().schedule(tx, "job", new SendEmail("j", i));
          }
          return null;
        });
    Await.until(WAIT, "four ran together", () -> together.get() == 4);
  }

  @Test
  void closingAWorkerWaitsNoLongerThanItsShutdownTimeout() {
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Consumer worker =
        boxline
            .tasks()
            .worker()
            .shutdownTimeout(Duration.ofMillis(300))
            .handle(
                "stuck",
                SendEmail.class,
                (p, task) -> {
                  started.countDown();
                  // Ignores interrupts on purpose: only the shutdown timeout can end close().
                  boolean done = false;
                  while (!done) {
                    try {
                      done =
                          release.await(
                              WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                      // keep waiting
                    }
                  }
                })
            .start();
    try {
      boxline.inTransaction(tx -> boxline.tasks().schedule(tx, "stuck", new SendEmail("s", 0)));
      Await.until(WAIT, "the task started", () -> started.getCount() == 0);
      long t0 = System.nanoTime();
      worker.close();
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      // The default (10 s) would take far longer than this.
      assertThat(took).isLessThan(Duration.ofSeconds(5));
    } finally {
      release.countDown();
    }
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

  @Test
  void theTasksTopicKeepsFinishedTasksSevenDaysByDefault() throws Exception {
    boxline.tasks().worker();
    assertThat(boxline.admin().topic(TopicName.parse(Tasks.TOPIC)).orElseThrow().partitions())
        .isEqualTo(Tasks.PARTITIONS);
    try (Connection c = db.dataSource().getConnection();
        java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT retention_ms, retention_keep_unconsumed FROM " + db.table("topic"))) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getLong(1)).isEqualTo(Duration.ofDays(7).toMillis());
      assertThat(rs.getBoolean(2)).isTrue();
      assertThat(rs.next()).as("only the tasks topic exists").isFalse();
    }
  }

  @Test
  void finishedTasksGoAfterTheRetentionAndUnfinishedOnesStay() {
    List<Integer> done = new CopyOnWriteArrayList<>();
    boxline.tasks().worker().handle("job", SendEmail.class, (p, task) -> done.add(p.n())).start();
    java.util.Set<java.util.UUID> finished = new java.util.HashSet<>();
    PublishResult[] kept = new PublishResult[2];
    boxline.inTransaction(
        tx -> {
          for (int i = 0; i < 3; i++) {
            finished.add(boxline.tasks().schedule(tx, "job", new SendEmail("j", i)).eventId());
          }
          // Blocked (no handler) and not yet due: neither is finished.
          kept[0] = boxline.tasks().schedule(tx, "no-handler", new SendEmail("b", 0));
          kept[1] =
              boxline
                  .tasks()
                  .schedule(
                      tx,
                      "job",
                      new SendEmail("later", 9),
                      TaskOptions.options().runAt(Instant.now().plus(Duration.ofHours(1))));
          return null;
        });
    Await.until(WAIT, "three ran", () -> done.size() == 3);
    Await.until(WAIT, "one blocked", () -> boxline.tasks().blocked().size() == 1);
    Await.until(
        WAIT, "finished tasks deleted", () -> java.util.Collections.disjoint(logIds(), finished));
    long runs = boxline.stats().retentionRuns();
    Await.until(WAIT, "two more retention runs", () -> boxline.stats().retentionRuns() >= runs + 2);
    assertThat(logIds()).containsExactlyInAnyOrder(kept[0].eventId(), kept[1].eventId());
  }

  @Test
  void theTasksTopicHasTheConfiguredPartitionsAndAnotherCountFailsClearly() {
    boxline.tasks().worker();
    assertThat(boxline.admin().topic(TopicName.parse(Tasks.TOPIC)).orElseThrow().partitions())
        .isEqualTo(4);
    Boxline other =
        db.boxline(b -> b.sequencer(false).tasks(TaskSettings.defaults().partitions(8)));
    assertThatThrownBy(() -> other.tasks().worker())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("exists with 4 partitions but TaskSettings.partitions is 8")
        .hasMessageContaining("set TaskSettings.partitions(4)");
    assertThatThrownBy(() -> TaskSettings.defaults().partitions(0))
        .isInstanceOf(ValidationException.class)
        .hasMessage("TaskSettings.partitions must be between 1 and 65536, got 0");
  }

  private java.util.Set<java.util.UUID> logIds() {
    java.util.Set<java.util.UUID> ids = new java.util.HashSet<>();
    try (Connection c = db.dataSource().getConnection();
        java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery("SELECT event_id FROM " + db.table("log"))) {
      while (rs.next()) {
        ids.add(java.util.UUID.fromString(rs.getString(1)));
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    return ids;
  }
}
