package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetter;
import io.boxline.PayloadCodec;
import io.boxline.PublishResult;
import io.boxline.RetryPolicy;
import io.boxline.TaskOptions;
import io.boxline.TaskSettings;
import io.boxline.Tasks;
import io.boxline.TopicName;
import io.boxline.UnknownTaskPolicy;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * How task workers and the tasks topic are configured: codecs, unknown types, per-type retries,
 * attempt numbers, the executor, batch size, parallelism and shutdown timeout, retention and
 * partitions. A dialect's test class extends this and says how to get a database.
 */
public abstract class TaskWorkerBehaviour extends TaskFixture {

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
