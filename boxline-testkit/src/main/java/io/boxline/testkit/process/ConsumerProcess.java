package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.Names;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Child process: a Boxline consumer whose handler records every delivery in the table {@code
 * <schema>.handled(event_id, topic, partition, seq, run)} with its own auto-commit insert, outside
 * Boxline's transactions (the at-least-once path). Optionally also runs the sequencer ({@code
 * --sequencer=true}), which makes it a whole single-process application.
 *
 * <p>Arguments (besides those of {@link ChildMain}): {@code --instance} Boxline instance id, {@code
 * --subscription}, {@code --run} (number recorded with each delivery), {@code --batch}, {@code
 * --concurrency}, {@code --sequencer} (default false), {@code --leaseMillis} (default 2000), {@code
 * --spinMicros} (busy work per event, default 0), {@code --transactional} (record inside Boxline's
 * transaction; default false), {@code --committingThread} (handlers on committing threads; default
 * false), {@code --publishTopic} and {@code --publishThreads} (that many threads publish 1–3 events
 * per {@code inTransaction} to the topic, each transaction also inserting one row per event into
 * {@code <schema>.business(event_id)}; default none). Prints {@code READY} once consuming, {@code
 * COMMITTING_THREAD_USED} once a batch ran on a committing thread, and shuts down cleanly
 * (producers, consumer, then Boxline) when stdin closes.
 */
public final class ConsumerProcess {
  private ConsumerProcess() {}

  /** This main's arguments, next to those of {@link ChildMain}. */
  static final class Args extends ChildMain {
    @Option(names = "--instance", required = true)
    String instance;

    @Option(names = "--subscription", required = true)
    String subscription;

    @Option(names = "--run")
    int run = 1;

    @Option(names = "--batch")
    int batch = 100;

    @Option(names = "--concurrency")
    int concurrency = 4;

    @Option(names = "--sequencer", arity = "1")
    boolean sequencer;

    @Option(names = "--leaseMillis")
    long leaseMillis = 2000;

    @Option(names = "--spinMicros")
    long spinMicros;

    @Option(names = "--transactional", arity = "1")
    boolean transactional;

    @Option(names = "--committingThread", arity = "1")
    boolean committingThread;

    @Option(names = "--publishTopic")
    String publishTopic;

    @Option(names = "--publishThreads")
    int publishThreads;
  }

  private static void record(PreparedStatement ps, Event e, int run) throws SQLException {
    ps.setObject(1, e.id());
    ps.setString(2, e.topic().toString());
    ps.setInt(3, e.partition());
    ps.setLong(4, e.sequence());
    ps.setInt(5, run);
    ps.executeUpdate();
  }

  public static void main(String[] argv) throws Exception {
    Args child = ChildMain.init(new Args(), argv);
    String schema = Names.requireSchema(child.schema);
    String instance = child.instance;
    String subscription = child.subscription;
    int run = child.run;
    int batch = child.batch;
    int concurrency = child.concurrency;
    boolean sequencer = child.sequencer;
    long leaseMillis = child.leaseMillis;
    long spinNanos = child.spinMicros * 1000;
    // --transactional=true records each delivery in Boxline's own transaction (exactly-once
    // effects).
    boolean transactional = child.transactional;
    boolean committingThread = child.committingThread;
    String publishTopic = child.publishTopic;
    int publishThreads = child.publishThreads;

    HikariDataSource boxlinePool = child.pool("boxline-" + instance, concurrency + 4);
    HikariDataSource handlerPool = child.pool("handler-" + instance, concurrency);
    String insert =
        "INSERT INTO "
            + schema
            + ".handled (event_id, topic, partition, seq, run) VALUES (?, ?, ?, ?, ?)";

    Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(boxlinePool).schema(schema).build())
            .instanceId(instance)
            .sequencer(sequencer)
            .sequencerLease(Duration.ofMillis(leaseMillis))
            .build()
            .start();
    io.boxline.ConsumerBuilder builder =
        boxline
            .consumer(subscription)
            .id(instance + "-consumer")
            .batchSize(batch)
            .concurrency(concurrency)
            .handleOnCommittingThread(committingThread)
            .retryPolicy(
                io.boxline.RetryPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(500))
                    .inPlaceAttempts(1000)
                    .inPlaceTime(Duration.ofHours(1)));
    if (transactional) {
      builder.transactionalHandler(
          (e, tx) -> {
            spin(spinNanos);
            try (PreparedStatement ps = tx.prepareStatement(insert)) {
              record(ps, e, run);
            }
          });
    } else {
      builder.handler(
          (Event e) -> {
            spin(spinNanos);
            try (Connection c = handlerPool.getConnection();
                PreparedStatement ps = c.prepareStatement(insert)) {
              record(ps, e, run);
            } catch (SQLException ex) {
              throw new IllegalStateException("could not record " + e, ex);
            }
          });
    }
    Consumer consumer = builder.start();
    ChildMain.log(
        "READY instance="
            + instance
            + " run="
            + run
            + " pid="
            + ProcessHandle.current().pid()
            + " sequencer="
            + sequencer);

    java.util.concurrent.atomic.AtomicBoolean producing =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    List<Thread> producers = new ArrayList<>();
    for (int i = 0; publishTopic != null && i < publishThreads; i++) {
      TopicName topic = TopicName.parse(publishTopic);
      String business = "INSERT INTO " + schema + ".business (event_id) VALUES (?)";
      Thread t = new Thread(() -> produce(boxline, topic, business, producing), "producer-" + i);
      t.start();
      producers.add(t);
    }

    Thread progress =
        new Thread(
            () -> {
              long last = -1;
              boolean toldCommittingThread = false;
              while (true) {
                long n = consumer.handledCount();
                if (n != last) {
                  ChildMain.log("committed " + n + " events; " + boxline.stats());
                  last = n;
                }
                if (!toldCommittingThread && consumer.committingThreadBatches() > 0) {
                  ChildMain.log("COMMITTING_THREAD_USED");
                  toldCommittingThread = true;
                }
                try {
                  Thread.sleep(500); // progress report only
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "progress");
    progress.setDaemon(true);
    progress.start();

    child.awaitShutdown();
    producing.set(false);
    for (Thread t : producers) {
      t.join(10_000);
    }
    boolean clean = consumer.stop(Duration.ofSeconds(10));
    boxline.close();
    handlerPool.close();
    boxlinePool.close();
    ChildMain.log("STOPPED clean=" + clean + " committed=" + consumer.handledCount());
    System.exit(0);
  }

  /** Publishes until told to stop: 1–3 events per transaction, each with its business row. */
  private static void produce(
      Boxline boxline,
      TopicName topic,
      String business,
      java.util.concurrent.atomic.AtomicBoolean producing) {
    java.util.Random random = new java.util.Random();
    while (producing.get()) {
      boxline.inTransaction(
          tx -> {
            int n = 1 + random.nextInt(3);
            for (int i = 0; i < n; i++) {
              OutgoingEvent e =
                  OutgoingEvent.builder(topic)
                      .type("crash.event")
                      .key("k" + random.nextInt(50))
                      .payload(new byte[32])
                      .build();
              try (PreparedStatement ps = tx.prepareStatement(business)) {
                ps.setObject(1, e.id());
                ps.executeUpdate();
              }
              boxline.publisher().publish(tx, e);
            }
            return null;
          });
    }
  }

  private static void spin(long nanos) {
    if (nanos <= 0) {
      return;
    }
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
