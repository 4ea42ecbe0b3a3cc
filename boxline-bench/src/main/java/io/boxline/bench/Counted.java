package io.boxline.bench;

import java.sql.Connection;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;

/**
 * A lean JDBC counter over a pool (unlike {@link Probe}, nothing is timed), through
 * datasource-proxy: statements executed (every {@code execute*} call, a batch counting once: the
 * proxy reports a batch as one execution) and commits/rollbacks sent. The pool's own validation
 * pings happen under it and are not counted (the server's transaction count has them).
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
    return ProxyDataSourceBuilder.create("counted", pool)
        .afterQuery((execution, queries) -> statements.increment())
        .afterMethod(
            call -> {
              String name = call.getMethod().getName();
              if (call.getTarget() instanceof Connection
                  && (name.equals("commit") || name.equals("rollback"))) {
                commits.increment();
              }
            })
        .build();
  }
}
