package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spring.BoxlineListener;
import io.boxline.spring.BoxlineListenerRegistrar;
import io.boxline.spring.BoxlineOutbox;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import javax.sql.DataSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SP1: what the Spring layer costs. The same work through two paths, alternating in one run:
 * <b>jdbc</b> — a producer commits its own connection and calls {@code publisher().publish(c, …)},
 * a plain consumer handles; <b>spring</b> — a {@code TransactionTemplate} on a {@code
 * DataSourceTransactionManager}, the business row through the transaction's connection and the
 * event through {@link BoxlineOutbox}, a {@link BoxlineListener} bean handles. Throughput (as W1: a
 * business row and T events per transaction, to the last event handled) with the JVM's CPU per
 * 1,000 events, and latency (as W2: a paced producer, commit returned → handler) for both.
 */
final class SP1SpringPath extends Trials {
  private static final Workload.Definition DEF = Workload.define("sp1", Bench.Suite.W);

  static final Opt<Integer> EVENTS = DEF.integer("events", 50_000, "events per throughput trial");
  static final Opt<Integer> WARMUP = DEF.integer("warmup", 5_000, "events of the warm-up trials");
  static final Opt<Integer> THREADS = DEF.integer("threads", 4, "producer threads");
  static final Opt<Integer> RUNS = DEF.integer("runs", 3, "runs of both paths per configuration");
  static final Opt<int[]> TXN = DEF.ints("txn", "1,10", "events per transaction (a list)");
  static final Opt<Integer> RATE = DEF.integer("rate", 500, "latency trials: events per second");
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 10, "latency trials: seconds each");
  static final Opt<Integer> CONCURRENCY = DEF.concurrency(8);

  static final Workload WORKLOAD =
      DEF.runs(
          "the Spring path (TransactionTemplate, BoxlineOutbox, @BoxlineListener) against plain"
              + " JDBC publishing and a plain consumer: throughput, CPU per event, latency",
          run -> onPool(run, "bench-sp1", pool -> new SP1SpringPath(run, pool).report()));

  private static final String[] PATHS = {"jdbc", "spring"};

  SP1SpringPath(Run run, DataSource pool) {
    super(run, pool, "sp1");
  }

  /** One trial's figures. */
  record Trial(String path, int txn, int run, int events, double seconds, double cpuMs) {}

  String report() throws Exception {
    List<Trial> trials = new ArrayList<>();
    for (int txn : o.get(TXN)) {
      for (String path : PATHS) {
        throughput(path, txn, o.get(WARMUP), 0);
      }
      for (int r = 1; r <= o.get(RUNS); r++) {
        for (String path : PATHS) {
          Trial t = throughput(path, txn, o.get(EVENTS), r);
          trials.add(t);
          Bench.log(
              "SP1 T=%d run %d %-6s: %s events/s, JVM CPU %.0f ms per 1,000 events",
              txn, r, path, Stats.rate(t.events / t.seconds), t.cpuMs * 1000 / t.events);
        }
      }
    }
    List<String[]> latency = new ArrayList<>();
    for (int r = 1; r <= o.get(RUNS); r++) {
      for (String path : PATHS) {
        long[] sorted = latency(path);
        latency.add(new String[] {String.valueOf(r), path, Stats.p50p99(sorted)});
        Bench.log("SP1 latency run %d %-6s: p50 / p99 %s ms", r, path, Stats.p50p99(sorted));
      }
    }
    return render(trials, latency);
  }

  private String render(List<Trial> trials, List<String[]> latency) {
    StringBuilder sb = new StringBuilder();
    sb.append(
        Stats.f(
            "## SP1 — the Spring path against plain JDBC%n%n%d producer threads, %,d events per"
                + " trial, consumer concurrency %d, batch 100; the paths alternate. CPU is this"
                + " JVM's (producers, Boxline, consumer), per 1,000 events.%n%n",
            o.get(THREADS), o.get(EVENTS), o.get(CONCURRENCY)));
    Table summary =
        new Table(
            "Events/txn",
            "jdbc events/s (median)",
            "spring events/s (median)",
            "spring / jdbc",
            "jdbc CPU ms / 1k (median)",
            "spring CPU ms / 1k (median)",
            "spring CPU / jdbc");
    for (int txn : o.get(TXN)) {
      double[] rate = new double[2];
      double[] cpu = new double[2];
      for (int p = 0; p < 2; p++) {
        String path = PATHS[p];
        rate[p] =
            Stats.median(
                trials.stream()
                    .filter(t -> t.txn == txn && t.path.equals(path))
                    .mapToDouble(t -> t.events / t.seconds)
                    .toArray());
        cpu[p] =
            Stats.median(
                trials.stream()
                    .filter(t -> t.txn == txn && t.path.equals(path))
                    .mapToDouble(t -> t.cpuMs * 1000 / t.events)
                    .toArray());
      }
      summary.row(
          txn,
          Stats.rate(rate[0]),
          Stats.rate(rate[1]),
          Stats.f("%.2f×", rate[1] / rate[0]),
          Stats.f("%.0f", cpu[0]),
          Stats.f("%.0f", cpu[1]),
          Stats.f("%.2f×", cpu[1] / cpu[0]));
    }
    sb.append(summary).append('\n');
    Table each = new Table("Events/txn", "Run", "Path", "Seconds", "Events/s", "CPU ms / 1k");
    for (Trial t : trials) {
      each.row(
          t.txn,
          t.run,
          t.path,
          Stats.f("%.2f", t.seconds),
          Stats.rate(t.events / t.seconds),
          Stats.f("%.0f", t.cpuMs * 1000 / t.events));
    }
    sb.append(each).append('\n');
    sb.append(
        Stats.f(
            "Latency: one producer at %d events/s for %d s, one event per transaction; commit"
                + " returned → handler called.%n%n",
            o.get(RATE), o.get(SECONDS)));
    Table lat = new Table("Run", "Path", "p50 / p99 (ms)");
    latency.forEach(row -> lat.row((Object[]) row));
    sb.append(lat);
    return sb.toString();
  }

  // ------------------------------------------------------------------ the two paths

  /** A trial's Boxline, consumer and producer transactions, for one path. */
  private final class Path implements AutoCloseable {
    final String schema = nextSchema();
    final TopicName topic = TopicName.of("bench", "events");
    final Boxline boxline;
    final Consumer consumer;
    final AnnotationConfigApplicationContext context;
    final TransactionTemplate template;
    final BoxlineOutbox outbox;
    final String business;

    Path(String path, LongConsumer handled) throws Exception {
      boxline =
          start(Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()), topic);
      db.exec(db.kind.businessDdl(schema));
      business = db.kind.businessInsert(schema);
      if (path.equals("jdbc")) {
        consumer =
            consumer(boxline, e -> handled.accept(index(e)), o.get(CONCURRENCY))
                .batchSize(100)
                .start();
        context = null;
        template = null;
        outbox = null;
      } else {
        consumer = null;
        PlatformTransactionManager tm = new DataSourceTransactionManager(pool);
        template = new TransactionTemplate(tm);
        outbox = new BoxlineOutbox(boxline, pool, tm);
        context = new AnnotationConfigApplicationContext();
        // The trial closes Boxline and the workload the pool; the context must not.
        context.registerBean(Boxline.class, () -> boxline, bd -> bd.setDestroyMethodName(""));
        context.registerBean(DataSource.class, () -> pool, bd -> bd.setDestroyMethodName(""));
        context.registerBean(PlatformTransactionManager.class, () -> tm);
        context.registerBean(BoxlineListenerRegistrar.class, BoxlineListenerRegistrar::new);
        context.registerBean(
            io.boxline.spring.ListenerDefaults.class,
            () ->
                new io.boxline.spring.ListenerDefaults(100, o.get(CONCURRENCY), null, null, 0, 0));
        context.registerBean(Listener.class, () -> new Listener(handled));
        context.refresh();
      }
    }

    /** One producer transaction: a business row and {@code events}. */
    void transaction(long first, List<OutgoingEvent> events) throws SQLException {
      if (outbox != null) {
        template.executeWithoutResult(
            s -> {
              try {
                insertBusiness(DataSourceUtils.getConnection(pool), business, first);
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
              if (events.size() == 1) {
                outbox.publish(events.get(0));
              } else {
                outbox.publishAll(events);
              }
            });
        return;
      }
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        try {
          insertBusiness(c, business, first);
          if (events.size() == 1) {
            boxline.publisher().publish(c, events.get(0));
          } else {
            boxline.publisher().publishAll(c, events);
          }
          c.commit();
        } catch (SQLException | RuntimeException e) {
          c.rollback();
          throw e;
        }
      }
      boxline.publisher().committed();
    }

    @Override
    public void close() {
      if (context != null) {
        context.close();
      }
      if (consumer != null) {
        consumer.close();
      }
      boxline.close();
      db.dropSchema(schema);
    }
  }

  /** The Spring path's handler: a listener bean. */
  public static final class Listener {
    private final LongConsumer handled;

    Listener(LongConsumer handled) {
      this.handled = handled;
    }

    @BoxlineListener(subscription = SUBSCRIPTION)
    public void on(Event e) {
      handled.accept(index(e));
    }
  }

  private static long index(Event e) {
    return Long.parseLong(new String(e.payload(), StandardCharsets.UTF_8));
  }

  private static OutgoingEvent event(TopicName topic, long index, String key) {
    return OutgoingEvent.builder(topic)
        .type("order.placed")
        .key(key)
        .contentType("text/plain")
        .payload(Long.toString(index).getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static void insertBusiness(Connection c, String sql, long index) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, "customer-" + (index % 977));
      ps.setLong(2, 1000 + index % 90000);
      ps.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ the trials

  private Trial throughput(String path, int txn, int events, int run) throws Exception {
    AtomicLong handled = new AtomicLong();
    CountDownLatch done = new CountDownLatch(1);
    try (Path p =
        new Path(
            path,
            i -> {
              if (handled.incrementAndGet() == events) {
                done.countDown();
              }
            })) {
      int threads = o.get(THREADS);
      int txns = events / txn;
      long cpu0 = Cost.jvmCpu();
      long t0 = System.nanoTime();
      Workers workers =
          new Workers()
              .start(
                  threads,
                  me -> {
                    for (int x = me; x < txns; x += threads) {
                      List<OutgoingEvent> list = new ArrayList<>(txn);
                      for (int i = 0; i < txn; i++) {
                        long index = (long) x * txn + i;
                        list.add(event(p.topic, index, "customer-" + (index % 1024)));
                      }
                      p.transaction((long) x * txn, list);
                    }
                  });
      workers.await();
      if (workers.failed()) {
        throw new BenchFailure("SP1 producer failed: " + workers.failure());
      }
      if (!done.await(300, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new BenchFailure(
            "SP1 " + path + ": " + handled.get() + " of " + txns * txn + " events handled");
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      double cpuMs = (Cost.jvmCpu() - cpu0) / 1e6;
      return new Trial(path, txn, run, txns * txn, seconds, cpuMs);
    }
  }

  /** Sorted latencies (ns) of one paced trial: commit returned → handler called. */
  private long[] latency(String path) throws Exception {
    int events = o.get(RATE) * o.get(SECONDS);
    long[] committed = new long[events];
    long[] seen = new long[events];
    AtomicLong handled = new AtomicLong();
    CountDownLatch done = new CountDownLatch(1);
    try (Path p =
        new Path(
            path,
            i -> {
              if (i >= 0 && i < events) {
                seen[(int) i] = System.nanoTime();
              }
              if (handled.incrementAndGet() == events) {
                done.countDown();
              }
            })) {
      long interval = 1_000_000_000L / o.get(RATE);
      long start = System.nanoTime();
      for (int i = 0; i < events; i++) {
        long due = start + i * interval;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // pacing the producer
        }
        p.transaction(i, List.of(event(p.topic, i, "customer-" + (i % 1024))));
        committed[i] = System.nanoTime();
      }
      if (!done.await(120, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new BenchFailure("SP1 latency " + path + ": " + handled.get() + " of " + events);
      }
    }
    long[] lat = new long[events];
    for (int i = 0; i < events; i++) {
      lat[i] = Math.max(0, seen[i] - committed[i]); // a handler may run before commit() returns
    }
    Arrays.sort(lat);
    return lat;
  }
}
