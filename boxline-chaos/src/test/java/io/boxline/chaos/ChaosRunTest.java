package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The short chaos run of CI: a fixed seed, about forty seconds of faults (a kill of every role, a
 * pause past the lease deadline, a database crash and restart, a broker crash and restart, then
 * more drawn by weight), the drain, and the checker, which must pass. About a minute and a half on
 * two cores; then the same on a MariaDB server of the run's own. It needs PostgreSQL 15's binaries
 * in /usr/lib/postgresql/15/bin, mariadbd and nats-server, and fails (never skips) without them.
 */
class ChaosRunTest {
  @Test
  void aShortChaosRunLosesNothingAndKeepsEveryPromise() throws Exception {
    check(ChaosOptions.parse("seed=20261126", "seconds=40", "drain=90", "progress=5"));
  }

  /**
   * The same on MariaDB: a {@code mariadbd} of the run's own, killed with SIGKILL and restarted.
   */
  @Test
  void aShortChaosRunOnMariaDbLosesNothingAndKeepsEveryPromise() throws Exception {
    check(ChaosOptions.parse("seed=1207", "db=mariadb", "seconds=40", "drain=120", "progress=5"));
  }

  private static void check(ChaosOptions options) throws Exception {
    ChaosRun.Result result = new ChaosRun(options).run();
    String table = result.report().table();
    System.out.println(table);
    System.out.println(ChaosSummary.markdown(result));

    assertThat(result.report().passed()).as(table).isTrue();
    Map<Fault.Kind, Integer> kinds = new TreeMap<>();
    result.faults().forEach(i -> kinds.merge(i.fault().kind(), 1, Integer::sum));
    assertThat(kinds.keySet()).as("fault kinds injected").containsExactly(Fault.Kind.values());
    assertThat(result.faults())
        .as("every database and broker restart recovered")
        .filteredOn(i -> i.fault().role() == null)
        .allMatch(i -> i.recoveredMillis() >= 0);
    assertThat(result.unexpectedExits()).as("children that died on their own").isZero();
  }
}
