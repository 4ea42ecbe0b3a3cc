package io.boxline.demo;

import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.EventHandler;
import io.boxline.EventTypes;
import io.boxline.PartitionLag;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's self-verification: it records what the producers committed and rolled back and what
 * each subscription's handlers were given, prints progress once a second, and at the end prints
 * throughput and latency ({@link Results}) and checks that every subscription saw every committed
 * event exactly once, none of the rolled-back ones, each partition's sequences without a gap and
 * each customer's orders in the order they were committed ({@link SubscriptionCheck}); after a
 * takeover, only the killed member's unfinished work may come twice.
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

  /** What {@code subscription}'s handlers are given; each member's handler records there. */
  Deliveries deliveries(String subscription, EventTypes types) {
    return deliveries.computeIfAbsent(subscription, s -> new Deliveries(s, types));
  }

  /** The handler of {@code subscription}'s only consumer: it records each delivery. */
  EventHandler handler(String subscription, EventTypes types) {
    return deliveries(subscription, types).handler(subscription);
  }

  /** Committed orders so far. */
  long published() {
    return committedCount.get();
  }

  /** The time since the producers started, as the progress lines show it. */
  String stamp() {
    return String.format(Locale.ROOT, "[%5.1fs]", (System.nanoTime() - startNanos) / 1e9);
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
                d.distinctCount(),
                Math.max(0, done - d.distinctCount())));
      }
      out.println(line);
    }
  }

  /** Waits, bounded, until every subscription handled every committed event. */
  boolean awaitDrained(Boxline boxline) throws InterruptedException {
    long target = committedCount.get();
    long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (deliveries.values().stream().allMatch(d -> d.distinctCount() >= target)
          && noBacklog(boxline)) {
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
      msg.append(' ').append(d.subscription()).append(' ').append(d.distinctCount()).append('/');
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
   * consumers stopped and {@code takeover} (null in the steady scenario) stopped; returns the exit
   * code.
   */
  int verify(BoxlineStats stats, List<PartitionLag> lag, Takeover takeover) throws SQLException {
    long n = committedCount.get();
    Results.print(
        out,
        stats,
        n,
        rolledBackCount.get(),
        deliveries.values(),
        commitNanos,
        startNanos,
        producersDone);
    out.println();
    out.println("Verification");
    Verdicts verdicts = new Verdicts(out);

    // 1. The business table: the committed orders and none of the rolled-back ones.
    long[] rows = database.countOrders(List.copyOf(rolledBackOrderIds));
    verdicts.check(
        rows[0] == n && rows[1] == 0,
        "orders table holds the " + n + " committed orders and no rolled-back one",
        "orders table holds " + rows[0] + " rows (" + rows[1] + " rolled back)");

    // 2. The log: exactly the committed events, sequenced per partition.
    long logged = lag.stream().mapToLong(PartitionLag::lastSequence).sum();
    verdicts.check(
        logged == n,
        "the log holds " + n + " events in " + lag.size() + " partitions",
        "the log holds " + logged + " events, expected " + n);

    Map<Integer, Long> lastSequence = new HashMap<>();
    for (PartitionLag l : lag) {
      lastSequence.put(l.partition(), l.lastSequence());
    }
    SubscriptionCheck.Crash crash = null;
    if (takeover != null) {
      takeover.verify(verdicts, lastSequence);
      crash = takeover.crash();
    }

    // 3. Each subscription: everything committed, in order; duplicates only from the crash.
    SubscriptionCheck subscriptions =
        new SubscriptionCheck(
            new SubscriptionCheck.Ledger(
                Map.copyOf(committed),
                Set.copyOf(rolledBack),
                Map.copyOf(lastSeqByCustomer),
                Map.copyOf(partitionByCustomer),
                options.partitions),
            verdicts);
    Map<String, Long> duplicates = new LinkedHashMap<>();
    for (Deliveries d : deliveries.values()) {
      boolean crashed = takeover != null && d.subscription().equals(Takeover.SUBSCRIPTION);
      duplicates.put(
          d.subscription(),
          subscriptions.verify(
              d.subscription(), d.snapshot(), lastSequence, crashed ? crash : null));
    }
    return verdicts.report(verified(duplicates, crash));
  }

  /** The last line when every check passed. */
  private String verified(Map<String, Long> duplicates, SubscriptionCheck.Crash crash) {
    String subscriptions = String.join(" and ", deliveries.keySet());
    if (crash == null) {
      return String.format(
          Locale.ROOT,
          "VERIFIED: %d events delivered exactly once and in order to %s; %d rolled-back events"
              + " never delivered.",
          committedCount.get(),
          subscriptions,
          rolledBackCount.get());
    }
    List<String> exactlyOnce = new ArrayList<>();
    duplicates.forEach((s, k) -> exactlyOnce.addAll(k == 0 ? List.of(s) : List.of()));
    long twice = duplicates.getOrDefault(Takeover.SUBSCRIPTION, 0L);
    return String.format(
        Locale.ROOT,
        "VERIFIED: %d events delivered in order to %s, none lost, although %s was killed:"
            + " exactly once to %s%s; %d rolled-back events never delivered.",
        committedCount.get(),
        subscriptions,
        crash.killed(),
        String.join(" and ", exactlyOnce),
        twice == 0
            ? ""
            : String.format(
                Locale.ROOT,
                ", to %s with %d of them twice (bound %d)",
                Takeover.SUBSCRIPTION,
                twice,
                crash.bound()),
        rolledBackCount.get());
  }
}
