package io.boxline.demo;

import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import io.boxline.PartitionLag;
import io.boxline.Partitioner;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import java.io.PrintStream;
import java.sql.SQLException;
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
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's self-verification: it records what the producers committed and rolled back and what
 * each subscription's handler was given, prints progress once a second, and at the end prints
 * throughput and latency and checks that every subscription saw every committed event exactly once,
 * none of the rolled-back ones, each partition's sequences without a gap and each customer's orders
 * in the order they were committed.
 */
final class DemoCheck implements AutoCloseable {
  private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(120);

  private final DemoOptions options;
  private final PrintStream out;
  private final DemoDatabase database;
  private final Map<String, Deliveries> deliveries = new LinkedHashMap<>();
  private final ScheduledExecutorService reporter =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "demo-progress");
            t.setDaemon(true);
            return t;
          });

  /** System.nanoTime() right after each commit, by event id. */
  private final Map<UUID, Long> commitNanos = new ConcurrentHashMap<>();

  private final Map<UUID, OrderPlaced> committed = new ConcurrentHashMap<>();
  private final Set<UUID> rolledBack = ConcurrentHashMap.newKeySet();
  private final Set<String> rolledBackOrderIds = ConcurrentHashMap.newKeySet();

  /** Last committed customerSeq per customer, and the partition its events went to. */
  private final Map<String, Long> lastSeqByCustomer = new ConcurrentHashMap<>();

  private final Map<String, Integer> partitionByCustomer = new ConcurrentHashMap<>();
  private final AtomicLong committedCount = new AtomicLong();
  private final AtomicLong rolledBackCount = new AtomicLong();
  private final List<String> failures = new ArrayList<>();
  private long startNanos;
  private long producersDone;

  DemoCheck(DemoOptions options, PrintStream out, DemoDatabase database) {
    this.options = options;
    this.out = out;
    this.database = database;
  }

  /** The producers start: time runs from here, and a progress line is printed every second. */
  void start(List<String> subscriptions, TopicName topic) {
    out.printf(
        Locale.ROOT,
        "Publishing %d orders from %d producers (%d customers, ~%d%% of transactions rolled back)"
            + " to %s (%d partitions) with %s;%nsubscriptions %s consume concurrently.%n",
        options.events,
        options.producers,
        options.customers,
        options.rollbackPercent,
        topic,
        options.partitions,
        options.plainJdbc
            ? "plain JDBC (setAutoCommit(false), insert, publish, commit)"
            : "boxline.inTransaction(...)",
        String.join(" and ", subscriptions));
    startNanos = System.nanoTime();
    reporter.scheduleAtFixedRate(new Progress(), 1, 1, TimeUnit.SECONDS);
  }

  /** The handler of {@code subscription}: it records each delivery. */
  EventHandler handler(String subscription, EventTypes types) {
    return deliveries.computeIfAbsent(subscription, s -> new Deliveries(s, types));
  }

  // -- What the producers did --------------------------------------------------------------------

  /**
   * The orders of one producer thread. Customers are split between producers (customer i belongs to
   * producer i mod producers), so each customer's orders commit one after another and their order
   * is known: {@code customerSeq} 1, 2, 3 … counts committed orders only.
   */
  final class Orders {
    private final int producer;
    private final List<String> customers = new ArrayList<>();
    private final long[] nextSeq;
    private final ThreadLocalRandom random = ThreadLocalRandom.current();
    private long attempt;
    private int last;

    Orders(int producer) {
      this.producer = producer;
      for (int i = producer; i < options.customers; i += options.producers) {
        customers.add(String.format(Locale.ROOT, "customer-%04d", i));
      }
      nextSeq = new long[customers.size()];
      Arrays.fill(nextSeq, 1);
    }

    /** Committed orders this producer is to publish. */
    int quota() {
      return options.events / options.producers
          + (producer < options.events % options.producers ? 1 : 0);
    }

    /** Whether the next transaction is to be rolled back on purpose. */
    boolean decline() {
      return random.nextInt(100) < options.rollbackPercent;
    }

    OrderPlaced next() {
      last = random.nextInt(customers.size());
      return new OrderPlaced(
          "order-" + producer + "-" + ++attempt,
          customers.get(last),
          nextSeq[last],
          100 + random.nextInt(99_900));
    }

    /** Records what became of the last order; a rolled-back one's number is used again. */
    void placed(OrderPlaced order, PublishResult result, boolean committedIt) {
      if (!committedIt) {
        rolledBack.add(result.eventId());
        rolledBackOrderIds.add(order.orderId());
        rolledBackCount.incrementAndGet();
        return;
      }
      commitNanos.put(result.eventId(), System.nanoTime());
      committed.put(result.eventId(), order);
      lastSeqByCustomer.put(order.customerId(), order.customerSeq());
      partitionByCustomer.putIfAbsent(order.customerId(), result.partition());
      committedCount.incrementAndGet();
      nextSeq[last]++;
    }
  }

  /** What a producer thread does with its orders. */
  @FunctionalInterface
  interface Producer {
    void produce(Orders orders) throws Exception;
  }

  /**
   * Runs {@code --producers} threads, each with its share of the orders, until all are done;
   * publishing time ends here. The first producer failure is thrown (an ExecutionException).
   */
  void runProducers(Producer producer) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(options.producers);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int p = 0; p < options.producers; p++) {
        Orders orders = new Orders(p);
        running.add(
            threads.submit(
                () -> {
                  producer.produce(orders);
                  return null;
                }));
      }
      for (Future<?> f : running) {
        f.get();
      }
      producersDone = System.nanoTime();
    } finally {
      threads.shutdownNow();
    }
  }

  // -- Progress and waiting ----------------------------------------------------------------------

  /** Prints one progress line a second. */
  private final class Progress implements Runnable {
    private long lastPublished;

    @Override
    public void run() {
      long now = System.nanoTime();
      long done = committedCount.get();
      StringBuilder line =
          new StringBuilder(
              String.format(
                  Locale.ROOT,
                  "[%5.1fs] published %7d (+%6d, %5d rolled back)",
                  (now - startNanos) / 1e9,
                  done,
                  done - lastPublished,
                  rolledBackCount.get()));
      lastPublished = done;
      for (Deliveries d : deliveries.values()) {
        line.append(
            String.format(
                Locale.ROOT,
                " | %s %7d (behind %6d)",
                d.subscription(),
                d.count(),
                Math.max(0, done - d.count())));
      }
      out.println(line);
    }
  }

  /** Waits, bounded, until every subscription handled every committed event. */
  boolean awaitDrained(Boxline boxline) throws InterruptedException {
    long target = committedCount.get();
    long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (deliveries.values().stream().allMatch(d -> d.count() >= target) && noBacklog(boxline)) {
        close();
        return true;
      }
      Thread.sleep(20); // polling a condition, with a deadline
    }
    close();
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

  private boolean noBacklog(Boxline boxline) {
    for (String s : deliveries.keySet()) {
      for (PartitionLag l : boxline.admin().lag(s)) {
        if (l.backlog() > 0) {
          return false;
        }
      }
    }
    return true;
  }

  /** Stops the progress lines. */
  @Override
  public void close() {
    reporter.shutdownNow();
    try {
      reporter.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // -- Results -----------------------------------------------------------------------------------

  /**
   * Prints the results and the checks, with {@code lag} read (for the log's heads) before the
   * consumers stopped; returns the exit code.
   */
  int verify(BoxlineStats stats, List<PartitionLag> lag) throws SQLException {
    printResults(stats);
    out.println();
    out.println("Verification");
    long n = committedCount.get();

    // 1. The business table: the committed orders and none of the rolled-back ones.
    long[] rows = database.countOrders(List.copyOf(rolledBackOrderIds));
    check(
        rows[0] == n && rows[1] == 0,
        "orders table holds the " + n + " committed orders and no rolled-back one",
        "orders table holds " + rows[0] + " rows (" + rows[1] + " rolled back)");

    // 2. The log: exactly the committed events, sequenced per partition.
    long logged = lag.stream().mapToLong(PartitionLag::lastSequence).sum();
    check(
        logged == n,
        "the log holds " + n + " events in " + lag.size() + " partitions",
        "the log holds " + logged + " events, expected " + n);

    Map<Integer, Long> lastSequence = new HashMap<>();
    for (PartitionLag l : lag) {
      lastSequence.put(l.partition(), l.lastSequence());
    }
    for (Deliveries d : deliveries.values()) {
      verifySubscription(d, lastSequence);
    }
    return report();
  }

  private void printResults(BoxlineStats stats) {
    long n = committedCount.get();
    long lastHandled = Long.MIN_VALUE;
    for (Deliveries d : deliveries.values()) {
      lastHandled = Math.max(lastHandled, d.lastNanos());
    }
    double publishSeconds = (producersDone - startNanos) / 1e9;
    double endToEndSeconds = (lastHandled - startNanos) / 1e9;
    out.println();
    out.println("Results");
    out.printf(
        Locale.ROOT,
        "  events published (committed)   %8d in %5.1f s  (%.0f transactions/s)%n",
        n,
        publishSeconds,
        n / publishSeconds);
    out.printf(
        Locale.ROOT,
        "  transactions rolled back       %8d  (their order rows and events must not exist)%n",
        rolledBackCount.get());
    for (Deliveries d : deliveries.values()) {
      long[] latencies = latenciesNanos(d);
      out.printf(
          Locale.ROOT,
          "  events consumed by %-11s %8d  commit-to-handler latency p50 %6.1f ms, p99 %6.1f ms,"
              + " max %6.1f ms%n",
          d.subscription(),
          d.count(),
          percentile(latencies, 50) / 1e6,
          percentile(latencies, 99) / 1e6,
          percentile(latencies, 100) / 1e6);
    }
    out.printf(
        Locale.ROOT,
        "  end to end                     %8d events through both subscriptions in %.1f s ="
            + " %.0f events/s%n",
        n,
        endToEndSeconds,
        n / endToEndSeconds);
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
      Long committedAt = commitNanos.get(x.id());
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

  private void verifySubscription(Deliveries d, Map<Integer, Long> lastSequence) {
    String s = d.subscription();
    List<Deliveries.Delivery> all = d.snapshot();
    long n = committedCount.get();

    // Exactly once, nothing rolled back, nothing unknown.
    Map<UUID, Integer> times = new HashMap<>();
    for (Deliveries.Delivery x : all) {
      times.merge(x.id(), 1, Integer::sum);
    }
    long duplicates = times.values().stream().filter(k -> k > 1).count();
    long missing = committed.keySet().stream().filter(id -> !times.containsKey(id)).count();
    long rolledBackSeen = times.keySet().stream().filter(rolledBack::contains).count();
    long unknown =
        times.keySet().stream()
            .filter(id -> !committed.containsKey(id))
            .filter(id -> !rolledBack.contains(id))
            .count();
    check(
        all.size() == n && duplicates + missing + rolledBackSeen + unknown == 0,
        s + ": each of the " + n + " committed events exactly once, no rolled-back one",
        String.format(
            Locale.ROOT,
            "%s: %d deliveries for %d committed events: %d missing, %d duplicated,"
                + " %d rolled back, %d unknown",
            s,
            all.size(),
            n,
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
      Integer partition = partitionByCustomer.get(o.customerId());
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
    if (keyProblem == null && !seenCustomerSeq.equals(lastSeqByCustomer)) {
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
              + committedCount.get()
              + " events delivered exactly once and in order to "
              + String.join(" and ", deliveries.keySet())
              + "; "
              + rolledBackCount.get()
              + " rolled-back events never delivered.");
      return Demo.OK;
    }
    out.println("FAILED: " + failures.size() + " check(s) failed:");
    for (String f : failures) {
      out.println("  - " + f);
    }
    return Demo.VERIFICATION_FAILED;
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

  /** The {@code p}th percentile (nearest rank) of sorted values; 0 when there are none. */
  static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }
}
