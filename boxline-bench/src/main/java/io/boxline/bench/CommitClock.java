package io.boxline.bench;

import java.sql.Connection;
import javax.sql.DataSource;

/**
 * Reads {@link System#nanoTime()} the moment a connection's {@code commit()} returns, per thread:
 * W2's "commit returned" for producers in the bench's JVM. Stamping after {@code inTransaction}
 * returns instead would stamp late by whatever Boxline does after the commit, and a handler started
 * in that time would seem to have waited less.
 */
final class CommitClock {
  private final ThreadLocal<long[]> lastCommit = ThreadLocal.withInitial(() -> new long[1]);

  DataSource wrap(DataSource target) {
    return Probe.proxy(
        DataSource.class,
        (proxy, m, args) -> {
          Object r = Probe.call(target, m, args);
          return m.getName().equals("getConnection") ? connection((Connection) r) : r;
        });
  }

  /** When this thread's last commit returned. */
  long lastCommitNanos() {
    return lastCommit.get()[0];
  }

  private Connection connection(Connection target) {
    return Probe.proxy(
        Connection.class,
        (proxy, m, args) -> {
          Object r = Probe.call(target, m, args);
          if (m.getName().equals("commit")) {
            lastCommit.get()[0] = System.nanoTime();
          }
          return r;
        });
  }
}
