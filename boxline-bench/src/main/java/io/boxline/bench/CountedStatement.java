package io.boxline.bench;

/**
 * A statement that counts its {@code execute*} calls for {@link Counted}: plain delegation, no
 * reflection, so that counting costs the benchmark's JVM next to nothing (a {@code
 * java.lang.reflect.Proxy} put a {@code Method.invoke} on every parameter a statement binds, and
 * Boxline's statements bind more parameters than raw inserts').
 */
class CountedStatement<S extends java.sql.Statement> implements java.sql.Statement {
  final S d;
  final Counted counter;

  CountedStatement(S delegate, Counted counter) {
    this.d = delegate;
    this.counter = counter;
  }

  @Override
  public void addBatch(java.lang.String a0) throws java.sql.SQLException {
    d.addBatch(a0);
  }

  @Override
  public void cancel() throws java.sql.SQLException {
    d.cancel();
  }

  @Override
  public void clearBatch() throws java.sql.SQLException {
    d.clearBatch();
  }

  @Override
  public void clearWarnings() throws java.sql.SQLException {
    d.clearWarnings();
  }

  @Override
  public void closeOnCompletion() throws java.sql.SQLException {
    d.closeOnCompletion();
  }

  @Override
  public void close() throws java.sql.SQLException {
    d.close();
  }

  @Override
  public int[] executeBatch() throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeBatch();
  }

  @Override
  public java.sql.ResultSet executeQuery(java.lang.String a0) throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeQuery(a0);
  }

  @Override
  public int executeUpdate(java.lang.String a0, int[] a1) throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeUpdate(a0, a1);
  }

  @Override
  public int executeUpdate(java.lang.String a0, java.lang.String[] a1)
      throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeUpdate(a0, a1);
  }

  @Override
  public int executeUpdate(java.lang.String a0, int a1) throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeUpdate(a0, a1);
  }

  @Override
  public int executeUpdate(java.lang.String a0) throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeUpdate(a0);
  }

  @Override
  public boolean execute(java.lang.String a0, int[] a1) throws java.sql.SQLException {
    counter.statements.increment();
    return d.execute(a0, a1);
  }

  @Override
  public boolean execute(java.lang.String a0, java.lang.String[] a1) throws java.sql.SQLException {
    counter.statements.increment();
    return d.execute(a0, a1);
  }

  @Override
  public boolean execute(java.lang.String a0, int a1) throws java.sql.SQLException {
    counter.statements.increment();
    return d.execute(a0, a1);
  }

  @Override
  public boolean execute(java.lang.String a0) throws java.sql.SQLException {
    counter.statements.increment();
    return d.execute(a0);
  }

  @Override
  public java.sql.Connection getConnection() throws java.sql.SQLException {
    return d.getConnection();
  }

  @Override
  public int getFetchDirection() throws java.sql.SQLException {
    return d.getFetchDirection();
  }

  @Override
  public int getFetchSize() throws java.sql.SQLException {
    return d.getFetchSize();
  }

  @Override
  public java.sql.ResultSet getGeneratedKeys() throws java.sql.SQLException {
    return d.getGeneratedKeys();
  }

  @Override
  public int getMaxFieldSize() throws java.sql.SQLException {
    return d.getMaxFieldSize();
  }

  @Override
  public int getMaxRows() throws java.sql.SQLException {
    return d.getMaxRows();
  }

  @Override
  public boolean getMoreResults() throws java.sql.SQLException {
    return d.getMoreResults();
  }

  @Override
  public boolean getMoreResults(int a0) throws java.sql.SQLException {
    return d.getMoreResults(a0);
  }

  @Override
  public int getQueryTimeout() throws java.sql.SQLException {
    return d.getQueryTimeout();
  }

  @Override
  public int getResultSetConcurrency() throws java.sql.SQLException {
    return d.getResultSetConcurrency();
  }

  @Override
  public int getResultSetHoldability() throws java.sql.SQLException {
    return d.getResultSetHoldability();
  }

  @Override
  public int getResultSetType() throws java.sql.SQLException {
    return d.getResultSetType();
  }

  @Override
  public java.sql.ResultSet getResultSet() throws java.sql.SQLException {
    return d.getResultSet();
  }

  @Override
  public int getUpdateCount() throws java.sql.SQLException {
    return d.getUpdateCount();
  }

  @Override
  public java.sql.SQLWarning getWarnings() throws java.sql.SQLException {
    return d.getWarnings();
  }

  @Override
  public boolean isCloseOnCompletion() throws java.sql.SQLException {
    return d.isCloseOnCompletion();
  }

  @Override
  public boolean isClosed() throws java.sql.SQLException {
    return d.isClosed();
  }

  @Override
  public boolean isPoolable() throws java.sql.SQLException {
    return d.isPoolable();
  }

  @Override
  public boolean isWrapperFor(java.lang.Class<?> a0) throws java.sql.SQLException {
    return d.isWrapperFor(a0);
  }

  @Override
  public void setCursorName(java.lang.String a0) throws java.sql.SQLException {
    d.setCursorName(a0);
  }

  @Override
  public void setEscapeProcessing(boolean a0) throws java.sql.SQLException {
    d.setEscapeProcessing(a0);
  }

  @Override
  public void setFetchDirection(int a0) throws java.sql.SQLException {
    d.setFetchDirection(a0);
  }

  @Override
  public void setFetchSize(int a0) throws java.sql.SQLException {
    d.setFetchSize(a0);
  }

  @Override
  public void setMaxFieldSize(int a0) throws java.sql.SQLException {
    d.setMaxFieldSize(a0);
  }

  @Override
  public void setMaxRows(int a0) throws java.sql.SQLException {
    d.setMaxRows(a0);
  }

  @Override
  public void setPoolable(boolean a0) throws java.sql.SQLException {
    d.setPoolable(a0);
  }

  @Override
  public void setQueryTimeout(int a0) throws java.sql.SQLException {
    d.setQueryTimeout(a0);
  }

  @Override
  public <T> T unwrap(java.lang.Class<T> a0) throws java.sql.SQLException {
    return d.unwrap(a0);
  }
}
