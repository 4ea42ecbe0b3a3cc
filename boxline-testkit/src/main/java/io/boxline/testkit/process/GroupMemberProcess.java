package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.Names;
import io.boxline.PartitionListener;
import io.boxline.TopicPartition;
import io.boxline.jdbc.JdbcStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Option;

/**
 * Child process: one member of a consumer group (a subscription), coordinated through whatever
 * {@code CoordinationStore} the store provides (the database by default). It reads the group policy
 * from the coordination store like any consumer, so the parent sets it before starting members.
 *
 * <p>The handler records every delivery in {@code <schema>.handled(event_id, topic, partition, seq,
 * member, run)} with its own auto-commit insert (the at-least-once path, outside Boxline's cursor
 * commit). With {@code --blockType=T --gate=FILE}, after recording an event of type {@code T} the
 * handler prints {@code BLOCKED} and waits until {@code FILE} exists (at most {@code --gateMillis},
 * default 120 s): a batch held in flight at a point the parent can observe.
 *
 * <p>With {@code --startGate=FILE} the process starts Boxline, prints {@code AT START GATE} and
 * waits until {@code FILE} exists (at most 120 s) before its consumer joins the group: the parent
 * can have the JVM started and connected ahead of the moment the member is to join.
 *
 * <p>Arguments (besides those of {@link ChildMain}): {@code --id} member id (also the Boxline
 * instance id prefix), {@code --subscription}, {@code --run} (recorded with each delivery), {@code
 * --batch} (default 20), {@code --concurrency} (default 3), {@code --weight} (default 1), {@code
 * --shutdownMillis} (graceful stop bound, default 10000). Never runs the sequencer.
 *
 * <p>Prints {@code READY} once the consumer started, {@code ASSIGNED}/{@code REVOKED}/{@code LOST}
 * from its partition listener, and a {@code STATUS handled=… fenced=… lost=… assigned=[…]} line
 * whenever one of those changes. Closing stdin stops the consumer (which leaves the group, freeing
 * its leases) and Boxline, then prints {@code STOPPED}.
 */
public final class GroupMemberProcess {
  private GroupMemberProcess() {}

  /** This main's arguments, next to those of {@link ChildMain}. */
  static final class Args extends ChildMain {
    @Option(names = "--id", required = true)
    String id;

    @Option(names = "--subscription", required = true)
    String subscription;

    @Option(names = "--run")
    int run = 1;

    @Option(names = "--batch")
    int batch = 20;

    @Option(names = "--concurrency")
    int concurrency = 3;

    @Option(names = "--weight")
    double weight = 1;

    @Option(names = "--shutdownMillis")
    long shutdownMillis = 10_000;

    @Option(names = "--blockType")
    String blockType;

    @Option(names = "--gate")
    Path gate;

    @Option(names = "--gateMillis")
    long gateMillis = 120_000;

    @Option(names = "--startGate")
    Path startGate;
  }

  public static void main(String[] argv) throws Exception {
    Args child = ChildMain.init(new Args(), argv);
    String schema = Names.requireSchema(child.schema);
    String id = child.id;
    String subscription = child.subscription;
    int run = child.run;
    int batch = child.batch;
    int concurrency = child.concurrency;
    double weight = child.weight;
    long shutdownMillis = child.shutdownMillis;
    String blockType = child.blockType;
    Path gate = child.gate;
    long gateMillis = child.gateMillis;
    if ((blockType == null) != (gate == null)) {
      throw new IllegalArgumentException("--blockType and --gate go together");
    }

    HikariDataSource boxlinePool = child.pool("boxline-" + id, concurrency + 4);
    HikariDataSource handlerPool = child.pool("handler-" + id, concurrency);
    // Open every connection now: on a loaded machine, connections opened one by one on first use
    // delay the first batches by seconds, long enough to run into the release grace.
    warm(boxlinePool, concurrency + 4);
    warm(handlerPool, concurrency);
    String insert =
        "INSERT INTO "
            + schema
            + ".handled (event_id, topic, partition, seq, member, run) VALUES (?, ?, ?, ?, ?, ?)";

    Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(boxlinePool).schema(schema).build())
            .instanceId(id + "-run" + run)
            .sequencer(false)
            .build()
            .start();
    if (child.startGate != null) {
      ChildMain.log("AT START GATE " + child.startGate);
      awaitStartGate(child, child.startGate);
      if (child.shuttingDown()) {
        boxline.close();
        handlerPool.close();
        boxlinePool.close();
        ChildMain.log("STOPPED at the start gate");
        System.exit(0);
      }
    }
    PartitionListener listener =
        new PartitionListener() {
          @Override
          public void onAssigned(Set<TopicPartition> partitions) {
            ChildMain.log("ASSIGNED " + sorted(partitions));
          }

          @Override
          public void onRevoked(Set<TopicPartition> partitions) {
            ChildMain.log("REVOKED " + sorted(partitions));
          }

          @Override
          public void onLost(Set<TopicPartition> partitions) {
            ChildMain.log("LOST " + sorted(partitions));
          }
        };
    Consumer consumer =
        boxline
            .consumer(subscription)
            .id(id)
            .weight(weight)
            .batchSize(batch)
            .concurrency(concurrency)
            .listener(listener)
            .handler(
                (Event e) -> {
                  try (Connection c = handlerPool.getConnection();
                      PreparedStatement ps = c.prepareStatement(insert)) {
                    ps.setObject(1, e.id());
                    ps.setString(2, e.topic().toString());
                    ps.setInt(3, e.partition());
                    ps.setLong(4, e.sequence());
                    ps.setString(5, id);
                    ps.setInt(6, run);
                    ps.executeUpdate();
                  } catch (SQLException ex) {
                    throw new IllegalStateException("could not record " + e, ex);
                  }
                  if (blockType != null && blockType.equals(e.type())) {
                    block(e, gate, gateMillis);
                  }
                })
            .start();
    ChildMain.log(
        "READY member="
            + id
            + " run="
            + run
            + " pid="
            + ProcessHandle.current().pid()
            + " subscription="
            + subscription);

    Thread progress =
        new Thread(
            () -> {
              String last = "";
              while (true) {
                String now =
                    "STATUS handled="
                        + consumer.handledCount()
                        + " fenced="
                        + consumer.fencedCount()
                        + " lost="
                        + consumer.lostCount()
                        + " assigned="
                        + sorted(consumer.assignedPartitions());
                if (!now.equals(last)) {
                  ChildMain.log(now + " checkIns=" + consumer.checkInCount());
                  last = now;
                }
                try {
                  Thread.sleep(100); // progress report only
                } catch (InterruptedException ex) {
                  return;
                }
              }
            },
            "progress");
    progress.setDaemon(true);
    progress.start();

    child.awaitShutdown();
    boolean clean = consumer.stop(Duration.ofMillis(shutdownMillis));
    boxline.close();
    handlerPool.close();
    boxlinePool.close();
    ChildMain.log(
        "STOPPED clean="
            + clean
            + " handled="
            + consumer.handledCount()
            + " fenced="
            + consumer.fencedCount()
            + " lost="
            + consumer.lostCount());
    System.exit(0);
  }

  /** Borrows {@code n} connections at once, so the pool opens them before work starts. */
  private static void warm(HikariDataSource pool, int n) throws SQLException {
    List<Connection> open = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        open.add(pool.getConnection());
      }
    } finally {
      for (Connection c : open) {
        c.close();
      }
    }
  }

  /** Waits until the start gate file exists (at most 120 s), or the parent asks for shutdown. */
  private static void awaitStartGate(ChildMain child, Path gate) {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!Files.exists(gate) && !child.shuttingDown()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("start gate " + gate + " did not open within 120 s");
      }
      try {
        Thread.sleep(10); // polls the gate file
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted at the start gate", ex);
      }
    }
  }

  /** Holds the handler (and so its batch) until the gate file exists. */
  private static void block(Event e, Path gate, long maxMillis) {
    ChildMain.log(
        "BLOCKED on event "
            + e.id()
            + " "
            + e.topic()
            + "#"
            + e.partition()
            + "@"
            + e.sequence()
            + " until "
            + gate
            + " exists");
    long deadline = System.nanoTime() + maxMillis * 1_000_000;
    while (!Files.exists(gate)) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("gate " + gate + " did not open within " + maxMillis);
      }
      try {
        Thread.sleep(20); // a deliberately slow handler, not a synchronisation
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while blocked on " + e.id(), ex);
      }
    }
    ChildMain.log("UNBLOCKED after event " + e.id() + " seq " + e.sequence());
  }

  private static String sorted(Set<TopicPartition> partitions) {
    Set<String> out = new TreeSet<>();
    for (TopicPartition p : partitions) {
      out.add(p.toString());
    }
    return out.toString();
  }
}
