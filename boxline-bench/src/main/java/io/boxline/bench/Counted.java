package io.boxline.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * A lean JDBC counter over a pool (unlike {@link Probe}, nothing is timed): statements executed
 * (every {@code execute*} call, a batch counting once) and commits/rollbacks sent. The pool's own
 * validation pings happen under it and are not counted (the server's transaction count has them).
 */
final class Counted {
  private final LongAdder statements = new LongAdder();
  private final LongAdder commits = new LongAdder();

  long statements() {
    return statements.sum();
  }

  long commits() {
    return commits.sum();
  }

  DataSource wrap(DataSource pool) {
    return Probe.proxy(
        DataSource.class,
        (proxy, m, args) -> {
          Object r = call(pool, m, args);
          return r instanceof Connection c && m.getName().equals("getConnection")
              ? connection(c)
              : r;
        });
  }

  private Connection connection(Connection target) {
    InvocationHandler h =
        (proxy, m, args) -> {
          String name = m.getName();
          switch (name) {
            case "commit", "rollback" -> commits.increment();
            default -> {}
          }
          Object r = call(target, m, args);
          if (r instanceof CallableStatement cs) {
            return statement(CallableStatement.class, cs);
          }
          if (r instanceof PreparedStatement ps) {
            return statement(PreparedStatement.class, ps);
          }
          if (r instanceof Statement s && name.equals("createStatement")) {
            return statement(Statement.class, s);
          }
          return r;
        };
    return Probe.proxy(Connection.class, h);
  }

  private <S extends Statement> S statement(Class<S> type, S target) {
    return Probe.proxy(
        type,
        (proxy, m, args) -> {
          if (m.getName().startsWith("execute")) {
            statements.increment();
          }
          return call(target, m, args);
        });
  }

  private static Object call(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
