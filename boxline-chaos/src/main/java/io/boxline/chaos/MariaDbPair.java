package io.boxline.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A MariaDB primary and a replica of the test's own (two private {@code mariadbd}s, GTID
 * replication, row-based binary log), for failover tests. With {@code semiSync} the primary's
 * commit returns only once the replica has the transaction in its relay log ({@code
 * rpl_semi_sync_master_wait_point = AFTER_SYNC}, a timeout long enough never to fall back to
 * asynchronous during a test); without, replication is asynchronous.
 *
 * <p>Clients use {@link #sequentialUrl()} (Connector/J's {@code sequential} mode: the first server
 * that answers) as the application user {@code app}, which has no right to write on a read-only
 * server: until {@link #promoteReplica()} the replica refuses its writes, as a failover manager's
 * fencing would.
 */
public final class MariaDbPair implements AutoCloseable {
  public static final String USER = "app";

  private final PrivateMariaDb primary;
  private final PrivateMariaDb replica;

  private MariaDbPair(PrivateMariaDb primary, PrivateMariaDb replica) {
    this.primary = primary;
    this.replica = replica;
  }

  public static MariaDbPair start(boolean semiSync) {
    List<String> common =
        List.of("--log-bin=binlog", "--binlog-format=ROW", "--log-slave-updates=ON");
    List<String> p = new ArrayList<>(common);
    p.add("--server-id=1");
    List<String> r = new ArrayList<>(common);
    r.add("--server-id=2");
    r.add("--read-only=ON");
    if (semiSync) {
      // Enabled once the replica is connected (below): before, every commit would wait for it.
      p.add("--rpl-semi-sync-master-wait-point=AFTER_SYNC");
      p.add("--rpl-semi-sync-master-timeout=600000");
      r.add("--rpl-semi-sync-slave-enabled=ON");
    }
    PrivateMariaDb primary = PrivateMariaDb.start(p);
    PrivateMariaDb replica;
    try {
      replica = PrivateMariaDb.start(r);
    } catch (RuntimeException e) {
      primary.close();
      throw e;
    }
    MariaDbPair pair = new MariaDbPair(primary, replica);
    try {
      pair.sql(
          primary,
          "CREATE USER 'app'@'%'",
          "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY"
              + " TABLES, LOCK TABLES, EXECUTE, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER"
              + " ROUTINE, TRIGGER, REFERENCES, PROCESS ON *.* TO 'app'@'%'");
      pair.sql(
          replica,
          "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = "
              + primary.port()
              + ", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos",
          "START SLAVE");
      pair.awaitReplicating(Duration.ofSeconds(60), false);
      if (semiSync) {
        pair.sql(primary, "SET GLOBAL rpl_semi_sync_master_enabled = ON");
        // The replica asks for semi-synchronous replication when it connects: connect again.
        pair.sql(replica, "STOP SLAVE", "START SLAVE");
        pair.awaitReplicating(Duration.ofSeconds(60), true);
      }
      return pair;
    } catch (RuntimeException e) {
      pair.close();
      throw e;
    }
  }

  /** Both servers, the primary first, for the application user. */
  public String sequentialUrl() {
    return "jdbc:mariadb:sequential://127.0.0.1:"
        + primary.port()
        + ",127.0.0.1:"
        + replica.port()
        + "/?sslMode=disable&connectTimeout=2000&socketTimeout=10000";
  }

  /**
   * Makes the replica apply each transaction only this many seconds after the primary committed it
   * ({@code MASTER_DELAY}; 0: at once): a lagging replica on demand.
   */
  public void delayReplica(int seconds) {
    sql(replica, "STOP SLAVE", "CHANGE MASTER TO MASTER_DELAY = " + seconds, "START SLAVE");
  }

  /** The read-only replica alone, for the application user. */
  public String replicaAppUrl() {
    return "jdbc:mariadb://127.0.0.1:"
        + replica.port()
        + "/?sslMode=disable&connectTimeout=2000&socketTimeout=10000";
  }

  /** The primary alone, for the application user. */
  public String primaryAppUrl() {
    return "jdbc:mariadb://127.0.0.1:"
        + primary.port()
        + "/?sslMode=disable&connectTimeout=2000&socketTimeout=10000";
  }

  /** The replica alone, as root. */
  public String replicaUrl() {
    return replica.url();
  }

  public String primaryUrl() {
    return primary.url();
  }

  /** SIGKILL to the primary. */
  public void crashPrimary() {
    primary.kill();
  }

  /**
   * Makes the replica the primary: it applies what it received (everything in its relay log), stops
   * replicating, forgets its primary and accepts writes. Returns the GTID position it had applied.
   */
  public String promoteReplica() {
    try (Connection c = DriverManager.getConnection(replica.url(), "root", "");
        Statement st = c.createStatement()) {
      String received = null;
      try (ResultSet rs = st.executeQuery("SHOW SLAVE STATUS")) {
        if (rs.next()) {
          received = rs.getString("Gtid_IO_Pos");
        }
      }
      if (received != null && !received.isEmpty()) {
        try (ResultSet rs =
            st.executeQuery("SELECT MASTER_GTID_WAIT('" + received.replace("'", "") + "', 60)")) {
          rs.next();
          if (rs.getInt(1) != 0) {
            throw new IllegalStateException("the replica did not apply " + received + " in 60 s");
          }
        }
      }
      st.execute("STOP SLAVE");
      st.execute("RESET SLAVE ALL");
      st.execute("SET GLOBAL read_only = OFF");
      return received;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot promote the replica", e);
    }
  }

  private void awaitReplicating(Duration max, boolean semiSync) {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(primary.url(), "root", "");
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery(
                  semiSync
                      ? "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE"
                          + " VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS'"
                      : "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE"
                          + " 'Binlog Dump%'")) {
        if (rs.next() && Integer.parseInt(rs.getString(1)) > 0) {
          return;
        }
      } catch (SQLException e) {
        // not up yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the replica did not connect to the primary in " + max);
      }
      ChildArgs.sleepQuietly(Duration.ofMillis(50));
    }
  }

  private void sql(PrivateMariaDb on, String... statements) {
    try (Connection c = DriverManager.getConnection(on.url(), "root", "");
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot set up replication on " + on, e);
    }
  }

  @Override
  public void close() {
    try {
      replica.close();
    } finally {
      primary.close();
    }
  }
}
