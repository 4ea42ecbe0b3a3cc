package io.boxline.internal.memory;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One transaction of the in-memory store, handed out as a {@link Connection} (a proxy): auto-commit
 * is off, and the store's calls that take the connection buffer their writes here. {@link
 * Connection#commit()} applies them all at once under the store's lock; {@link
 * Connection#rollback()}, or {@link Connection#close()} without a commit, drops them. Rows the
 * transaction wrote stay locked until then (see {@link RowLocks}). After a commit or rollback the
 * connection goes on with a new transaction, as a JDBC connection does.
 *
 * <p>It runs no SQL: statements, savepoints, metadata and the other JDBC features throw {@link
 * SQLFeatureNotSupportedException}, saying so.
 */
final class MemoryTransaction implements InvocationHandler {
  /** What the proxy implements besides {@link Connection}, so the store finds its transaction. */
  interface Handle {
    MemoryTransaction transaction();
  }

  private static final AtomicLong IDS = new AtomicLong();

  private final MemoryDatabase db;
  private final long id = IDS.incrementAndGet();
  final Connection connection;

  /** Written under the store's lock; read by the proxy's isClosed without it. */
  private volatile boolean closed;

  /** Writes to apply at commit, in call order (run under the store's lock). */
  final List<Runnable> writes = new ArrayList<>();

  /** What to do once the commit is visible (wake-ups), outside the store's lock. */
  final List<Runnable> afterCommit = new ArrayList<>();

  /** Values this transaction wrote and reads back before its commit, by row (e.g. key owners). */
  final Map<Object, Object> pending = new HashMap<>();

  /** The rows this transaction holds (see {@link RowLocks}). */
  final Set<Object> held = new HashSet<>();

  /** The transaction this one waits for, while it waits (deadlock detection). */
  MemoryTransaction waitingFor;

  MemoryTransaction(MemoryDatabase db) {
    this.db = db;
    this.connection =
        (Connection)
            Proxy.newProxyInstance(
                MemoryTransaction.class.getClassLoader(),
                new Class<?>[] {Connection.class, Handle.class},
                this);
  }

  boolean belongsTo(MemoryDatabase database) {
    return db == database;
  }

  boolean closed() {
    return closed;
  }

  /** Runs under the store's lock: applies the writes and frees the rows. */
  void applyLocked() {
    for (Runnable w : writes) {
      w.run();
    }
    forgetLocked();
  }

  /** Runs under the store's lock: drops the writes and frees the rows. */
  void forgetLocked() {
    writes.clear();
    pending.clear();
    db.locks.releaseAll(this);
  }

  void markClosed() {
    closed = true;
  }

  private void requireOpen(String what) throws SQLException {
    if (closed) {
      throw new SQLException("cannot " + what + ": the in-memory transaction is closed", "08003");
    }
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    int arity = args == null ? 0 : args.length;
    String name = method.getName();
    switch (name) {
      case "transaction":
        return this;
      case "equals":
        return arity == 1 && proxy == args[0];
      case "hashCode":
        return System.identityHashCode(proxy);
      case "toString":
        return "in-memory transaction #" + id + (closed ? " (closed)" : "");
      case "commit":
        requireOpen("commit");
        db.commit(this);
        return null;
      case "rollback":
        if (arity == 0) {
          requireOpen("roll back");
          db.rollback(this);
          return null;
        }
        break;
      case "close":
      case "abort":
        db.close(this);
        return null;
      case "isClosed":
        return closed;
      case "isValid":
        return !closed;
      case "getAutoCommit":
        requireOpen("read auto-commit");
        return false;
      case "setAutoCommit":
        requireOpen("set auto-commit");
        if (Boolean.FALSE.equals(args[0])) {
          return null;
        }
        break;
      case "isReadOnly":
        return false;
      case "getTransactionIsolation":
        return Connection.TRANSACTION_READ_COMMITTED;
      case "getWarnings":
        return null;
      case "clearWarnings":
      case "beginRequest":
      case "endRequest":
        return null;
      case "isWrapperFor":
        return ((Class<?>) args[0]).isInstance(proxy);
      case "unwrap":
        if (((Class<?>) args[0]).isInstance(proxy)) {
          return proxy;
        }
        throw new SQLException("the in-memory transaction is not a wrapper for " + args[0]);
      case "setClientInfo":
        throw new SQLClientInfoException(unsupported(name), Map.of());
      default:
        break;
    }
    throw new SQLFeatureNotSupportedException(unsupported(name + describe(args)));
  }

  private static String describe(Object[] args) {
    return args != null && args.length == 1 && args[0] instanceof Boolean
        ? "(" + args[0] + ")"
        : "";
  }

  private static String unsupported(String what) {
    return "Connection."
        + what
        + " is not supported by the in-memory store's transaction: it holds no tables and runs no"
        + " SQL, only commit(), rollback() and close() (auto-commit stays off, no savepoints). Use"
        + " a database (JdbcStore) for handlers that write through JDBC.";
  }
}
