package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * The W2 producer in another JVM, started by {@link W2Latency} (not a workload of its own): a
 * Boxline with {@code sequencer(false)} (it NOTIFYs the remote sequencer at a bounded rate) that
 * publishes one event per transaction, paced open-loop, and writes for each event the wall-clock
 * time (epoch nanoseconds from {@link java.time.Instant#now()}, CLOCK_REALTIME, the same clock the
 * consumer JVM reads on this machine) at which its commit returned, the commit duration, and how
 * late after its due time it was sent. With {@code --via=sql} it publishes through the SQL-level
 * publish() instead, with no Boxline in the process. Its options go through the bench's one parser.
 */
public final class RemoteProducer {
  static final Opt<String> SCHEMA = Opt.text("schema", null, "Boxline's schema");
  static final Opt<Double> RATE = Opt.decimal("rate", 200, "events/s after the warm-up");
  static final Opt<Integer> TOTAL = Opt.integer("total", 0, "events, the warm-up included");
  static final Opt<Integer> THREADS = Opt.integer("threads", 8, "sender threads");
  static final Opt<Integer> KEYS = Opt.integer("keys", W2Latency.KEYS, "keys, chosen at random");
  static final Opt<String> OUT = Opt.text("out", null, "the file the times go to");
  static final Opt<Integer> NOTIFY_MS =
      Opt.integer(
          "notify-ms",
          (int) Boxline.Builder.DEFAULT_PRODUCER_NOTIFY_INTERVAL.toMillis(),
          "producerNotifyInterval");
  static final Opt<Integer> WARM = Opt.integer("warm", 0, "warm-up events");
  static final Opt<Double> WARM_RATE = Opt.decimal("warm-rate", 1000, "warm-up events/s");
  static final Opt<List<String>> VIA =
      Opt.words("via", "java", "java (a Boxline) or sql (publish())", List.of("java", "sql"));

  private RemoteProducer() {}

  /** One paced event: {@link #prepare} builds it, untimed; the transaction it returns is timed. */
  @FunctionalInterface
  private interface PublishOne {
    Transaction prepare(int index, String key);
  }

  @FunctionalInterface
  private interface Transaction {
    void commit() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    Bench.quietLogs(true);
    Options o =
        Options.parse(
            Arrays.asList(args),
            List.of(
                Db.URL,
                Db.USER,
                Db.PASSWORD,
                SCHEMA,
                RATE,
                TOTAL,
                THREADS,
                KEYS,
                OUT,
                NOTIFY_MS,
                WARM,
                WARM_RATE,
                VIA));
    Db db = Db.of(o);
    String schema = o.get(SCHEMA);
    int total = o.get(TOTAL);
    int threads = o.get(THREADS);
    boolean sql = o.get(VIA).contains("sql");
    long[] committed = new long[total];
    long[] took = new long[total];
    long[] late = new long[total];
    try (HikariDataSource pool =
            db.pool(sql ? "sql-producer" : "remote-producer", threads + 2, null);
        Boxline boxline =
            sql
                ? null
                : Boxline.builder()
                    .store(JdbcStore.builder(pool).schema(schema).build())
                    .sequencer(false)
                    .producerNotifyInterval(Duration.ofMillis(o.get(NOTIFY_MS)))
                    .migrate(false)
                    .build()
                    .start()) {
      PublishOne publish = sql ? throughSql(pool, db, schema) : throughBoxline(boxline);
      System.out.println("remote producer ready" + (sql ? " (SQL publish)" : ""));
      Pacer.run(
          total,
          o.get(WARM),
          o.get(WARM_RATE),
          o.get(RATE),
          threads,
          (i, lateNanos) -> {
            Transaction tx = publish.prepare(i, Payloads.randomKey(i, o.get(KEYS)));
            long t0 = System.nanoTime();
            tx.commit();
            committed[i] = DeliveryCheck.epochNanos();
            took[i] = System.nanoTime() - t0;
            late[i] = lateNanos;
          });
    }
    try (DataOutputStream out =
        new DataOutputStream(new BufferedOutputStream(new FileOutputStream(o.get(OUT))))) {
      out.writeInt(total);
      for (int i = 0; i < total; i++) {
        out.writeLong(committed[i]);
        out.writeLong(took[i]);
        out.writeLong(late[i]);
      }
    }
    System.out.println("remote producer done: " + total + " events");
  }

  private static PublishOne throughBoxline(Boxline boxline) {
    TopicName topic = TopicName.of("bench", "events");
    var publisher = boxline.publisher();
    return (i, key) -> {
      var e = Payloads.event(topic, i, key);
      return () -> boxline.inTransaction(tx -> publisher.publish(tx, e));
    };
  }

  /**
   * Publishes through the SQL-level publish() function on plain pooled connections, one transaction
   * per event, as a program in another language would: no Boxline in this process. The event's
   * index travels in a header.
   */
  private static PublishOne throughSql(HikariDataSource pool, Db db, String schema) {
    String call =
        "SELECT "
            + schema
            + ".publish('bench/events', 'order.placed', CAST(? AS jsonb), ?, CAST(? AS jsonb))";
    return (i, key) -> {
      String payload = new String(Payloads.payload(i), StandardCharsets.UTF_8);
      String headers = "{\"" + Payloads.INDEX_HEADER + "\": \"" + i + "\"}";
      return () -> {
        try (Connection c = pool.getConnection()) {
          c.setAutoCommit(false);
          try (CallableStatement ps = c.prepareCall(call)) {
            ps.setString(1, payload);
            ps.setString(2, key);
            ps.setString(3, headers);
            ps.execute();
          }
          c.commit();
        }
      };
    };
  }
}
