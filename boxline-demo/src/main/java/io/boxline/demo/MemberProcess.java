package io.boxline.demo;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.EventHandler;
import io.boxline.PartitionListener;
import io.boxline.TopicPartition;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.CoordinationStore;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/**
 * One member of a consumer group with what a process of its own would have: a Boxline instance (no
 * sequencer), a connection pool and a coordination client of its own. It runs in this JVM, so that
 * memory coordination works as well as the database and etcd, and {@link #kill()} ends it the way
 * SIGKILL would end its process ({@link CrashGate}).
 */
final class MemberProcess implements AutoCloseable {
  /** Connections: the wake-up listener, the workers, the dispatcher, the group thread, spare. */
  private static final int POOL_EXTRA = 6;

  final String id;
  private final CrashGate gate;
  private final HikariDataSource pool;
  private final Boxline boxline;
  private final Consumer consumer;

  private MemberProcess(
      String id, CrashGate gate, HikariDataSource pool, Boxline boxline, Consumer consumer) {
    this.id = id;
    this.gate = gate;
    this.pool = pool;
    this.boxline = boxline;
    this.consumer = consumer;
  }

  /**
   * Starts member {@code id} of {@code subscription}'s group, its events going to {@code handler}.
   */
  static MemberProcess start(
      String id,
      String subscription,
      DemoDatabase db,
      DemoCoordination coordination,
      EventHandler handler,
      PartitionListener listener,
      int concurrency,
      int batchSize) {
    CrashGate gate = new CrashGate(id);
    gate.foreign(Thread.currentThread()); // it starts the member, and goes on with the demo
    HikariDataSource pool = db.newPool(id, concurrency + POOL_EXTRA);
    Boxline boxline = null;
    try {
      Boxline.Builder builder =
          Boxline.builder()
              .instanceId(id)
              .store(JdbcStore.builder(gate.dataSource(pool)).schema(db.boxlineSchema).build())
              .eventTypes(Demo.TYPES)
              .sequencer(false) // the demo's main instance sequences
              .migrate(false); // and has created the tables
      CoordinationStore store = coordination.newStore();
      if (store != null) { // else the database's, through the gated pool
        builder.coordination(gate.coordination(store, !coordination.shared()));
      }
      boxline = builder.build().start();
      Consumer consumer =
          boxline
              .consumer(subscription)
              .id(id)
              .handler(gate.handler(handler))
              .listener(listener)
              .concurrency(concurrency)
              .batchSize(batchSize)
              .start();
      return new MemberProcess(id, gate, pool, boxline, consumer);
    } catch (RuntimeException | Error e) {
      if (boxline != null) {
        boxline.close();
      }
      pool.close();
      throw e;
    }
  }

  /** The partitions it holds now, by number. */
  Set<Integer> partitions() {
    Set<Integer> out = new TreeSet<>();
    if (!gate.killed()) {
      for (TopicPartition p : consumer.assignedPartitions()) {
        out.add(p.partition());
      }
    }
    return out;
  }

  long handled() {
    return consumer.handledCount();
  }

  /**
   * Kills it: its check-ins, connections and handler stop dead (it does not leave the group), and
   * its open connections are aborted, so the database rolls back whatever they had begun (a batch's
   * cursor commit among them), as when a process dies and the kernel closes its sockets.
   */
  void kill() {
    gate.kill();
    pool.close(); // HikariCP aborts the connections in use, then closes the idle ones
  }

  /**
   * Kills it in the middle of a batch: right after one of its handler calls (waiting up to {@code
   * timeout} for one, then anyway). Returns System.nanoTime() of its death.
   */
  long killMidBatch(Duration timeout) throws InterruptedException {
    long at = gate.awaitMidBatch(timeout);
    kill();
    return at;
  }

  /** A graceful stop; for a killed member, frees what is left of it, silently. */
  @Override
  public void close() {
    if (!gate.killed()) {
      consumer.close(); // finishes the in-flight batches, commits, leaves the group
      boxline.close();
      pool.close();
      return;
    }
    Thread reaper =
        new Thread(
            () -> {
              gate.reap(); // the parked threads fail their calls and end
              consumer.stop(Duration.ofMillis(100));
              boxline.close();
            },
            "demo-reap-" + id);
    gate.silence(reaper);
    reaper.setDaemon(true);
    reaper.start();
    try {
      reaper.join(Duration.ofSeconds(15).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
