package io.boxline;

import java.sql.Connection;
import java.sql.SQLException;

/** Work done in a transaction opened by {@link Boxline#inTransaction}. */
@FunctionalInterface
public interface TransactionWork<T> {
  T run(Connection tx) throws SQLException;
}
