package io.boxline.testkit.process;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.BoxlineStats;
import io.boxline.Names;
import io.boxline.jdbc.JdbcStore;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * Child process: a Boxline that only competes for the sequencer lease and sequences while it holds
 * it; no publisher, no consumer. Stays up until killed or until stdin closes (then it closes
 * Boxline, which hands the lease back).
 *
 * <p>Arguments (besides those of {@link ChildMain}): {@code --instance} (the lease owner name),
 * {@code --leaseMillis} (default 2000), {@code --idlePollMillis} (default 1000), {@code
 * --batchSize} (default 2000). Prints {@code READY} once started and {@code LEADING}/{@code
 * STANDBY} when its role changes.
 */
public final class SequencerProcess {
  private SequencerProcess() {}

  /** This main's arguments, next to those of {@link ChildMain}. */
  static final class Args extends ChildMain {
    @Option(names = "--instance", required = true)
    String instance;

    @Option(names = "--leaseMillis")
    long leaseMillis = 2000;

    @Option(names = "--idlePollMillis")
    long idlePollMillis = 1000;

    @Option(names = "--batchSize")
    int batchSize = 2000;
  }

  public static void main(String[] argv) throws Exception {
    Args child = ChildMain.init(new Args(), argv);
    String schema = Names.requireSchema(child.schema);
    String instance = child.instance;
    HikariDataSource pool = child.pool("boxline-" + instance, 4);
    Boxline boxline =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
            .instanceId(instance)
            .sequencer(true)
            .sequencerLease(Duration.ofMillis(child.leaseMillis))
            .sequencerIdlePoll(Duration.ofMillis(child.idlePollMillis))
            .sequencerBatchSize(child.batchSize)
            .build()
            .start();
    ChildMain.log("READY instance=" + instance + " pid=" + ProcessHandle.current().pid());

    Thread progress =
        new Thread(
            () -> {
              BoxlineStats last = null;
              while (true) {
                BoxlineStats s = boxline.stats();
                if (last == null || s.sequencerLeader() != last.sequencerLeader()) {
                  ChildMain.log(s.sequencerLeader() ? "LEADING" : "STANDBY");
                }
                if (last == null || s.eventsSequenced() != last.eventsSequenced()) {
                  ChildMain.log(s.toString());
                }
                last = s;
                try {
                  Thread.sleep(200); // progress report only
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "progress");
    progress.setDaemon(true);
    progress.start();

    child.awaitShutdown();
    boxline.close();
    pool.close();
    ChildMain.log("STOPPED " + boxline.stats());
    System.exit(0);
  }
}
