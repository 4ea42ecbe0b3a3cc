package io.boxline.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.testkit.process.ChildMain;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Child: a task worker that records every run of a task with its own insert. */
public final class TaskWorkerMain {
  private TaskWorkerMain() {}

  public static void main(String[] argv) throws Exception {
    ChildArgs args = ChildArgs.parse(argv);
    String sql = "INSERT INTO " + args.schema() + ".chaos_task_run (task_id, member) VALUES (?, ?)";
    int concurrency = args.concurrency;
    HikariDataSource boxlinePool = args.waitingPool("boxline", 2 * concurrency + 4);
    HikariDataSource recordPool = args.waitingPool("record", concurrency + 1);
    Boxline boxline = args.startBoxline(boxlinePool, false);
    Consumer worker =
        ChildArgs.retry(
            "start the task worker",
            () ->
                boxline
                    .tasks()
                    .worker()
                    .id(args.memberId())
                    .concurrency(concurrency)
                    .batchSize(args.batch)
                    .handle(
                        ChaosNames.TASK_TYPE,
                        Map.class,
                        (payload, task) -> {
                          try (Connection c = recordPool.getConnection();
                              PreparedStatement ps = c.prepareStatement(sql)) {
                            ps.setString(1, task.id().toString());
                            ps.setString(2, args.incarnation());
                            ps.executeUpdate();
                          } catch (SQLException e) {
                            throw new IllegalStateException("could not record a task run", e);
                          }
                        })
                    .start());
    args.reportEvery(
        () -> {
          Map<String, Long> m = new LinkedHashMap<>();
          m.put("tasksHandled", worker.handledCount());
          m.put("tasksFenced", worker.fencedCount());
          m.put("tasksLost", worker.lostCount());
          return m;
        });
    ChildMain.log("READY " + args.incarnation());
    args.awaitShutdown();
    worker.stop(Duration.ofSeconds(10));
    boxline.close();
    recordPool.close();
    boxlinePool.close();
    ChildMain.log("STOPPED");
    System.exit(0);
  }
}
