package io.boxline.bench;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * A lean JDBC counter over a pool (unlike {@link Probe}, nothing is timed): statements executed
 * (every {@code execute*} call, a batch counting once) and commits/rollbacks sent. Connections and
 * statements are wrapped by plain delegating classes ({@link CountedConnection}), not by reflective
 * proxies, so that the counting costs the measured JVM next to nothing. The pool's own validation
 * pings happen under it and are not counted (the server's transaction count has them).
 */
final class Counted {
  final LongAdder statements = new LongAdder();
  final LongAdder commits = new LongAdder();

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
              ? new CountedConnection(c, this)
              : r;
        });
  }

  /** A prepared call through a proxy: rare (nothing on the measured paths makes one). */
  CallableStatement callable(CallableStatement target) {
    return Probe.proxy(
        CallableStatement.class,
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
