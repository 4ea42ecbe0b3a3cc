package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.server.BoxlineServer;
import io.boxline.server.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * K1, the Kafka protocol listener against the server's other paths, in one run on one server:
 * publishing (a Kafka producer against HTTP POSTs and Java), consuming a backlog (a Kafka consumer
 * group against an in-process Boxline consumer of a subscription on the same log), and what an idle
 * connected consumer costs the database (transactions per second, from pg_stat_database).
 */
final class K1Kafka {
  private K1Kafka() {}

  private static final Workload.Definition DEF = Workload.define("k1", Bench.Suite.SERVER);

  static final Opt<Integer> EVENTS = DEF.integer("events", 100_000, "events per trial");
  static final Opt<Integer> PRODUCERS =
      DEF.integer("producers", 4, "HTTP and Java producer threads");
  static final Opt<Integer> ROUNDS =
      DEF.integer(
          "rounds", 3, "consuming rounds (each a Java and a Kafka consumer of the backlog)");
  static final Opt<Integer> IDLE_SECONDS =
      DEF.integer("idle-seconds", 60, "seconds of each idle measurement");

  static final Workload WORKLOAD =
      DEF.runs("the Kafka protocol listener against the HTTP and Java paths", K1Kafka::run);

  private static String payload(int i) {
    return "{\"i\":" + i + ",\"pad\":\"" + "x".repeat(180) + "\"}";
  }

  static String run(Run run) throws Exception {
    // A database of its own, so that what pg_stat_database counts for the idle measurement is this
    // server's doing alone.
    String name = run.schema().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_") + "_k1";
    try (Connection c =
            DriverManager.getConnection(run.db().url, run.db().user, run.db().password);
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      st.execute("CREATE DATABASE " + name);
    }
    try {
      Db own =
          new Db(
              run.db().url.replaceFirst("/[^/?]*(\\?.*)?$", "/" + name + "$1"),
              run.db().user,
              run.db().password);
      return measure(new Run(run.o(), own, run.schema()));
    } finally {
      try (Connection c =
              DriverManager.getConnection(run.db().url, run.db().user, run.db().password);
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      }
    }
  }

  private static String measure(Run run) throws Exception {
    Options o = run.o();
    int events = o.get(EVENTS);
    StringBuilder out = new StringBuilder("## K1 — the Kafka protocol listener\n\n");
    ServerConfig config =
        ServerConfig.parse(
            "http: {port: 0, threads: 32}\nauth: {disabled: true}\nkafka: {port: 0}\n"
                + "database: {url: '"
                + run.db().url
                + "', user: '"
                + run.db().user
                + "', password: '"
                + run.db().password
                + "', schema: "
                + run.schema()
                + ", poolSize: 32}\n",
            "k1",
            Map.of());
    try (BoxlineServer server = BoxlineServer.start(config)) {
      Boxline boxline = server.boxline();
      String bootstrap = "127.0.0.1:" + server.kafkaPort();
      out.append(
          String.format(
              Locale.ROOT,
              "One server (in the bench JVM, auth off, pool of 32) on PostgreSQL; topics of 16"
                  + " partitions; 200-byte JSON payloads; %,d events per trial.%n%n",
              events));
      Table publish = new Table("path", "events", "seconds", "events/s");
      int trial = 0;
      for (String path : List.of("kafka", "kafka4", "http1", "http50", "java")) {
        TopicName t = topic(boxline, "k1-p-" + trial++);
        long t0 = System.nanoTime();
        switch (path) {
          case "kafka" -> kafkaProduce(bootstrap, t, events);
          case "kafka4" -> {
            new Workers()
                .start(o.get(PRODUCERS), w -> kafkaProduce(bootstrap, t, events / o.get(PRODUCERS)))
                .join();
          }
          case "java" -> javaProduce(boxline, t, events, o.get(PRODUCERS));
          default ->
              httpProduce(
                  server.baseUrl(), t, events, o.get(PRODUCERS), path.equals("http1") ? 1 : 50);
        }
        double s = (System.nanoTime() - t0) / 1e9;
        String label =
            switch (path) {
              case "kafka" ->
                  "Kafka producer (acks=all, idempotent, linger.ms=10, batch.size=128 KiB), 1 producer";
              case "kafka4" -> "Kafka producers (the same), " + o.get(PRODUCERS) + " producers";
              case "http1" -> "HTTP POST, 1 event per request, " + o.get(PRODUCERS) + " producers";
              case "http50" ->
                  "HTTP POST, 50 events per request, " + o.get(PRODUCERS) + " producers";
              default ->
                  "Java inTransaction, 1 event per transaction, " + o.get(PRODUCERS) + " producers";
            };
        log("K1 publish %s: %.0f events/s", label, events / s);
        publish.row(label, events, Stats.f("%.2f", s), Stats.f("%,.0f", events / s));
      }
      out.append("Publishing, until every event is acknowledged (committed):\n\n")
          .append(publish)
          .append('\n');

      // One backlog, two subscriptions on it: the Java consumer's and the Kafka group's.
      TopicName t = topic(boxline, "k1-c");
      javaProduce(boxline, t, events, o.get(PRODUCERS));
      awaitSequenced(boxline, t, events);
      Table consume = new Table("consumer", "events", "seconds", "events/s");
      for (int round = 0; round < o.get(ROUNDS); round++) {
        double java = javaConsume(boxline, t, "k1-java-" + round, events);
        double kafka = kafkaConsume(bootstrap, t, "k1-kafka-" + round, events);
        log(
            "K1 consume round %d: Java %.0f/s, Kafka %.0f/s (%.2fx)",
            round, events / java, events / kafka, java / kafka);
        consume.row(
            "Boxline consumer (in process, no-op handler)",
            events,
            Stats.f("%.2f", java),
            Stats.f("%,.0f", events / java));
        consume.row(
            "Kafka consumer group of 1 (auto-commit, then commitSync)",
            events,
            Stats.f("%.2f", kafka),
            Stats.f("%,.0f", events / kafka));
      }
      out.append("Consuming a backlog from the first event, until the last was handled:\n\n")
          .append(consume)
          .append('\n');

      // The writes above leave autovacuum work that would be counted as the idle server's: done
      // first, so that the rows compare the consumers, not PostgreSQL's housekeeping.
      vacuum(run.db());
      Table idle = new Table("connected and idle", "seconds", "database transactions/s");
      int seconds = o.get(IDLE_SECONDS);
      idle.row(
          "nothing (the server alone)",
          seconds,
          Stats.f("%.2f", idleRate(run.db(), seconds, () -> {})));
      try (KafkaConsumer<String, byte[]> c = kafkaConsumer(bootstrap, "k1-kafka-0")) {
        c.subscribe(List.of(kafkaName(t)));
        idle.row(
            "one Kafka consumer (fetch.max.wait.ms 500, auto-commit every 5 s)",
            seconds,
            Stats.f("%.2f", idleRate(run.db(), seconds, () -> c.poll(Duration.ofMillis(200)))));
      }
      try (Consumer c = boxline.consumer("k1-java-0").handler(e -> {}).start()) {
        idle.row(
            "one Boxline consumer",
            seconds,
            Stats.f("%.2f", idleRate(run.db(), seconds, () -> {})));
      }
      idle.row(
          "nothing again (the server alone)",
          seconds,
          Stats.f("%.2f", idleRate(run.db(), seconds, () -> {})));
      out.append(
              "An idle consumer's cost to the database (the server's own loops included; the"
                  + " database vacuumed first):\n\n")
          .append(idle);
    }
    return out.toString();
  }

  private static String kafkaName(TopicName t) {
    return t.namespace().toString().replace('/', '.') + "." + t.name();
  }

  private static TopicName topic(Boxline boxline, String name) {
    TopicName t = TopicName.of("bench", name);
    boxline.admin().createNamespace(t.namespace());
    boxline.admin().createTopic(t, 16);
    return t;
  }

  private static void kafkaProduce(String bootstrap, TopicName t, int events) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("linger.ms", "10");
    p.put("batch.size", "131072");
    p.put("acks", "all");
    AtomicLong failed = new AtomicLong();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      String topic = kafkaName(t);
      for (int i = 0; i < events; i++) {
        producer.send(
            new ProducerRecord<>(
                topic, "k" + (i % 1000), payload(i).getBytes(StandardCharsets.UTF_8)),
            (m, e) -> {
              if (e != null) {
                failed.incrementAndGet();
              }
            });
      }
      producer.flush();
    }
    check(failed.get() == 0, "K1: " + failed.get() + " Kafka sends failed");
  }

  private static void javaProduce(Boxline boxline, TopicName t, int events, int producers)
      throws InterruptedException {
    AtomicInteger next = new AtomicInteger();
    new Workers()
        .start(
            producers,
            w -> {
              int i;
              while ((i = next.getAndIncrement()) < events) {
                OutgoingEvent e =
                    OutgoingEvent.builder(t)
                        .key("k" + (i % 1000))
                        .type("Bench")
                        .contentType("application/json")
                        .payload(payload(i).getBytes(StandardCharsets.UTF_8))
                        .build();
                boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
              }
            })
        .join();
  }

  private static void httpProduce(
      String base, TopicName t, int events, int producers, int perRequest)
      throws InterruptedException {
    AtomicInteger next = new AtomicInteger();
    String path = "/v1/topics/" + t.toString().replace("/", "%2F") + "/events";
    new Workers()
        .start(
            producers,
            w -> {
              KeepAlivePost post = new KeepAlivePost(base);
              int from;
              while ((from = next.getAndAdd(perRequest)) < events) {
                int n = Math.min(perRequest, events - from);
                StringBuilder b = new StringBuilder("{\"events\":[");
                for (int i = 0; i < n; i++) {
                  b.append(i == 0 ? "" : ",")
                      .append("{\"type\":\"Bench\",\"key\":\"k")
                      .append((from + i) % 1000)
                      .append("\",\"payload\":")
                      .append(payload(from + i))
                      .append('}');
                }
                int status = post.post(path, b.append("]}").toString());
                check(status == 200, "K1: HTTP publish answered " + status);
              }
              post.close();
            })
        .join();
  }

  private static void awaitSequenced(Boxline boxline, TopicName t, long events)
      throws InterruptedException {
    long deadline = System.nanoTime() + 300_000_000_000L;
    while (boxline.admin().topicState(t).events() < events) {
      check(System.nanoTime() < deadline, "K1: the backlog was not sequenced within 5 minutes");
      Thread.sleep(50);
    }
  }

  private static double javaConsume(Boxline boxline, TopicName t, String subscription, int events)
      throws Exception {
    boxline.admin().createSubscription(SubscriptionSpec.of(subscription, t));
    AtomicLong handled = new AtomicLong();
    long t0 = System.nanoTime();
    AtomicLong first = new AtomicLong();
    try (Consumer c =
        boxline
            .consumer(subscription)
            .handler(
                e -> {
                  if (handled.incrementAndGet() == 1) {
                    first.set(System.nanoTime());
                  }
                })
            .start()) {
      long deadline = System.nanoTime() + 300_000_000_000L;
      while (handled.get() < events) {
        check(System.nanoTime() < deadline, "K1: the Java consumer did not finish in 5 minutes");
        Thread.sleep(5);
      }
      log("K1 Java consumer: first event after %.0f ms", (first.get() - t0) / 1e6);
      return (System.nanoTime() - t0) / 1e9;
    }
  }

  private static KafkaConsumer<String, byte[]> kafkaConsumer(String bootstrap, String group) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", group);
    p.put("auto.offset.reset", "earliest");
    p.put("max.poll.records", "2000");
    p.put("fetch.max.bytes", String.valueOf(16 << 20));
    p.put("max.partition.fetch.bytes", String.valueOf(4 << 20));
    return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
  }

  private static double kafkaConsume(String bootstrap, TopicName t, String group, int events) {
    long t0 = System.nanoTime();
    long seen = 0;
    try (KafkaConsumer<String, byte[]> c = kafkaConsumer(bootstrap, group)) {
      c.subscribe(List.of(kafkaName(t)));
      long deadline = System.nanoTime() + 300_000_000_000L;
      while (seen < events) {
        check(System.nanoTime() < deadline, "K1: the Kafka consumer did not finish in 5 minutes");
        int n = c.poll(Duration.ofMillis(100)).count();
        if (seen == 0 && n > 0) {
          log(
              "K1 Kafka consumer: first %d records after %.0f ms",
              n, (System.nanoTime() - t0) / 1e6);
        }
        seen += n;
      }
      double s = (System.nanoTime() - t0) / 1e9;
      c.commitSync();
      return s;
    }
  }

  private static long commits(Db db) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url, db.user, db.password);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void vacuum(Db db) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url, db.user, db.password);
        Statement st = c.createStatement()) {
      st.execute("VACUUM ANALYZE");
    }
  }

  /** Database transactions per second while {@code tick} runs in a loop for {@code seconds}. */
  private static double idleRate(Db db, int seconds, Runnable tick) throws Exception {
    // Settle (a join, a first fetch), and let PostgreSQL report what came before: it reports an
    // idle session's transactions up to 10 s late.
    long end = System.nanoTime() + 11_000_000_000L;
    while (System.nanoTime() < end) {
      tick.run();
      Thread.sleep(50);
    }
    long before = commits(db);
    long t0 = System.nanoTime();
    end = t0 + seconds * 1_000_000_000L;
    while (System.nanoTime() < end) {
      tick.run();
      Thread.sleep(50);
    }
    long after = commits(db);
    // pg_stat_database is updated when a backend reports (at most every 500 ms); the two reads
    // themselves are two transactions.
    return (after - before - 1) / ((System.nanoTime() - t0) / 1e9);
  }
}
