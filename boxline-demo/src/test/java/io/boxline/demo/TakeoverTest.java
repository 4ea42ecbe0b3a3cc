package io.boxline.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.testkit.EtcdServer;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The takeover scenario with each coordination store: one member of billing is killed mid-run, the
 * other takes over its partitions, and nothing is lost. etcd is the testkit's: a child process of
 * the etcd binary (Debian's etcd-server), or BOXLINE_TEST_ETCD_ENDPOINTS; without either the test
 * fails and says how to install it.
 */
class TakeoverTest {
  @Test
  void databaseCoordination() throws SQLException {
    verifyTakeover("the database", "--coordination", "database");
  }

  @Test
  void memoryCoordination() throws SQLException {
    verifyTakeover("in memory", "--coordination", "memory");
  }

  @Test
  void etcdCoordination() throws SQLException {
    String endpoints = String.join(",", EtcdServer.get().endpoints());
    DemoRun run =
        verifyTakeover(
            "etcd at " + endpoints, "--coordination", "etcd", "--etcd-endpoints", endpoints);
    assertThat(run.text()).containsPattern("Deleted \\d+ etcd keys under /boxline-demo/");
  }

  private static DemoRun verifyTakeover(String coordination, String... options)
      throws SQLException {
    List<String> args =
        new ArrayList<>(
            List.of("--jdbc-url", DemoRun.URL, "--scenario", "takeover", "--events", "2400"));
    args.addAll(Arrays.asList(options));
    DemoRun run = DemoRun.of(args.toArray(String[]::new));
    String text = run.text();

    assertThat(run.code()).as(text).isEqualTo(0);
    assertThat(text).contains("Coordination: " + coordination).doesNotContain("[FAIL]");
    List<Integer> orphaned = numbers(run.find("KILLED billing-a, holding partitions \\[([^]]*)]"));
    assertThat(orphaned).as("partitions the killed member held").isNotEmpty();
    for (int p : orphaned) {
      long ms = Long.parseLong(run.find("billing-b took over partition " + p + " (\\d+) ms after"));
      // A member that left would be replaced at the survivor's next check-in (200 ms apart); a
      // dead one only once its deadline has passed: 1 s after its last check-in, which came at
      // most one interval (200 ms, a little more on a busy machine) before the kill.
      assertThat(ms).as("partition %d taken over after the deadline", p).isGreaterThan(400);
    }
    assertThat(
            numbers(
                run.find(
                    "takeover complete \\d+ ms after the kill: billing-b holds"
                        + " partitions \\[([^]]*)]")))
        .as("the survivor holds every partition")
        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    assertThat(text).contains("[ok]   takeover: at the end billing-b held all 8 partitions");

    // Nothing lost, order kept, duplicates only what was in flight and within the bound.
    assertThat(text)
        .contains("billing: each of the 2400 committed events delivered, none lost")
        .contains("billing: every partition delivered sequences 1, 2, 3, ... with no gap")
        .contains("billing: per key order kept for all 200 customers")
        .contains("shipping: each of the 2400 committed events exactly once")
        .contains("VERIFIED: 2400 events delivered in order to billing and shipping, none lost");
    Matcher twice = Pattern.compile("(\\d+) delivered twice").matcher(text);
    long duplicates = twice.find() ? Long.parseLong(twice.group(1)) : 0;
    if (duplicates == 0) {
      assertThat(text).contains("none twice: billing-a had nothing in flight");
    }
    assertThat(duplicates).as("bound: 4 workers x 200 events per batch").isLessThanOrEqualTo(800);
    run.assertSchemasDropped();
    return run;
  }

  private static List<Integer> numbers(String list) {
    List<Integer> out = new ArrayList<>();
    for (String s : list.split(",")) {
      if (!s.isBlank()) {
        out.add(Integer.parseInt(s.strip()));
      }
    }
    return out;
  }
}
