package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.relay.Relay;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * Relays (issue 5): what a {@link Relay} adds on the way to a broker. Usage (from the repository
 * root, after installing the modules):
 *
 * <pre>
 * ./mvnw -q -pl boxline-bench compile exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.RelayBench all"
 * </pre>
 *
 * <p>First argument: {@code all} or a comma-separated list of {@code memory}, {@code webhook},
 * {@code kafka}, {@code rabbitmq}, {@code nats}. For each sink, on a Boxline of its own (a schema
 * {@code relaybench_<random>_...} in the {@code postgres} database, dropped afterwards):
 *
 * <ul>
 *   <li><b>throughput</b>: with the relay running, {@code --events} events (200-byte JSON, {@code
 *       --keys} keys, {@code --txn} per transaction, {@code --threads} producer threads) are
 *       published; events/s from the first publish until the sink confirmed the last of them (after
 *       a warm-up of {@code --warmup} events that is not counted);
 *   <li><b>added latency</b>: one event per transaction, paced open-loop at {@code --rate}/s for
 *       {@code --warmup-s} + {@code --seconds}; per event, commit returned → the sink's send
 *       returned with it confirmed by the broker, and — in the same run, from a second subscription
 *       on the same topic — commit returned → a plain in-process handler entered.
 * </ul>
 *
 * <p>Other options: {@code --host=127.0.0.1:5432 --user=postgres --password= --partitions=8
 * --batch=100 --concurrency=4 --pool=16}. Results are printed as Markdown and written to {@code
 * boxline-bench/target/relay-<time>.md}. An event that is never confirmed, or a broker that holds
 * fewer messages than were confirmed, fails the run.
 */
public final class RelayBench {
  static final List<String> ALL = List.of("memory", "webhook", "kafka", "rabbitmq", "nats");
  private static final TopicName TOPIC = TopicName.of("bench", "events");
  private static final long WAIT_NANOS = 300_000_000_000L;

  record Throughput(
      String sink,
      int events,
      double seconds,
      double producerSeconds,
      long sends,
      long failedSends,
      long duplicates,
      long stored,
      long expected,
      String noise) {}

  record Latency(
      String sink,
      int rate,
      int events,
      double achieved,
      long[] relay,
      long[] plain,
      long[] commit,
      long[] late,
      long duplicates,
      long stored,
      long expected,
      String noise) {}

  private static final Workload.Definition DEF =
      new Workload.Definition("relays", Bench.Suite.RELAYS, "");

  static final Opt<List<String>> SINKS =
      DEF.words("sinks", String.join(",", ALL), "the sinks to relay to", ALL);
  static final Opt<Integer> PARTITIONS = DEF.partitions(8);
  static final Opt<Integer> BATCH = DEF.integer("batch", 100, "relay and consumer batch size");
  static final Opt<Integer> CONCURRENCY =
      DEF.integer("concurrency", 4, "relay and consumer concurrency");
  static final Opt<Integer> KEYS = DEF.integer("keys", 100, "keys");
  static final Opt<Integer> POOL = DEF.pool(16);
  static final Opt<Integer> WARMUP =
      DEF.integer("warmup", 1_000, "throughput: warm-up events, not counted");
  static final Opt<Integer> EVENTS = DEF.integer("events", 20_000, "throughput: events");
  static final Opt<Integer> TXN = DEF.integer("txn", 10, "throughput: events per transaction");
  static final Opt<Integer> THREADS = DEF.integer("threads", 4, "throughput: producer threads");
  static final Opt<Integer> RATE = DEF.integer("rate", 200, "latency: events/s");
  static final Opt<Double> WARMUP_S = DEF.decimal("warmup-s", 2, "latency: warm-up s");
  static final Opt<Double> SECONDS = DEF.decimal("seconds", 10, "latency: measured s");

  static final Workload WORKLOAD =
      DEF.runs(
          "what a Relay adds on the way to a broker: throughput and added latency per sink",
          RelayBench::relays);

  private final Options o;
  private final Db db;
  private final HikariDataSource pool;
  private final String runSchema;
  private final int partitions;
  private final int batch;
  private final int concurrency;
  private final int keys;
  private int schemas;

  private RelayBench(Options o, Db db, HikariDataSource pool, String runSchema) {
    this.o = o;
    this.db = db;
    this.pool = pool;
    this.runSchema = runSchema;
    this.partitions = o.get(PARTITIONS);
    this.batch = o.get(BATCH);
    this.concurrency = o.get(CONCURRENCY);
    this.keys = o.get(KEYS);
  }

  /**
   * The command lines of docs/benchmarks.md: {@code Bench relays}, the first argument ({@code all}
   * or a list of sinks) becoming {@code --sinks}.
   */
  public static void main(String[] args) throws Exception {
    List<String> a = new ArrayList<>(Arrays.asList(Bench.alias("relays", args)));
    if (!a.get(0).equals("relays")) {
      a.set(0, "--sinks=" + a.get(0));
      a.add(0, "relays");
    }
    Bench.main(a.toArray(new String[0]));
  }

  static String relays(Run run) throws Exception {
    Options o = run.o();
    List<Throughput> throughput = new ArrayList<>();
    List<Latency> latency = new ArrayList<>();
    List<String> described = new ArrayList<>();
    try (HikariDataSource pool = run.db().pool("relay-bench", o.get(POOL), null)) {
      RelayBench bench = new RelayBench(o, run.db(), pool, run.schema());
      for (String sink : o.get(SINKS)) {
        try (RelayTargets.Target target = RelayTargets.create(sink)) {
          described.add("- **" + sink + "**: " + target.describe());
          Throughput t = bench.throughput(target);
          throughput.add(t);
          Bench.log(
              "%s throughput: %,d events in %.2f s = %s events/s (%s)",
              sink, t.events(), t.seconds(), Stats.rate(t.events() / t.seconds()), t.noise());
          Latency l = bench.latency(target);
          latency.add(l);
          Bench.log(
              "%s latency %d/s: relay p50 %s p99 %s max %s ms; plain consumer p50 %s p99 %s ms"
                  + " (%s)",
              sink,
              l.rate(),
              Stats.ms(Stats.percentile(l.relay(), 50)),
              Stats.ms(Stats.percentile(l.relay(), 99)),
              Stats.ms(Stats.percentile(l.relay(), 100)),
              Stats.ms(Stats.percentile(l.plain(), 50)),
              Stats.ms(Stats.percentile(l.plain(), 99)),
              l.noise());
        }
      }
      return bench.report(described, throughput, latency);
    }
  }

  // ------------------------------------------------------------------ throughput
  private Throughput throughput(RelayTargets.Target target) throws Exception {
    int warm = o.get(WARMUP);
    int n = o.get(EVENTS);
    int txn = o.get(TXN);
    int threads = o.get(THREADS);
    int total = warm + n;
    try (Trial trial = new Trial(target, "tp", total)) {
      Boxline boxline = trial.boxline;
      TimedSink sink = trial.sink;
      double seconds;
      double producerSeconds;
      String noise;
      try (Relay relay = relay(boxline, sink)) {
        publish(boxline, 0, warm, txn, threads);
        await(() -> sink.distinct() >= warm, target.name() + " warm-up confirmed");
        Noise machine = Noise.start();
        long t0 = System.nanoTime();
        publish(boxline, warm, n, txn, threads);
        producerSeconds = (System.nanoTime() - t0) / 1e9;
        await(() -> sink.distinct() >= total, target.name() + ": all " + n + " confirmed");
        noise = machine.since();
        await(() -> relay.sentCount() >= total, "relay.sentCount() reaching " + total);
        long last = 0;
        for (int i = warm; i < total; i++) {
          last = Math.max(last, sink.confirmedAt(i));
        }
        seconds = (last - t0) / 1e9;
      }
      long stored = trial.finish(target.name() + " throughput");
      return new Throughput(
          target.name(),
          n,
          seconds,
          producerSeconds,
          sink.sends(),
          sink.failedSends(),
          sink.duplicates(),
          stored,
          total,
          noise);
    }
  }

  /** Publishes events first … first+count-1, {@code txn} per transaction, from {@code threads}. */
  private void publish(Boxline boxline, int first, int count, int txn, int threads)
      throws InterruptedException {
    AtomicInteger next = new AtomicInteger(first);
    Workers workers = new Workers();
    workers
        .start(
            threads,
            t -> {
              for (int start;
                  (start = next.getAndAdd(txn)) < first + count && !workers.failed(); ) {
                List<OutgoingEvent> events = new ArrayList<>(txn);
                for (int i = start; i < Math.min(start + txn, first + count); i++) {
                  events.add(event(i));
                }
                boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
              }
            })
        .join();
  }

  // ------------------------------------------------------------------ latency
  private Latency latency(RelayTargets.Target target) throws Exception {
    int rate = o.get(RATE);
    int warm = (int) (rate * o.get(WARMUP_S));
    int measured = (int) (rate * o.get(SECONDS));
    int total = warm + measured;
    try (Trial trial = new Trial(target, "lat", total, "plain")) {
      Boxline boxline = trial.boxline;
      TimedSink sink = trial.sink;
      AtomicLongArray handled = new AtomicLongArray(total);
      AtomicInteger handledCount = new AtomicInteger();
      CommitTimes times = new CommitTimes(total);
      String noise;
      long firstDue;
      long lastDone;
      Consumer plain =
          boxline
              .consumer("plain")
              .handler(
                  e -> {
                    long now = System.nanoTime();
                    long i = Payloads.index(e.id());
                    if (i >= 0 && i < total && handled.compareAndSet((int) i, 0, now)) {
                      handledCount.incrementAndGet();
                    }
                  })
              .batchSize(batch)
              .concurrency(concurrency)
              .start();
      try (Relay relay = relay(boxline, sink)) {
        Noise machine = Noise.start();
        firstDue =
            Pacer.run(total, rate, 8, times.publishing(boxline, this::event, System::nanoTime));
        lastDone = System.nanoTime();
        await(() -> sink.distinct() >= total, target.name() + ": all " + total + " confirmed");
        await(() -> handledCount.get() >= total, "plain consumer: all " + total + " handled");
        noise = machine.since();
        await(() -> relay.sentCount() >= total, "relay.sentCount() reaching " + total);
      } finally {
        plain.close();
      }
      long stored = trial.finish(target.name() + " latency");
      long firstMeasured = firstDue + (long) (warm * 1e9 / rate);
      double achieved = measured / ((lastDone - firstMeasured) / 1e9);
      long[] committed = times.committed;
      return new Latency(
          target.name(),
          rate,
          measured,
          achieved,
          Stats.sorted(warm, total, i -> sink.confirmedAt(i) - committed[i]),
          Stats.sorted(warm, total, i -> handled.get(i) - committed[i]),
          times.commitDurations(warm, total),
          times.sendLags(warm, total),
          sink.duplicates(),
          stored,
          total,
          noise);
    }
  }

  // ------------------------------------------------------------------ plumbing
  /**
   * One trial: a Boxline of its own (its own schema, the topic, a "relay" subscription and any
   * other ones, all from the earliest event) and a destination of its own behind a {@link
   * TimedSink}; closing it closes the Boxline and drops the schema.
   */
  private final class Trial implements AutoCloseable {
    final String name;
    final Boxline boxline;
    final TimedSink sink;
    private final RelayTargets.Target target;
    private final String schema = runSchema + "_" + (++schemas);
    private final int total;

    Trial(RelayTargets.Target target, String kind, int total, String... otherSubscriptions)
        throws Exception {
      this.target = target;
      this.total = total;
      this.name = RelayTargets.trialName(target.name(), kind);
      this.boxline =
          Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()).build().start();
      boxline.admin().createNamespace(NamespacePath.of("bench"));
      boxline.admin().createTopic(TOPIC, partitions);
      Bench.awaitLeader(boxline);
      for (String s : Stream.concat(Stream.of("relay"), Stream.of(otherSubscriptions)).toList()) {
        boxline
            .admin()
            .createSubscription(SubscriptionSpec.of(s, TOPIC).startAt(StartPosition.earliest()));
      }
      this.sink = new TimedSink(target.open(name, boxline, partitions), total);
    }

    /**
     * Checks that every event was confirmed and the broker holds them, removes the destination;
     * returns what the broker held.
     */
    long finish(String what) throws Exception {
      long stored = target.stored(name);
      check(what, sink, stored, total);
      target.remove(name);
      return stored;
    }

    @Override
    public void close() {
      boxline.close();
      db.exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  private Relay relay(Boxline boxline, TimedSink sink) {
    return Relay.builder(boxline)
        .subscription("relay")
        .sink(sink)
        .batchSize(batch)
        .concurrency(concurrency)
        .start();
  }

  private OutgoingEvent event(int i) {
    return Payloads.event(TOPIC, i, "customer-" + (i % keys));
  }

  private static void await(BooleanSupplier done, String what) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new BenchFailure("not done within " + WAIT_NANOS / 1_000_000_000L + " s: " + what);
      }
      Thread.sleep(2);
    }
  }

  private static void check(String what, TimedSink sink, long stored, int total) {
    if (sink.distinct() != total || sink.foreign() != 0) {
      throw new BenchFailure(
          what
              + ": "
              + sink.distinct()
              + " of "
              + total
              + " confirmed, "
              + sink.foreign()
              + " foreign");
    }
    if (stored >= 0 && stored < total) {
      throw new BenchFailure(
          what + ": the broker holds " + stored + " messages, " + total + " were confirmed");
    }
  }

  // ------------------------------------------------------------------ report
  private String report(
      List<String> described, List<Throughput> throughput, List<Latency> latency) {
    StringBuilder sb = new StringBuilder();
    sb.append("## Sinks\n\n").append(String.join("\n", described)).append("\n\n");
    sb.append(
        Stats.f(
            "Every trial: a Boxline of its own (schema in the `postgres` database, HikariCP pool"
                + " of %d shared by producers, relay and consumer), topic of %d partitions, relay"
                + " with batch size %d and concurrency %d (the relay's defaults unless set).%n%n",
            o.get(POOL), partitions, batch, concurrency));
    sb.append(
        Stats.f(
            "## Throughput%n%n%,d events (200-byte JSON, %d keys, %d per transaction, %d producer"
                + " threads) published with the relay running, after %,d warm-up events; time"
                + " from the first publish until the sink's send returned with the last of them"
                + " confirmed by the broker.%n%n",
            o.get(EVENTS), keys, o.get(TXN), o.get(THREADS), o.get(WARMUP)));
    Table t =
        new Table(
            "Sink",
            "Events",
            "Seconds",
            "Events/s (publish → confirmed)",
            "Producers done (s)",
            "Sends (failed)",
            "Duplicates",
            "Broker holds",
            "Machine during the run");
    for (Throughput r : throughput) {
      t.row(
          r.sink(),
          Stats.f("%,d", r.events()),
          Stats.f("%.2f", r.seconds()),
          Stats.rate(r.events() / r.seconds()),
          Stats.f("%.2f", r.producerSeconds()),
          Stats.f("%,d (%d)", r.sends(), r.failedSends()),
          r.duplicates(),
          Stats.f("%,d of %,d", r.stored(), r.expected()),
          r.noise());
    }
    sb.append(t).append('\n');
    sb.append(
        Stats.f(
            "## Added latency%n%nOne event per transaction (`inTransaction`), paced open-loop at"
                + " %d/s by 8 sender threads, %.0f s warm-up then %.0f s measured. Relay: commit"
                + " returned → the sink's send returned with the event confirmed (broker"
                + " acknowledgement). Plain consumer: a second subscription on the same topic,"
                + " same batch size and concurrency, no-op handler; commit returned → handler"
                + " entered. Both in the same run. Milliseconds.%n%n",
            o.get(RATE), o.get(WARMUP_S), o.get(SECONDS)));
    Table l =
        new Table(
            "Sink",
            "Events",
            "Achieved/s",
            "Relay p50",
            "p90",
            "p99",
            "max",
            "Plain consumer p50",
            "p90",
            "p99",
            "max",
            "Relay − plain, p50",
            "Commit p50 / p99",
            "Send lag p99",
            "Machine during the run");
    for (Latency r : latency) {
      l.row(
          r.sink(),
          Stats.f("%,d", r.events()),
          Stats.f("%.0f", r.achieved()),
          Stats.ms(Stats.percentile(r.relay(), 50)),
          Stats.ms(Stats.percentile(r.relay(), 90)),
          Stats.ms(Stats.percentile(r.relay(), 99)),
          Stats.ms(Stats.percentile(r.relay(), 100)),
          Stats.ms(Stats.percentile(r.plain(), 50)),
          Stats.ms(Stats.percentile(r.plain(), 90)),
          Stats.ms(Stats.percentile(r.plain(), 99)),
          Stats.ms(Stats.percentile(r.plain(), 100)),
          Stats.ms(Stats.percentile(r.relay(), 50) - Stats.percentile(r.plain(), 50)),
          Stats.p50p99(r.commit()),
          Stats.ms(Stats.percentile(r.late(), 99)),
          r.noise());
    }
    sb.append(l).append('\n');
    return sb.toString();
  }
}
