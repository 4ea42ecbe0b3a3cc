package io.boxline.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TaskOptions;
import io.boxline.TopicName;
import io.boxline.testkit.process.ChildMain;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Child: a producer. Each of its threads owns its keys and runs one transaction at a time through
 * {@code inTransaction}: a business row ({@code chaos_order}) and its events (1..maxEvents, one
 * key, on the sequencer topic or the in-transaction topic), sometimes a task, sometimes idempotency
 * keys; some transactions are rolled back on purpose, and some committed idempotent events are
 * published again with the same key in a later transaction. The database is the only record of what
 * committed: the checker derives every expected event from the committed business rows.
 */
public final class ProducerMain {
  /** Thrown inside the work to roll a transaction back on purpose. */
  private static final class DesignedRollback extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DesignedRollback() {
      super("designed rollback", null, false, false);
    }
  }

  /** A committed idempotent event that may be published once more. */
  private record Resendable(String orderId, TopicName topic, String key) {}

  private final ChildArgs args;
  private final Boxline boxline;
  private final HikariDataSource pool;
  private final String schema;
  private final AtomicLong committedOrders = new AtomicLong();
  private final AtomicLong committedEvents = new AtomicLong();
  private final AtomicLong rolledBack = new AtomicLong();
  private final AtomicLong resends = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();

  private ProducerMain(ChildArgs args, HikariDataSource pool, Boxline boxline) {
    this.args = args;
    this.pool = pool;
    this.boxline = boxline;
    this.schema = args.schema();
  }

  public static void main(String[] argv) throws Exception {
    ChildArgs args = ChildArgs.parse(argv);
    int threads = args.threads;
    HikariDataSource pool = args.waitingPool("producer", threads + 4);
    Boxline boxline = args.startBoxline(pool, true);
    ProducerMain producer = new ProducerMain(args, pool, boxline);
    args.reportEvery(producer::counters);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread w = new Thread(() -> producer.produce(thread, threads), "chaos-produce-" + t);
      w.start();
      workers.add(w);
    }
    ChildMain.log("READY " + args.incarnation());
    args.awaitShutdown();
    for (Thread w : workers) {
      w.join(Duration.ofSeconds(20).toMillis());
    }
    args.writeStatus(producer.counters());
    boxline.close();
    pool.close();
    ChildMain.log("STOPPED " + producer.counters());
    System.exit(0);
  }

  private Map<String, Long> counters() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("orders", committedOrders.get());
    m.put("events", committedEvents.get());
    m.put("rolledBack", rolledBack.get());
    m.put("resends", resends.get());
    m.put("failures", failures.get());
    return m;
  }

  private void produce(int thread, int threads) {
    int index = args.index;
    int run = args.run;
    Random rnd = new Random(args.seed * 1_000_003L + index * 7919L + run * 131L + thread);
    double perThreadRate = args.rate / (double) threads;
    long intervalNanos = (long) (1e9 / perThreadRate);
    int maxEvents = args.maxEvents;
    int keys = args.keys;
    Deque<Resendable> resendable = new ArrayDeque<>();
    long step = 0;
    long next = System.nanoTime();
    while (!args.shuttingDown()) {
      // Pacing only: keeps the producers from starving the consumers on two cores.
      long wait = next - System.nanoTime();
      if (wait > 0) {
        ChildArgs.sleepQuietly(Duration.ofNanos(wait));
      }
      double dice = rnd.nextDouble();
      try {
        if (dice < 0.03 && !resendable.isEmpty()) {
          resend(resendable.pollFirst());
          next += intervalNanos;
          continue;
        }
        step++;
        TopicName topic = rnd.nextBoolean() ? ChaosNames.ORDERS : ChaosNames.ALERTS;
        String key = "p" + index + "-t" + thread + "-k" + rnd.nextInt(keys);
        int events = 1 + rnd.nextInt(maxEvents);
        boolean idempotent = rnd.nextDouble() < 0.10;
        int poison = rnd.nextDouble() < 0.002 ? rnd.nextInt(events) : -1;
        boolean task = rnd.nextDouble() < 0.10;
        boolean rollback = rnd.nextDouble() < 0.05;
        Order order =
            new Order(
                UUID.randomUUID().toString(),
                index,
                run,
                thread,
                step,
                topic,
                key,
                events,
                idempotent,
                poison,
                task);
        next += intervalNanos * events;
        if (rollback) {
          try {
            boxline.inTransaction(
                tx -> {
                  write(tx, order);
                  throw new DesignedRollback();
                });
          } catch (RuntimeException e) {
            if (!isDesigned(e)) {
              throw e;
            }
            recordRollback(order);
          }
          continue;
        }
        boxline.inTransaction(tx -> write(tx, order));
        committedOrders.incrementAndGet();
        committedEvents.addAndGet(events);
        if (idempotent && resendable.size() < 1000) {
          resendable.addLast(new Resendable(order.id(), topic, key));
        }
      } catch (RuntimeException e) {
        // Database restarting, connection killed, sequencer moving: the outcome of this
        // transaction is whatever the database says; back off and go on.
        failures.incrementAndGet();
        ChildArgs.sleepQuietly(Duration.ofMillis(200));
        next = System.nanoTime();
      }
    }
  }

  /** The work of one transaction: the business row, its events, maybe a task. */
  private Void write(Connection tx, Order order) throws SQLException {
    for (int i = 0; i < order.events(); i++) {
      OutgoingEvent.Builder e =
          OutgoingEvent.builder(order.topic())
              .id(ChaosNames.eventId(order.id(), i))
              .key(order.key())
              .type(i == order.poison() ? ChaosNames.POISON_TYPE : ChaosNames.EVENT_TYPE)
              .contentType("application/json")
              .payload(
                  ("{\"order\":\"" + order.id() + "\",\"i\":" + i + "}")
                      .getBytes(StandardCharsets.UTF_8));
      if (order.idempotent()) {
        e.idempotencyKey(ChaosNames.idempotencyKey(order.id(), i));
      }
      boxline.publisher().publish(tx, e.build());
    }
    String taskId = null;
    if (order.task()) {
      PublishResult r =
          boxline
              .tasks()
              .schedule(
                  tx,
                  ChaosNames.TASK_TYPE,
                  Map.of("order", order.id()),
                  TaskOptions.options()
                      .orderingKey(order.key())
                      .idempotencyKey("task-" + order.id()));
      taskId = r.eventId().toString();
    }
    try (PreparedStatement ps =
        tx.prepareStatement(
            "INSERT INTO "
                + schema
                + ".chaos_order (order_id, producer, run, thread, step, topic, ev_key, events,"
                + " idem, poison, task_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      ps.setString(1, order.id());
      ps.setInt(2, order.producer());
      ps.setInt(3, order.run());
      ps.setInt(4, order.thread());
      ps.setLong(5, order.step());
      ps.setString(6, order.topic().toString());
      ps.setString(7, order.key());
      ps.setInt(8, order.events());
      ps.setInt(9, order.idempotent() ? 1 : 0);
      ps.setInt(10, order.poison());
      ps.setString(11, taskId);
      ps.executeUpdate();
    }
    return null;
  }

  /**
   * Publishes event 0 of a committed idempotent order again, under a new event id and the same
   * idempotency key, and records what {@code publish} answered in the same transaction.
   */
  private void resend(Resendable r) {
    UUID attempt = UUID.randomUUID();
    boxline.inTransaction(
        tx -> {
          PublishResult result =
              boxline
                  .publisher()
                  .publish(
                      tx,
                      OutgoingEvent.builder(r.topic())
                          .id(attempt)
                          .key(r.key())
                          .type(ChaosNames.EVENT_TYPE)
                          .contentType("application/json")
                          .payload(
                              ("{\"resend\":\"" + r.orderId() + "\"}")
                                  .getBytes(StandardCharsets.UTF_8))
                          .idempotencyKey(ChaosNames.idempotencyKey(r.orderId(), 0))
                          .build());
          try (PreparedStatement ps =
              tx.prepareStatement(
                  "INSERT INTO "
                      + schema
                      + ".chaos_resend (order_id, sent_id, returned_id, duplicate)"
                      + " VALUES (?, ?, ?, ?)")) {
            ps.setString(1, r.orderId());
            ps.setString(2, attempt.toString());
            ps.setString(3, result.eventId().toString());
            ps.setInt(4, result.duplicate() ? 1 : 0);
            ps.executeUpdate();
          }
          return null;
        });
    resends.incrementAndGet();
  }

  /** Best effort (a kill may lose it): lets the checker prove rolled-back events are absent. */
  private void recordRollback(Order order) {
    rolledBack.incrementAndGet();
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO " + schema + ".chaos_rolled_back (order_id, events) VALUES (?, ?)")) {
      ps.setString(1, order.id());
      ps.setInt(2, order.events());
      ps.executeUpdate();
    } catch (SQLException e) {
      ChildMain.log("rollback not recorded: " + e);
    }
  }

  private static boolean isDesigned(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof DesignedRollback) {
        return true;
      }
    }
    return false;
  }

  /** One business transaction. */
  private record Order(
      String id,
      int producer,
      int run,
      int thread,
      long step,
      TopicName topic,
      String key,
      int events,
      boolean idempotent,
      int poison,
      boolean task) {}
}
