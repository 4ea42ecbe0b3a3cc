package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * K1, parallel by key: the same backlog of events with a slow handler (default 1 ms, as a call to
 * another service would take), handled once partition by partition (the default) and once with
 * {@code parallelByKey}, alternating, on a topic of few partitions. Each key's order is checked.
 */
final class K1ParallelByKey {
  private K1ParallelByKey() {}

  private static final Workload.Definition DEF = Workload.define("k1", Bench.Suite.GROUPS);

  static final Opt<Integer> EVENTS = DEF.integer("events", 4000, "events per trial");
  static final Opt<Integer> PARTITIONS = DEF.partitions(4);
  static final Opt<Integer> KEYS = DEF.integer("keys", 256, "distinct keys");
  static final Opt<Integer> HANDLER_MS = DEF.integer("handler-ms", 1, "handler time, ms");
  static final Opt<Integer> THREADS = DEF.integer("threads", 32, "parallelByKey threads");
  static final Opt<Integer> ROUNDS = DEF.integer("rounds", 2, "rounds of both modes");
  static final Opt<Integer> POOL = DEF.pool(24);

  static final Workload WORKLOAD =
      DEF.runs(
          "parallel by key against one event of a partition at a time, slow handler",
          K1ParallelByKey::run);

  static String run(Run run) throws Exception {
    Options o = run.o();
    int events = o.get(EVENTS);
    int partitions = o.get(PARTITIONS);
    StringBuilder rows = new StringBuilder();
    try (BenchDb db = BenchDb.create(run, "k1")) {
      HikariDataSource pool = db.pool("k1", o.get(POOL), null);
      Boxline boxline = GfKit.start(GfKit.builder(pool, "k1-main"), null, 0);
      try {
        for (int r = 1; r <= o.get(ROUNDS); r++) {
          for (boolean byKey : new boolean[] {false, true}) {
            double seconds = trial(boxline, o, r, byKey);
            String mode = byKey ? "parallelByKey(" + o.get(THREADS) + ")" : "per partition";
            log("K1 round %d, %s: %d events in %.2f s", r, mode, events, seconds);
            rows.append(
                String.format(
                    Locale.ROOT,
                    "| %d | %s | %d | %.2f | %,.0f |%n",
                    r,
                    mode,
                    events,
                    seconds,
                    events / seconds));
          }
        }
      } finally {
        boxline.close();
      }
    }
    return "## K1 — parallel by key\n\n"
        + String.format(
            Locale.ROOT,
            "%d events over %d keys on a topic of %d partitions, a handler that takes %d ms, one"
                + " consumer (concurrency 4, batch 100); the backlog is sequenced before the"
                + " consumer starts, and the time runs from its start to the last event handled."
                + " Every key's events were handled in order.%n%n",
            events,
            o.get(KEYS),
            partitions,
            o.get(HANDLER_MS))
        + "| round | mode | events | seconds | events/s |\n|---|---|---|---|---|\n"
        + rows;
  }

  /** One backlog on a topic of its own, consumed in one mode; the seconds it took. */
  private static double trial(Boxline boxline, Options o, int round, boolean byKey)
      throws Exception {
    int events = o.get(EVENTS);
    int keys = o.get(KEYS);
    int handlerMs = o.get(HANDLER_MS);
    TopicName t = TopicName.of("bench", "k1-" + round + (byKey ? "-key" : "-partition"));
    boxline.admin().createTopic(t, o.get(PARTITIONS));
    boxline.admin().createSubscription(SubscriptionSpec.of(t.name(), t));
    List<Object> batch = new ArrayList<>();
    for (int i = 0; i < events; i++) {
      batch.add(
          OutgoingEvent.builder(t)
              .type("k1")
              .key("key-" + (i % keys))
              .payload(Integer.toString(i).getBytes(StandardCharsets.UTF_8))
              .build());
      if (batch.size() == 100 || i == events - 1) {
        List<Object> b = List.copyOf(batch);
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, b));
        batch.clear();
      }
    }
    while (boxline.admin().outboxBacklog().events() > 0) {
      Thread.sleep(10); // a workload waiting for its backlog, not a test synchronising
    }
    Map<String, Integer> lastOfKey = new ConcurrentHashMap<>();
    AtomicReference<String> error = new AtomicReference<>();
    ConsumerBuilder builder =
        boxline
            .consumer(t.name())
            .concurrency(4)
            .batchSize(100)
            .handler(
                (Event e) -> {
                  int n = Integer.parseInt(new String(e.payload(), StandardCharsets.UTF_8));
                  Integer before = lastOfKey.put(e.key(), n);
                  if (before != null && before >= n) {
                    error.compareAndSet(null, e.key() + ": " + n + " after " + before);
                  }
                  try {
                    Thread.sleep(handlerMs); // the work the handler stands for
                  } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                  }
                });
    if (byKey) {
      builder.parallelByKey(o.get(THREADS));
    }
    long start = System.nanoTime();
    Consumer c = builder.start();
    try {
      while (c.handledCount() < events) {
        check(error.get() == null, "K1 order broken: " + error.get());
        Thread.sleep(5);
      }
    } finally {
      c.close();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    check(error.get() == null, "K1 order broken: " + error.get());
    return seconds;
  }
}
