package io.boxline.bench.chaos;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Settings of a chaos run, from {@code key=value} arguments. The chaos phase lasts {@code seconds},
 * and longer while fewer than {@code events} events are committed (0: no target).
 */
record ChaosOptions(
    long seed,
    String db,
    int seconds,
    long events,
    int producers,
    int producerThreads,
    int producerRate,
    int maxEventsPerTransaction,
    int keysPerThread,
    int consumers,
    int relays,
    int workers,
    int batch,
    int concurrency,
    double faultEverySeconds,
    int drainSeconds,
    int progressSeconds) {

  private static final Set<String> KEYS =
      Set.of(
          "seed",
          "db",
          "seconds",
          "events",
          "producers",
          "threads",
          "rate",
          "maxEvents",
          "keys",
          "consumers",
          "relays",
          "workers",
          "batch",
          "concurrency",
          "faultEvery",
          "drain",
          "progress");

  static ChaosOptions parse(String... argv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String a : argv) {
      String s = a.startsWith("--") ? a.substring(2) : a;
      int eq = s.indexOf('=');
      if (eq < 0 || !KEYS.contains(s.substring(0, eq))) {
        throw new IllegalArgumentException("unknown option " + a + "; options: " + KEYS);
      }
      m.put(s.substring(0, eq), s.substring(eq + 1));
    }
    return new ChaosOptions(
        m.containsKey("seed") ? Long.parseLong(m.get("seed")) : System.nanoTime() & 0xffffffL,
        m.getOrDefault("db", "postgresql"),
        Integer.parseInt(m.getOrDefault("seconds", "60")),
        Long.parseLong(m.getOrDefault("events", "0")),
        Integer.parseInt(m.getOrDefault("producers", "2")),
        Integer.parseInt(m.getOrDefault("threads", "2")),
        Integer.parseInt(m.getOrDefault("rate", "150")),
        Integer.parseInt(m.getOrDefault("maxEvents", "4")),
        Integer.parseInt(m.getOrDefault("keys", "20")),
        Integer.parseInt(m.getOrDefault("consumers", "2")),
        Integer.parseInt(m.getOrDefault("relays", "1")),
        Integer.parseInt(m.getOrDefault("workers", "1")),
        Integer.parseInt(m.getOrDefault("batch", "20")),
        Integer.parseInt(m.getOrDefault("concurrency", "2")),
        Double.parseDouble(m.getOrDefault("faultEvery", "3")),
        Integer.parseInt(m.getOrDefault("drain", "180")),
        Integer.parseInt(m.getOrDefault("progress", "5")));
  }

  Duration chaosTime() {
    return Duration.ofSeconds(seconds);
  }

  /** The arguments that reproduce this run (the seed included). */
  String commandLine() {
    return "seed="
        + seed
        + " db="
        + db
        + " seconds="
        + seconds
        + " events="
        + events
        + " producers="
        + producers
        + " threads="
        + producerThreads
        + " rate="
        + producerRate
        + " maxEvents="
        + maxEventsPerTransaction
        + " keys="
        + keysPerThread
        + " consumers="
        + consumers
        + " relays="
        + relays
        + " workers="
        + workers
        + " batch="
        + batch
        + " concurrency="
        + concurrency
        + " faultEvery="
        + faultEverySeconds
        + " drain="
        + drainSeconds;
  }
}
