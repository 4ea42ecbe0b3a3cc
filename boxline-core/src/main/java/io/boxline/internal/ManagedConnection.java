package io.boxline.internal;

import io.boxline.ConnectionStateException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Savepoint;

/**
 * The connection {@code inTransaction} hands its work. The publisher holds some events back to the
 * commit (in-transaction topics), so what the work rolls back — to a savepoint, or all of it — must
 * be forgotten by the publisher too, not only by the database; and only {@code inTransaction} may
 * commit, because it writes those events just before. Everything else goes straight to the pooled
 * connection ({@code unwrap} returns it: work done through it is not watched).
 */
final class ManagedConnection implements InvocationHandler {
  private final Connection real;
  private final TransactionScope managed;

  private ManagedConnection(Connection real, TransactionScope managed) {
    this.real = real;
    this.managed = managed;
  }

  static Connection wrap(Connection real, TransactionScope managed) {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new ManagedConnection(real, managed));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    int arity = args == null ? 0 : args.length;
    switch (method.getName()) {
      case "equals":
        if (arity == 1) {
          return proxy == args[0];
        }
        break;
      case "hashCode":
        if (arity == 0) {
          return System.identityHashCode(proxy);
        }
        break;
      case "toString":
        if (arity == 0) {
          return "inTransaction(" + real + ")";
        }
        break;
      case "commit":
        throw new ConnectionStateException(
            "do not call commit() inside boxline.inTransaction(...): it commits when the work"
                + " returns (and writes the events it held back just before); return to commit,"
                + " throw to roll back, or use a connection of your own. inTransaction rolls the"
                + " transaction back when this exception leaves the work.");
      case "close":
        throw new ConnectionStateException(
            "do not close the connection inside boxline.inTransaction(...): it commits and closes"
                + " it when the work returns; inTransaction rolls the transaction back when this"
                + " exception leaves the work.");
      case "setAutoCommit":
        if (arity == 1 && Boolean.TRUE.equals(args[0])) {
          throw new ConnectionStateException(
              "do not switch auto-commit on inside boxline.inTransaction(...): that would commit"
                  + " the work so far apart from the rest; inTransaction rolls the transaction back when"
                  + " this exception leaves the work.");
        }
        break;
      case "rollback":
        if (arity == 0) {
          real.rollback();
          managed.rolledBack();
          return null;
        }
        real.rollback((Savepoint) args[0]);
        managed.rolledBackTo((Savepoint) args[0]);
        return null;
      case "setSavepoint":
        {
          Savepoint s = arity == 0 ? real.setSavepoint() : real.setSavepoint((String) args[0]);
          managed.savepoint(s);
          return s;
        }
      case "releaseSavepoint":
        real.releaseSavepoint((Savepoint) args[0]);
        managed.released((Savepoint) args[0]);
        return null;
      default:
        break;
    }
    try {
      return method.invoke(real, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
