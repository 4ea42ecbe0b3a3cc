package io.boxline.testkit.suite;

import io.boxline.Boxline;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.TaskSettings;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What the task suites ({@link TaskSchedulingBehaviour}, {@link TaskWorkerBehaviour}) share: a
 * fresh database and a started Boxline per test, with the few instance-wide task settings a test
 * needs. A dialect's test class says how to get a database.
 */
public abstract class TaskFixture {

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
  static Boxline.Builder configure(String test, Boxline.Builder b) {
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

  /** Quick retries so the tests run in seconds. */
  static final RetryPolicy QUICK =
      RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(50))
          .inPlaceAttempts(1)
          .maxAttempts(2);
}
