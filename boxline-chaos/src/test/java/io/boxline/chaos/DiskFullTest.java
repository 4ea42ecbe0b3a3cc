package io.boxline.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The database runs out of disk: a PostgreSQL of the test's own on a 96 MB tmpfs (1 MB WAL
 * segments) that a filler file nearly fills. Publishing fails with the database's own words (no
 * space left), nothing committed is lost, and once the filler goes (and the server is started again
 * if it stopped) publishing and delivery resume by themselves. Needs root, to mount the tmpfs.
 */
class DiskFullTest {
  private static final TopicName TOPIC = TopicName.of("full/app", "orders");

  @Test
  @Timeout(240)
  void aFullDiskFailsPublishesClearlyLosesNothingAndRecoversWhenSpaceReturns() throws Exception {
    assertThat(System.getProperty("user.name"))
        .as("this test mounts a small tmpfs, which needs root")
        .isEqualTo("root");
    Path mount = Files.createTempDirectory(Path.of("/tmp"), "boxline-diskfull-");
    PrivatePostgres.run(
        Duration.ofSeconds(10),
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=96m",
        "tmpfs",
        mount.toString());
    Path data = mount.resolve("pgdata");
    Path filler = mount.resolve("filler");
    int port = PrivatePostgres.freePort();
    try {
      PrivatePostgres.run(Duration.ofSeconds(10), "chown", "postgres", mount.toString());
      PrivatePostgres.pgCommand(
          Duration.ofMinutes(2),
          PrivatePostgres.BIN.resolve("initdb").toString(),
          "-D",
          data.toString(),
          "-U",
          "postgres",
          "--auth=trust",
          "--wal-segsize=1",
          "--no-sync");
      start(data, port, mount);
      String url = "jdbc:postgresql://127.0.0.1:" + port + "/postgres?socketTimeout=20";
      HikariConfig cfg = new HikariConfig();
      cfg.setJdbcUrl(url);
      cfg.setUsername("postgres");
      cfg.setMaximumPoolSize(8);
      cfg.setConnectionTimeout(3_000);
      cfg.setPoolName("diskfull");
      Set<UUID> handled = ConcurrentHashMap.newKeySet();
      List<UUID> acked = new CopyOnWriteArrayList<>();
      List<String> errors = new CopyOnWriteArrayList<>();
      try (HikariDataSource pool = new HikariDataSource(cfg);
          Boxline boxline =
              Boxline.builder()
                  .store(JdbcStore.builder(pool).schema("diskfull").build())
                  .instanceId("app")
                  .build()
                  .start()) {
        boxline.admin().createNamespace(NamespacePath.of("full/app"));
        boxline.admin().createTopic(TOPIC, 2);
        boxline.admin().createSubscription(SubscriptionSpec.of("full", TOPIC));
        Consumer consumer = boxline.consumer("full").handler(e -> handled.add(e.id())).start();
        // Leave about 12 MB: the rest of the disk is a file that can be deleted later.
        long free = Files.getFileStore(mount).getUsableSpace();
        byte[] block = new byte[1024 * 1024];
        try (var out = Files.newOutputStream(filler)) {
          for (long left = free - 12L * 1024 * 1024; left > 0; left -= block.length) {
            out.write(block);
          }
        }
        byte[] payload = new byte[8 * 1024];
        Arrays.fill(payload, (byte) 'x');
        int failuresInARow = 0;
        long t0 = System.nanoTime();
        while (failuresInARow < 5 && System.nanoTime() - t0 < Duration.ofSeconds(90).toNanos()) {
          OutgoingEvent e =
              OutgoingEvent.builder(TOPIC)
                  .type("big")
                  .key("k" + acked.size() % 8)
                  .payload(payload)
                  .build();
          try {
            acked.add(boxline.inTransaction(tx -> boxline.publisher().publish(tx, e)).eventId());
            failuresInARow = 0;
          } catch (RuntimeException failed) {
            failuresInARow++;
            errors.add(messages(failed));
            ChildArgs.sleepQuietly(Duration.ofMillis(100)); // the disk stays full
          }
        }
        System.out.printf(
            "disk full after %d events of 8 KB; first error: %s%n", acked.size(), errors.get(0));
        assertThat(errors).as("publishing failed once the disk was full").isNotEmpty();
        assertThat(errors.get(0))
            .as("the error says what is wrong")
            .containsAnyOf("No space left on device", "could not extend", "could not write");

        Files.delete(filler); // space returns
        long back = System.nanoTime();
        if (!accepts(url)) {
          start(data, port, mount); // it stopped itself (a failed WAL write is a PANIC)
        }
        int before = acked.size();
        await(
            "publishing again",
            Duration.ofSeconds(60),
            () -> {
              try {
                OutgoingEvent e =
                    OutgoingEvent.builder(TOPIC)
                        .type("small")
                        .key("after")
                        .payload(new byte[10])
                        .build();
                acked.add(
                    boxline.inTransaction(tx -> boxline.publisher().publish(tx, e)).eventId());
                return acked.size() > before + 20;
              } catch (RuntimeException stillFailing) {
                return false;
              }
            });
        System.out.printf(
            "publishing again %d ms after the space returned%n",
            (System.nanoTime() - back) / 1_000_000);
        Set<UUID> inLog = new HashSet<>();
        try (Connection c = DriverManager.getConnection(url, "postgres", "");
            Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("SELECT event_id FROM diskfull.log")) {
          while (rs.next()) {
            inLog.add(rs.getObject(1, UUID.class));
          }
        }
        await(
            "every logged event delivered",
            Duration.ofSeconds(60),
            () -> handled.containsAll(inLog) && inLog.size() >= acked.size());
        assertThat(inLog).as("every acknowledged event is in the log").containsAll(acked);
        consumer.close();
      }
    } finally {
      try {
        PrivatePostgres.pgCommand(
            Duration.ofMinutes(1),
            PrivatePostgres.BIN.resolve("pg_ctl").toString(),
            "-D",
            data.toString(),
            "-m",
            "immediate",
            "stop");
      } catch (RuntimeException alreadyStopped) {
        // stopped by the full disk
      }
      PrivatePostgres.run(Duration.ofSeconds(30), "umount", mount.toString());
      Files.deleteIfExists(mount);
    }
  }

  private static void start(Path data, int port, Path mount) {
    PrivatePostgres.pgCommand(
        Duration.ofMinutes(2),
        PrivatePostgres.BIN.resolve("pg_ctl").toString(),
        "-D",
        data.toString(),
        "-l",
        "/dev/null",
        "-w",
        "-t",
        "110",
        "-o",
        "-p "
            + port
            + " -k "
            + mount
            + " -c listen_addresses=127.0.0.1 -c max_wal_size=16MB"
            + " -c min_wal_size=4MB",
        "start");
  }

  private static boolean accepts(String url) {
    try (Connection c = DriverManager.getConnection(url, "postgres", "")) {
      return true;
    } catch (java.sql.SQLException e) {
      return false;
    }
  }

  /** The messages of the whole cause chain, the database's own words included. */
  private static String messages(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      s.append(c.getMessage()).append(" | ");
    }
    return s.toString();
  }

  private static void await(String what, Duration max, BooleanSupplier condition) {
    long deadline = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + max + " waiting for " + what);
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(100)); // polling a condition, bounded above
    }
  }
}
