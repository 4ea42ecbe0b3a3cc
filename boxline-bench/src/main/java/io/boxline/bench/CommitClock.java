package io.boxline.bench;

import javax.sql.DataSource;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;

/**
 * Reads {@link System#nanoTime()} the moment a connection's {@code commit()} returns, per thread:
 * W2's "commit returned" for producers in the bench's JVM. Stamping after {@code inTransaction}
 * returns instead would stamp late by whatever Boxline does after the commit, and a handler started
 * in that time would seem to have waited less.
 */
final class CommitClock {
  private final ThreadLocal<long[]> lastCommit = ThreadLocal.withInitial(() -> new long[1]);

  DataSource wrap(DataSource target) {
    return ProxyDataSourceBuilder.create("commit-clock", target)
        .afterMethod(
            call -> {
              if (call.getMethod().getName().equals("commit")
                  && call.getTarget() instanceof java.sql.Connection) {
                lastCommit.get()[0] = System.nanoTime();
              }
            })
        .build();
  }

  /** When this thread's last commit returned. */
  long lastCommitNanos() {
    return lastCommit.get()[0];
  }
}
