package io.boxline.bench;

/**
 * A connection that counts commits and rollbacks and hands out counting statements, for {@link
 * Counted}; plain delegation (see {@link CountedStatement}).
 */
final class CountedConnection implements java.sql.Connection {
  private final java.sql.Connection d;
  private final Counted counter;

  CountedConnection(java.sql.Connection delegate, Counted counter) {
    this.d = delegate;
    this.counter = counter;
  }

  @Override
  public void abort(java.util.concurrent.Executor a0) throws java.sql.SQLException {
    d.abort(a0);
  }

  @Override
  public void clearWarnings() throws java.sql.SQLException {
    d.clearWarnings();
  }

  @Override
  public void close() throws java.sql.SQLException {
    d.close();
  }

  @Override
  public void commit() throws java.sql.SQLException {
    counter.commits.increment();
    d.commit();
  }

  @Override
  public java.sql.Array createArrayOf(java.lang.String a0, java.lang.Object[] a1)
      throws java.sql.SQLException {
    return d.createArrayOf(a0, a1);
  }

  @Override
  public java.sql.Blob createBlob() throws java.sql.SQLException {
    return d.createBlob();
  }

  @Override
  public java.sql.Clob createClob() throws java.sql.SQLException {
    return d.createClob();
  }

  @Override
  public java.sql.NClob createNClob() throws java.sql.SQLException {
    return d.createNClob();
  }

  @Override
  public java.sql.SQLXML createSQLXML() throws java.sql.SQLException {
    return d.createSQLXML();
  }

  @Override
  public java.sql.Statement createStatement() throws java.sql.SQLException {
    return new CountedStatement<>(d.createStatement(), counter);
  }

  @Override
  public java.sql.Statement createStatement(int a0, int a1, int a2) throws java.sql.SQLException {
    return new CountedStatement<>(d.createStatement(a0, a1, a2), counter);
  }

  @Override
  public java.sql.Statement createStatement(int a0, int a1) throws java.sql.SQLException {
    return new CountedStatement<>(d.createStatement(a0, a1), counter);
  }

  @Override
  public java.sql.Struct createStruct(java.lang.String a0, java.lang.Object[] a1)
      throws java.sql.SQLException {
    return d.createStruct(a0, a1);
  }

  @Override
  public boolean getAutoCommit() throws java.sql.SQLException {
    return d.getAutoCommit();
  }

  @Override
  public java.lang.String getCatalog() throws java.sql.SQLException {
    return d.getCatalog();
  }

  @Override
  public java.util.Properties getClientInfo() throws java.sql.SQLException {
    return d.getClientInfo();
  }

  @Override
  public java.lang.String getClientInfo(java.lang.String a0) throws java.sql.SQLException {
    return d.getClientInfo(a0);
  }

  @Override
  public int getHoldability() throws java.sql.SQLException {
    return d.getHoldability();
  }

  @Override
  public java.sql.DatabaseMetaData getMetaData() throws java.sql.SQLException {
    return d.getMetaData();
  }

  @Override
  public int getNetworkTimeout() throws java.sql.SQLException {
    return d.getNetworkTimeout();
  }

  @Override
  public java.lang.String getSchema() throws java.sql.SQLException {
    return d.getSchema();
  }

  @Override
  public int getTransactionIsolation() throws java.sql.SQLException {
    return d.getTransactionIsolation();
  }

  @Override
  public java.util.Map<java.lang.String, java.lang.Class<?>> getTypeMap()
      throws java.sql.SQLException {
    return d.getTypeMap();
  }

  @Override
  public java.sql.SQLWarning getWarnings() throws java.sql.SQLException {
    return d.getWarnings();
  }

  @Override
  public boolean isClosed() throws java.sql.SQLException {
    return d.isClosed();
  }

  @Override
  public boolean isReadOnly() throws java.sql.SQLException {
    return d.isReadOnly();
  }

  @Override
  public boolean isValid(int a0) throws java.sql.SQLException {
    return d.isValid(a0);
  }

  @Override
  public boolean isWrapperFor(java.lang.Class<?> a0) throws java.sql.SQLException {
    return d.isWrapperFor(a0);
  }

  @Override
  public java.lang.String nativeSQL(java.lang.String a0) throws java.sql.SQLException {
    return d.nativeSQL(a0);
  }

  @Override
  public java.sql.CallableStatement prepareCall(java.lang.String a0, int a1, int a2, int a3)
      throws java.sql.SQLException {
    return counter.callable(d.prepareCall(a0, a1, a2, a3));
  }

  @Override
  public java.sql.CallableStatement prepareCall(java.lang.String a0, int a1, int a2)
      throws java.sql.SQLException {
    return counter.callable(d.prepareCall(a0, a1, a2));
  }

  @Override
  public java.sql.CallableStatement prepareCall(java.lang.String a0) throws java.sql.SQLException {
    return counter.callable(d.prepareCall(a0));
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0, int[] a1)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0, a1), counter);
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0, java.lang.String[] a1)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0, a1), counter);
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0, int a1, int a2, int a3)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0, a1, a2, a3), counter);
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0, int a1, int a2)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0, a1, a2), counter);
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0, int a1)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0, a1), counter);
  }

  @Override
  public java.sql.PreparedStatement prepareStatement(java.lang.String a0)
      throws java.sql.SQLException {
    return new CountedPreparedStatement(d.prepareStatement(a0), counter);
  }

  @Override
  public void releaseSavepoint(java.sql.Savepoint a0) throws java.sql.SQLException {
    d.releaseSavepoint(a0);
  }

  @Override
  public void rollback() throws java.sql.SQLException {
    counter.commits.increment();
    d.rollback();
  }

  @Override
  public void rollback(java.sql.Savepoint a0) throws java.sql.SQLException {
    counter.commits.increment();
    d.rollback(a0);
  }

  @Override
  public void setAutoCommit(boolean a0) throws java.sql.SQLException {
    d.setAutoCommit(a0);
  }

  @Override
  public void setCatalog(java.lang.String a0) throws java.sql.SQLException {
    d.setCatalog(a0);
  }

  @Override
  public void setClientInfo(java.lang.String a0, java.lang.String a1)
      throws java.sql.SQLClientInfoException {
    d.setClientInfo(a0, a1);
  }

  @Override
  public void setClientInfo(java.util.Properties a0) throws java.sql.SQLClientInfoException {
    d.setClientInfo(a0);
  }

  @Override
  public void setHoldability(int a0) throws java.sql.SQLException {
    d.setHoldability(a0);
  }

  @Override
  public void setNetworkTimeout(java.util.concurrent.Executor a0, int a1)
      throws java.sql.SQLException {
    d.setNetworkTimeout(a0, a1);
  }

  @Override
  public void setReadOnly(boolean a0) throws java.sql.SQLException {
    d.setReadOnly(a0);
  }

  @Override
  public java.sql.Savepoint setSavepoint() throws java.sql.SQLException {
    return d.setSavepoint();
  }

  @Override
  public java.sql.Savepoint setSavepoint(java.lang.String a0) throws java.sql.SQLException {
    return d.setSavepoint(a0);
  }

  @Override
  public void setSchema(java.lang.String a0) throws java.sql.SQLException {
    d.setSchema(a0);
  }

  @Override
  public void setTransactionIsolation(int a0) throws java.sql.SQLException {
    d.setTransactionIsolation(a0);
  }

  @Override
  public void setTypeMap(java.util.Map<java.lang.String, java.lang.Class<?>> a0)
      throws java.sql.SQLException {
    d.setTypeMap(a0);
  }

  @Override
  public <T> T unwrap(java.lang.Class<T> a0) throws java.sql.SQLException {
    return d.unwrap(a0);
  }
}
