package io.boxline.demo;

import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.PrintStream;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * Boxline end to end on a real PostgreSQL: producer threads write an order row and publish an
 * {@link OrderPlaced} event in the same transaction (some roll back on purpose), two subscriptions
 * ("billing" and "shipping") consume concurrently, and at the end {@link DemoCheck} verifies that
 * each saw every committed event exactly once, none of the rolled-back ones, and everything in
 * order.
 *
 * <p>{@code --scenario takeover} gives billing two members instead and kills one mid-run ({@link
 * Takeover}): the other takes over, and only what the dead one had handled without committing may
 * come twice. {@code --coordination} chooses where the groups keep membership and leases ({@link
 * DemoCoordination}).
 *
 * <p>Run it with {@code ./mvnw -q -pl boxline-demo -am install -DskipTests && ./mvnw -q -pl
 * boxline-demo exec:java}; options go in {@code -Dexec.args="--events 5000"} (see {@code --help}).
 * Without {@code --jdbc-url} it starts an embedded PostgreSQL ({@link DemoDatabase}), so nothing
 * needs to be installed.
 */
public final class Demo {
  static final NamespacePath NAMESPACE = NamespacePath.of("acme/shop");
  static final TopicName ORDERS = TopicName.of(NAMESPACE, "orders");
  static final List<String> SUBSCRIPTIONS = List.of("billing", "shipping");

  /** OrderPlaced is "order.placed" on acme/shop/orders, keyed by customer: one partition each. */
  static final EventTypes TYPES =
      EventTypes.builder()
          .register(
              EventType.of(OrderPlaced.class, "order.placed", ORDERS).key(OrderPlaced::customerId))
          .build();

  /** Each consumer's worker threads and events per batch. */
  static final int CONCURRENCY = 4, BATCH_SIZE = 200;

  /** Exit codes. */
  static final int OK = 0, VERIFICATION_FAILED = 1, BAD_ARGUMENTS = 2, ERROR = 3;

  private final DemoOptions options;
  private final PrintStream out;

  private Demo(DemoOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  private int execute() throws Exception {
    try (DemoDatabase db = DemoDatabase.open(options, out); // embedded, or --jdbc-url
        DemoCoordination coordination = DemoCoordination.open(options, db, out);
        Boxline boxline =
            coordination
                .configure(Boxline.builder())
                .store(JdbcStore.builder(db.pool()).schema(db.boxlineSchema).build())
                .eventTypes(TYPES)
                .build()
                .start(); // creates Boxline's tables in its schema
        DemoCheck check = new DemoCheck(options, out, db)) {
      Admin admin = boxline.admin();
      admin.createNamespace(NAMESPACE);
      admin.createTopic(ORDERS, options.partitions);
      List<Consumer> consumers = new ArrayList<>();
      Takeover takeover = null;
      try {
        for (String s : SUBSCRIPTIONS) {
          admin.createSubscription(SubscriptionSpec.of(s, ORDERS)); // from the earliest event
          if (options.scenario == DemoOptions.Scenario.takeover
              && s.equals(Takeover.SUBSCRIPTION)) {
            takeover = Takeover.start(out, db, coordination, boxline, check.deliveries(s, TYPES));
            continue; // its two members run in Boxline instances of their own
          }
          consumers.add(
              boxline
                  .consumer(s)
                  .handler(check.handler(s, TYPES))
                  .concurrency(CONCURRENCY)
                  .batchSize(BATCH_SIZE)
                  .start());
        }
        check.start(SUBSCRIPTIONS, ORDERS);
        if (takeover != null) {
          takeover.run(check::published, options.events, check::stamp);
        }
        check.runProducers(orders -> produce(boxline, db, orders)); // one thread per --producers
        if (!check.awaitDrained(boxline)) {
          return VERIFICATION_FAILED;
        }
        List<PartitionLag> lag = boxline.admin().lag(SUBSCRIPTIONS.get(0)); // the log's heads
        consumers.forEach(Consumer::close); // no delivery after this
        if (takeover != null) {
          takeover.close();
        }
        return check.verify(boxline.stats(), lag, takeover);
      } finally {
        if (takeover != null) {
          takeover.close(); // again is harmless; here for a failure on the way
        }
      }
    } // closes Boxline (consumers still running, then the sequencer), drops the schemas
  }

  /** One producer thread: its orders, each committed or rolled back with its event. */
  private void produce(Boxline boxline, DemoDatabase db, DemoCheck.Orders orders) throws Exception {
    for (int done = 0; done < orders.quota(); ) {
      boolean decline = orders.decline();
      OrderPlaced order = orders.next();
      PublishResult result;
      if (options.plainJdbc) {
        // Any connection with auto-commit off works (Spring, jOOQ … do the same); the sequencer
        // learns of the commit by polling its tail, so a little more latency than inTransaction.
        try (Connection tx = db.pool().getConnection()) {
          tx.setAutoCommit(false);
          db.insertOrder(tx, order);
          result = boxline.publisher().publish(tx, order); // the row and its event, one transaction
          if (decline) {
            tx.rollback();
          } else {
            tx.commit();
          }
        }
      } else {
        // inTransaction commits (or rolls back on an exception) and wakes the sequencer at once.
        try {
          result =
              boxline.inTransaction(
                  tx -> {
                    db.insertOrder(tx, order);
                    PublishResult r = boxline.publisher().publish(tx, order);
                    if (decline) {
                      throw new PaymentDeclined(r); // rolls back the row and the event
                    }
                    return r;
                  });
        } catch (PaymentDeclined e) {
          result = e.published;
        }
      }
      orders.placed(order, result, !decline);
      done += decline ? 0 : 1;
    }
  }

  /** Thrown inside a transaction to roll it back on purpose. */
  private static final class PaymentDeclined extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient PublishResult published;

    PaymentDeclined(PublishResult published) {
      super("payment declined", null, false, false);
      this.published = published;
    }
  }

  public static void main(String[] args) {
    oneLineLogs();
    int code = run(System.out, args);
    System.out.flush();
    if (code != OK) {
      System.exit(code); // returning normally on success lets `mvn exec:java` finish cleanly
    }
  }

  /** Runs the demo and returns its exit code (0 when everything was verified). */
  public static int run(String... args) {
    return run(System.out, args);
  }

  /** {@link #run(String...)} printing to {@code out}. */
  public static int run(PrintStream out, String... args) {
    DemoOptions options = DemoOptions.parse(out, args); // null after a bad argument
    if (options == null || options.help) {
      return options == null ? BAD_ARGUMENTS : OK;
    }
    try {
      return new Demo(options, out).execute();
    } catch (Exception e) {
      return failed(out, e);
    }
  }

  /** Prints why the demo could not finish; returns the exit code for it. */
  static int failed(PrintStream out, Exception e) {
    out.println();
    if (e instanceof DemoDatabase.CannotRun) {
      out.println("FAILED: " + e.getMessage());
    } else {
      Throwable t = e instanceof ExecutionException ? e.getCause() : e;
      String what = t == e ? "the demo could not run" : "a producer failed";
      out.println("FAILED: " + what + ": " + t);
      t.printStackTrace(out);
    }
    return Demo.ERROR;
  }

  /** Boxline logs through System.Logger (java.util.logging here): one line per record. */
  static void oneLineLogs() {
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s %3$s: %5$s%6$s%n");
    }
  }
}
