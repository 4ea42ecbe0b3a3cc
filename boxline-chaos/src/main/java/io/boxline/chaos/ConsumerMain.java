package io.boxline.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.BatchFailure;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.RetryPolicy;
import io.boxline.testkit.process.ChildMain;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Child: one member of the consumer groups of both subscriptions. {@code effects} writes one effect
 * row per event in Boxline's transaction (the cursor moves in the same commit: exactly once);
 * {@code deliveries} records every delivery with its own insert before returning (at least once),
 * and fails the designed poison events every time, so that they end as dead letters with a cause.
 */
public final class ConsumerMain {
  private ConsumerMain() {}

  public static void main(String[] argv) throws Exception {
    ChildArgs args = ChildArgs.parse(argv);
    String schema = args.schema();
    String member = args.memberId();
    int batch = args.batch;
    int concurrency = args.concurrency;
    HikariDataSource boxlinePool = args.waitingPool("boxline", 2 * concurrency + 6);
    HikariDataSource recordPool = args.waitingPool("record", concurrency + 1);
    Boxline boxline = args.startBoxline(boxlinePool, true);

    String effectSql = "INSERT INTO " + schema + ".chaos_effect (event_id, member) VALUES (?, ?)";
    Consumer effects =
        ChildArgs.retry(
            "start the effects consumer",
            () ->
                boxline
                    .consumer(ChaosNames.EFFECTS)
                    .id(member)
                    .batchSize(batch)
                    .concurrency(concurrency)
                    .transactionalHandler(
                        (event, tx) -> {
                          try (PreparedStatement ps = tx.prepareStatement(effectSql)) {
                            ps.setString(1, event.id().toString());
                            ps.setString(2, args.incarnation());
                            ps.executeUpdate();
                          }
                        })
                    .start());

    String deliverySql =
        "INSERT INTO " + schema + ".chaos_delivery (event_id, member) VALUES (?, ?)";
    Consumer deliveries =
        ChildArgs.retry(
            "start the deliveries consumer",
            () ->
                boxline
                    .consumer(ChaosNames.DELIVERIES)
                    .id(member)
                    .batchSize(batch)
                    .concurrency(concurrency)
                    .retryPolicy(
                        // About nine seconds of retries: longer than a database restart, so
                        // only the poison events (which always fail) become dead letters.
                        RetryPolicy.exponential(Duration.ofMillis(200), Duration.ofSeconds(2))
                            .inPlaceAttempts(2)
                            .maxAttempts(8))
                    .batchHandler(
                        events -> {
                          record(recordPool, deliverySql, events, args.incarnation());
                          failPoison(events);
                        })
                    .start());

    args.reportEvery(
        () -> {
          Map<String, Long> m = new LinkedHashMap<>();
          m.put("effectsHandled", effects.handledCount());
          m.put("effectsFenced", effects.fencedCount());
          m.put("effectsLost", effects.lostCount());
          m.put("deliveriesHandled", deliveries.handledCount());
          m.put("deliveriesFenced", deliveries.fencedCount());
          m.put("deliveriesLost", deliveries.lostCount());
          return m;
        });
    ChildMain.log("READY " + args.incarnation());
    args.awaitShutdown();
    effects.stop(Duration.ofSeconds(10));
    deliveries.stop(Duration.ofSeconds(10));
    boxline.close();
    recordPool.close();
    boxlinePool.close();
    ChildMain.log("STOPPED");
    System.exit(0);
  }

  /**
   * One auto-commit statement for the whole batch: the delivery record outside Boxline's commit.
   */
  private static void record(HikariDataSource pool, String sql, List<Event> events, String member) {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (Event e : events) {
        ps.setString(1, e.id().toString());
        ps.setString(2, member);
        ps.addBatch();
      }
      ps.executeBatch();
    } catch (SQLException e) {
      throw new IllegalStateException("could not record deliveries", e);
    }
  }

  private static void failPoison(List<Event> events) {
    BatchFailure.Builder failure = BatchFailure.builder();
    for (Event e : events) {
      if (ChaosNames.POISON_TYPE.equals(e.type())) {
        failure.failed(e, new IllegalStateException(ChaosNames.POISON_ERROR));
      }
    }
    if (!failure.isEmpty()) {
      throw failure.build();
    }
  }
}
