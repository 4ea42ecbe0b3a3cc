package io.boxline.internal;

import io.boxline.ConnectionStateException;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;

/**
 * The connection {@code inTransaction} hands its work. The publisher holds some events back to the
 * commit (in-transaction topics), so what the work rolls back — to a savepoint, or all of it — must
 * be forgotten by the publisher too, not only by the database; and only {@code inTransaction} may
 * commit, because it writes those events just before. Everything else goes straight to the pooled
 * connection ({@code unwrap} returns it: work done through it is not watched).
 *
 * <p>A plain class rather than a dynamic proxy: one is made per transaction and every JDBC call of
 * the work passes through it, and a proxy's reflective creation and calls showed in the cost per
 * event (docs/benchmarks.md, "Cost per event").
 */
final class ManagedConnection implements Connection {
  private final Connection real;
  private final TransactionScope managed;

  private ManagedConnection(Connection real, TransactionScope managed) {
    this.real = real;
    this.managed = managed;
  }

  static Connection wrap(Connection real, TransactionScope managed) {
    return new ManagedConnection(real, managed);
  }

  @Override
  public String toString() {
    return "inTransaction(" + real + ")";
  }

  @Override
  public void commit() {
    throw new ConnectionStateException(
        "do not call commit() inside boxline.inTransaction(...): it commits when the work"
            + " returns (and writes the events it held back just before); return to commit,"
            + " throw to roll back, or use a connection of your own. inTransaction rolls the"
            + " transaction back when this exception leaves the work.");
  }

  @Override
  public void close() {
    throw new ConnectionStateException(
        "do not close the connection inside boxline.inTransaction(...): it commits and closes"
            + " it when the work returns; inTransaction rolls the transaction back when this"
            + " exception leaves the work.");
  }

  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    if (autoCommit) {
      throw new ConnectionStateException(
          "do not switch auto-commit on inside boxline.inTransaction(...): that would commit"
              + " the work so far apart from the rest; inTransaction rolls the transaction back when"
              + " this exception leaves the work.");
    }
    real.setAutoCommit(false);
  }

  @Override
  public void rollback() throws SQLException {
    real.rollback();
    managed.rolledBack();
  }

  @Override
  public void rollback(Savepoint savepoint) throws SQLException {
    real.rollback(savepoint);
    managed.rolledBackTo(savepoint);
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    Savepoint s = real.setSavepoint();
    managed.savepoint(s);
    return s;
  }

  @Override
  public Savepoint setSavepoint(String name) throws SQLException {
    Savepoint s = real.setSavepoint(name);
    managed.savepoint(s);
    return s;
  }

  @Override
  public void releaseSavepoint(Savepoint savepoint) throws SQLException {
    real.releaseSavepoint(savepoint);
    managed.released(savepoint);
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return real.unwrap(type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) throws SQLException {
    return real.isWrapperFor(type);
  }

  // Everything else: straight to the pooled connection.

  @Override
  public Statement createStatement() throws SQLException {
    return real.createStatement();
  }

  @Override
  public PreparedStatement prepareStatement(String sql) throws SQLException {
    return real.prepareStatement(sql);
  }

  @Override
  public CallableStatement prepareCall(String sql) throws SQLException {
    return real.prepareCall(sql);
  }

  @Override
  public String nativeSQL(String sql) throws SQLException {
    return real.nativeSQL(sql);
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    return real.getAutoCommit();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return real.isClosed();
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    return real.getMetaData();
  }

  @Override
  public void setReadOnly(boolean readOnly) throws SQLException {
    real.setReadOnly(readOnly);
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    return real.isReadOnly();
  }

  @Override
  public void setCatalog(String catalog) throws SQLException {
    real.setCatalog(catalog);
  }

  @Override
  public String getCatalog() throws SQLException {
    return real.getCatalog();
  }

  @Override
  public void setTransactionIsolation(int level) throws SQLException {
    real.setTransactionIsolation(level);
  }

  @Override
  public int getTransactionIsolation() throws SQLException {
    return real.getTransactionIsolation();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return real.getWarnings();
  }

  @Override
  public void clearWarnings() throws SQLException {
    real.clearWarnings();
  }

  @Override
  public Statement createStatement(int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return real.createStatement(resultSetType, resultSetConcurrency);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return real.prepareStatement(sql, resultSetType, resultSetConcurrency);
  }

  @Override
  public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency)
      throws SQLException {
    return real.prepareCall(sql, resultSetType, resultSetConcurrency);
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    return real.getTypeMap();
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
    real.setTypeMap(map);
  }

  @Override
  public void setHoldability(int holdability) throws SQLException {
    real.setHoldability(holdability);
  }

  @Override
  public int getHoldability() throws SQLException {
    return real.getHoldability();
  }

  @Override
  public Statement createStatement(
      int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
    return real.createStatement(resultSetType, resultSetConcurrency, resultSetHoldability);
  }

  @Override
  public PreparedStatement prepareStatement(
      String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability)
      throws SQLException {
    return real.prepareStatement(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
  }

  @Override
  public CallableStatement prepareCall(
      String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability)
      throws SQLException {
    return real.prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
    return real.prepareStatement(sql, autoGeneratedKeys);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
    return real.prepareStatement(sql, columnIndexes);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
    return real.prepareStatement(sql, columnNames);
  }

  @Override
  public Clob createClob() throws SQLException {
    return real.createClob();
  }

  @Override
  public Blob createBlob() throws SQLException {
    return real.createBlob();
  }

  @Override
  public NClob createNClob() throws SQLException {
    return real.createNClob();
  }

  @Override
  public SQLXML createSQLXML() throws SQLException {
    return real.createSQLXML();
  }

  @Override
  public boolean isValid(int timeoutSeconds) throws SQLException {
    return real.isValid(timeoutSeconds);
  }

  @Override
  public void setClientInfo(String name, String value) throws SQLClientInfoException {
    real.setClientInfo(name, value);
  }

  @Override
  public void setClientInfo(Properties properties) throws SQLClientInfoException {
    real.setClientInfo(properties);
  }

  @Override
  public String getClientInfo(String name) throws SQLException {
    return real.getClientInfo(name);
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    return real.getClientInfo();
  }

  @Override
  public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
    return real.createArrayOf(typeName, elements);
  }

  @Override
  public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
    return real.createStruct(typeName, attributes);
  }

  @Override
  public void setSchema(String schema) throws SQLException {
    real.setSchema(schema);
  }

  @Override
  public String getSchema() throws SQLException {
    return real.getSchema();
  }

  @Override
  public void abort(Executor executor) throws SQLException {
    real.abort(executor);
  }

  @Override
  public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
    real.setNetworkTimeout(executor, milliseconds);
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    return real.getNetworkTimeout();
  }

  @Override
  public void beginRequest() throws SQLException {
    real.beginRequest();
  }

  @Override
  public void endRequest() throws SQLException {
    real.endRequest();
  }

  @Override
  public boolean setShardingKeyIfValid(
      ShardingKey shardingKey, ShardingKey superShardingKey, int timeout) throws SQLException {
    return real.setShardingKeyIfValid(shardingKey, superShardingKey, timeout);
  }

  @Override
  public boolean setShardingKeyIfValid(ShardingKey shardingKey, int timeout) throws SQLException {
    return real.setShardingKeyIfValid(shardingKey, timeout);
  }

  @Override
  public void setShardingKey(ShardingKey shardingKey, ShardingKey superShardingKey)
      throws SQLException {
    real.setShardingKey(shardingKey, superShardingKey);
  }

  @Override
  public void setShardingKey(ShardingKey shardingKey) throws SQLException {
    real.setShardingKey(shardingKey);
  }
}
