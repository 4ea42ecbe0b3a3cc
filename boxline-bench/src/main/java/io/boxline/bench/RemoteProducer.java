package io.boxline.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * The W2 producer in another JVM: a Boxline with {@code sequencer(false)} (on PostgreSQL it NOTIFYs
 * the remote sequencer at a bounded rate; on MariaDB there is no NOTIFY, it just commits and the
 * consumer JVM's Boxline learns of the rows through its adaptive wake-up poll) that publishes one
 * event per transaction, paced open-loop, and writes for each event the wall-clock time (epoch
 * nanoseconds from {@link java.time.Instant#now()}, CLOCK_REALTIME, the same clock the consumer JVM
 * reads on this machine) at which its commit returned, the commit duration, and how late after its
 * due time it was sent.
 *
 * <p>Arguments: url user password schema rate total threads keys outFile [notifyIntervalMillis
 * [warmEvents warmRate]] (the URL decides the database, as in {@link Bench}; the notify interval
 * means nothing on MariaDB)
 */
public final class RemoteProducer {
  private RemoteProducer() {}

  public static void main(String[] args) throws Exception {
    Bench.quietLogs();
    String url = args[0];
    String user = args[1];
    String password = args[2];
    String schema = args[3];
    double rate = Double.parseDouble(args[4]);
    int total = Integer.parseInt(args[5]);
    int threads = Integer.parseInt(args[6]);
    int keys = Integer.parseInt(args[7]);
    String out = args[8];
    int warm = args.length > 10 ? Integer.parseInt(args[10]) : 0;
    double warmRate = args.length > 11 ? Double.parseDouble(args[11]) : rate;
    Duration notifyInterval =
        args.length > 9
            ? Duration.ofMillis(Long.parseLong(args[9]))
            : Boxline.Builder.DEFAULT_PRODUCER_NOTIFY_INTERVAL;
    Db db = new Db(url, user, "-".equals(password) ? "" : password);
    long[] committed = new long[total];
    long[] took = new long[total];
    long[] late = new long[total];
    TopicName topic = TopicName.of("bench", "events");
    if (args.length > 12 && args[12].equals("sql")) {
      publishThroughSql(
          db, schema, rate, total, threads, keys, warm, warmRate, committed, took, late);
      write(out, total, committed, took, late);
      return;
    }
    try (HikariDataSource pool = db.pool("remote-producer", threads + 2, null);
        Boxline boxline =
            Boxline.builder()
                .store(JdbcStore.builder(pool).schema(schema).build())
                .sequencer(false)
                .producerNotifyInterval(notifyInterval)
                .migrate(false)
                .build()
                .start()) {
      var publisher = boxline.publisher();
      System.out.println("remote producer ready");
      Pacer.run(
          total,
          warm,
          warmRate,
          rate,
          threads,
          (i, lateNanos) -> {
            String key = "customer-" + new SplittableRandom(i).nextInt(keys);
            OutgoingEvent e =
                OutgoingEvent.builder(topic)
                    .id(Payloads.id(i))
                    .type("order.placed")
                    .key(key)
                    .contentType("application/json")
                    .payload(Payloads.payload(i))
                    .build();
            long t0 = System.nanoTime();
            boxline.inTransaction(tx -> publisher.publish(tx, e));
            committed[i] = DeliveryCheck.epochNanos();
            took[i] = System.nanoTime() - t0;
            late[i] = lateNanos;
          });
    }
    write(out, total, committed, took, late);
  }

  private static void write(String out, int total, long[] committed, long[] took, long[] late)
      throws java.io.IOException {
    try (DataOutputStream o =
        new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out)))) {
      o.writeInt(total);
      for (int i = 0; i < total; i++) {
        o.writeLong(committed[i]);
        o.writeLong(took[i]);
        o.writeLong(late[i]);
      }
    }
    System.out.println("remote producer done: " + total + " events");
  }

  /**
   * Publishes through the SQL-level publish() (PostgreSQL's function, MariaDB's procedure) on plain
   * pooled connections, one transaction per event, as a program in another language would: no
   * Boxline in this process. The event's index travels in a header.
   */
  private static void publishThroughSql(
      Db db,
      String schema,
      double rate,
      int total,
      int threads,
      int keys,
      int warm,
      double warmRate,
      long[] committed,
      long[] took,
      long[] late)
      throws Exception {
    boolean postgres = db.url.startsWith("jdbc:postgresql");
    String call =
        postgres
            ? "SELECT "
                + schema
                + ".publish('bench/events', 'order.placed', CAST(? AS jsonb), ?,"
                + " CAST(? AS jsonb))"
            : "{call "
                + schema
                + ".publish('bench/events', 'order.placed', ?, ?, ?, NULL, NULL, ?)}";
    try (HikariDataSource pool = db.pool("sql-producer", threads + 2, null)) {
      System.out.println("remote producer ready (SQL publish)");
      Pacer.run(
          total,
          warm,
          warmRate,
          rate,
          threads,
          (i, lateNanos) -> {
            String key = "customer-" + new SplittableRandom(i).nextInt(keys);
            String payload =
                new String(Payloads.payload(i), java.nio.charset.StandardCharsets.UTF_8);
            String headers = "{\"" + Payloads.INDEX_HEADER + "\": \"" + i + "\"}";
            long t0 = System.nanoTime();
            try (java.sql.Connection c = pool.getConnection()) {
              c.setAutoCommit(false);
              try (java.sql.CallableStatement ps = c.prepareCall(call)) {
                ps.setString(1, payload);
                ps.setString(2, key);
                ps.setString(3, headers);
                if (!postgres) {
                  ps.registerOutParameter(4, java.sql.Types.CHAR);
                }
                ps.execute();
              }
              c.commit();
            }
            committed[i] = DeliveryCheck.epochNanos();
            took[i] = System.nanoTime() - t0;
            late[i] = lateNanos;
          });
    }
  }
}
