package io.boxline.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** The steady scenario and the command line ({@link TakeoverTest} has the takeover). */
class DemoTest {
  private static final String URL = DemoRun.URL;

  @Test
  void smallRunIsVerified() throws SQLException {
    DemoRun run =
        DemoRun.of(
            "--jdbc-url",
            URL,
            "--events",
            "1500",
            "--producers",
            "3",
            "--customers",
            "40",
            "--rollback-percent",
            "10");

    String text = run.text();
    assertThat(run.code()).as(text).isEqualTo(0);
    assertThat(text)
        .contains("Coordination: the database")
        .contains("VERIFIED: 1500 events delivered exactly once and in order")
        .containsPattern("events consumed by billing +1500 ")
        .containsPattern("events consumed by shipping +1500 ")
        .doesNotContain("[FAIL]");
    assertThat(Long.parseLong(run.find("transactions rolled back\\s+(\\d+)")))
        .as("some transactions were rolled back")
        .isPositive();
    run.assertSchemasDropped();
  }

  @Test
  void plainJdbcProducersAreVerifiedToo() throws SQLException {
    DemoRun run = DemoRun.of("--jdbc-url", URL, "--events", "600", "--plain-jdbc");

    assertThat(run.code()).as(run.text()).isEqualTo(0);
    assertThat(run.text()).contains("plain JDBC").contains("VERIFIED: 600 events");
    run.assertSchemasDropped();
  }

  @Test
  void badArgumentsExitWithUsage() {
    DemoRun run = DemoRun.of("--events", "zero");
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.text()).contains("--events", "needs a whole number").contains("Usage:");

    assertThat(DemoRun.of("--coordination", "zookeeper").text())
        .contains("--coordination", "memory, database, etcd");
    assertThat(DemoRun.of("--etcd-endpoints", "http://127.0.0.1:2379").text())
        .contains("--etcd-endpoints needs --coordination etcd");
    assertThat(
            DemoRun.of("--coordination", "etcd", "--etcd-endpoints", "tcp://127.0.0.1:2379").text())
        .contains("--etcd-endpoints: etcd endpoint must be an http:// or https:// URL");
    assertThat(DemoRun.of("--scenario", "takeover", "--partitions", "1").text())
        .contains("--scenario takeover needs --partitions 2 or more");
  }

  @Test
  void helpDescribesCoordinationAndScenarios() {
    DemoRun run = DemoRun.of("--help");
    assertThat(run.code()).isEqualTo(0);
    assertThat(run.text())
        .contains("--coordination=STORE", "memory works within one JVM only")
        .contains("--etcd-endpoints=URLS", "http://127.0.0.1:2379")
        .contains("--scenario=NAME", "takeover");
  }

  @Test
  void unreachableDatabaseIsAnError() {
    DemoRun run = DemoRun.of("--jdbc-url", "jdbc:postgresql://127.0.0.1:1/postgres");
    assertThat(run.code()).isEqualTo(3);
    assertThat(run.text()).contains("FAILED: cannot connect to jdbc:postgresql://127.0.0.1:1/");
  }

  @Test
  void unreachableEtcdIsAnError() throws SQLException {
    DemoRun run =
        DemoRun.of(
            "--jdbc-url", URL, "--coordination", "etcd", "--etcd-endpoints", "http://127.0.0.1:1");
    assertThat(run.code()).as(run.text()).isEqualTo(3);
    assertThat(run.text())
        .contains("FAILED: cannot reach etcd at http://127.0.0.1:1")
        .contains("apt-get install etcd-server");
    run.assertSchemasDropped();
  }
}
