package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.ConsumerBuilder;
import io.boxline.EventHandler;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import javax.sql.DataSource;

/**
 * What a W workload's trials share: the run's options and database, the workload's pool, and a
 * schema of its own for each trial ({@code <run schema>_<kind>_<n>}).
 */
abstract class Trials {
  /** The subscription {@link #start} makes. */
  static final String SUBSCRIPTION = "bench-sub";

  final Run run;
  final Options o;
  final Db db;
  final DataSource pool;
  final int partitions;
  private final String kind;
  private int trialCounter;

  Trials(Run run, DataSource pool, String kind) {
    this.run = run;
    this.o = run.o();
    this.db = run.db();
    this.pool = pool;
    this.partitions = o.get(Bench.PARTITIONS);
    this.kind = kind;
  }

  /**
   * Starts a Boxline with the namespace "bench", {@code topic} (the run's partitions and
   * sequencing) and the subscription "bench-sub", once it leads the sequencer.
   */
  Boxline start(Boxline.Builder builder, TopicName topic) throws InterruptedException {
    Boxline boxline = builder.build().start();
    boxline.admin().createNamespace(NamespacePath.of("bench"));
    boxline.admin().createTopic(topic, partitions, o.get(Bench.SEQUENCING));
    boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    Bench.awaitLeader(boxline);
    return boxline;
  }

  /** A consumer of {@link #SUBSCRIPTION}, to be given the rest of its settings and started. */
  static ConsumerBuilder consumer(Boxline boxline, EventHandler handler, int concurrency) {
    return boxline.consumer(SUBSCRIPTION).handler(handler).concurrency(concurrency);
  }

  /** The body of a W workload, given the pool its trials share. */
  @FunctionalInterface
  interface OnPool {
    String run(HikariDataSource pool) throws Exception;
  }

  /** Runs {@code body} on a pool of {@code --pool} connections of its own, closed afterwards. */
  static String onPool(Run run, String poolName, OnPool body) throws Exception {
    try (HikariDataSource pool = run.db().pool(poolName, run.o().get(Bench.POOL), null)) {
      return body.run(pool);
    }
  }

  /** Waits for a quiet machine first when {@code quiet} and --quiet is set, then watches it. */
  Noise watch(boolean quiet) throws InterruptedException {
    String note = quiet ? Noise.awaitQuiet(o.get(Bench.QUIET), o.get(Bench.QUIET_BUSY)) : "";
    if (!note.isEmpty()) {
      Bench.log("%s", note);
    }
    return Noise.start(note);
  }

  /** A schema name for the next trial. */
  String nextSchema() {
    return run.schema() + "_" + kind + "_" + (++trialCounter);
  }
}
