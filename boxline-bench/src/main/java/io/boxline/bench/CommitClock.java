package io.boxline.bench;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
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
    return (DataSource)
        Proxy.newProxyInstance(
            CommitClock.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, m, args) -> {
              Object r = call(target, m, args);
              return m.getName().equals("getConnection") ? connection((Connection) r) : r;
            });
  }

  /** When this thread's last commit returned. */
  long lastCommitNanos() {
    return lastCommit.get()[0];
  }

  private Connection connection(Connection target) {
    return (Connection)
        Proxy.newProxyInstance(
            CommitClock.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, m, args) -> {
              Object r = call(target, m, args);
              if (m.getName().equals("commit")) {
                lastCommit.get()[0] = System.nanoTime();
              }
              return r;
            });
  }

  private static Object call(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getTargetException();
    }
  }
}
