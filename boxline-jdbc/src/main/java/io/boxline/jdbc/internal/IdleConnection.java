package io.boxline.jdbc.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;

/**
 * One pooled connection kept for the statements that run on a timer whether or not anything happens
 * — group check-ins, the sequencer's lease poll, backlog re-reads. Borrowing a pooled connection
 * for each of them makes most pools validate it first (HikariCP pings a connection idle for more
 * than 500 ms), which nearly doubled an idle deployment's round trips. Users take turns; each
 * statement is a single short auto-commit statement. A connection found closed (the server or the
 * network dropped it) is replaced on the next use.
 */
final class IdleConnection implements AutoCloseable {
  private final DataSource dataSource;
  private final ReentrantLock lock = new ReentrantLock();
  private Connection physical;
  private boolean closed;

  IdleConnection(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * The held connection, for one use: closing what this returns gives it back (it stays open).
   * Falls back to a plain pooled connection once the store is closed.
   */
  Connection borrow() throws SQLException {
    lock.lock();
    try {
      if (closed) {
        lock.unlock();
        return dataSource.getConnection();
      }
      if (physical == null || physical.isClosed()) {
        physical = dataSource.getConnection();
      }
      if (!physical.getAutoCommit()) {
        physical.setAutoCommit(true);
      }
      return wrap(physical);
    } catch (SQLException | RuntimeException e) {
      if (lock.isHeldByCurrentThread()) {
        lock.unlock();
      }
      throw e;
    }
  }

  private Connection wrap(Connection c) {
    boolean[] returned = {false};
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("close") && method.getParameterCount() == 0) {
                if (!returned[0]) {
                  returned[0] = true;
                  giveBack(c);
                }
                return null;
              }
              if (method.getName().equals("isClosed") && method.getParameterCount() == 0) {
                return returned[0] || c.isClosed();
              }
              try {
                return method.invoke(c, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private void giveBack(Connection c) {
    try {
      if (!c.getAutoCommit()) {
        c.rollback(); // a user left a transaction open: never carry it into the next use
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      JdbcSql.closeQuietly(c); // broken: the next borrow takes a fresh one
      physical = null;
    } finally {
      lock.unlock();
    }
  }

  /** Returns the held connection to the pool (waits for a use in progress). */
  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      if (physical != null) {
        JdbcSql.closeQuietly(physical);
        physical = null;
      }
    } finally {
      lock.unlock();
    }
  }
}
