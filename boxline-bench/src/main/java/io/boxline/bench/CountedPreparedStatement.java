package io.boxline.bench;

/** A prepared statement that counts its {@code execute*} calls (see {@link CountedStatement}). */
final class CountedPreparedStatement extends CountedStatement<java.sql.PreparedStatement>
    implements java.sql.PreparedStatement {

  CountedPreparedStatement(java.sql.PreparedStatement delegate, Counted counter) {
    super(delegate, counter);
  }

  @Override
  public void addBatch() throws java.sql.SQLException {
    d.addBatch();
  }

  @Override
  public void clearParameters() throws java.sql.SQLException {
    d.clearParameters();
  }

  @Override
  public java.sql.ResultSet executeQuery() throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeQuery();
  }

  @Override
  public int executeUpdate() throws java.sql.SQLException {
    counter.statements.increment();
    return d.executeUpdate();
  }

  @Override
  public boolean execute() throws java.sql.SQLException {
    counter.statements.increment();
    return d.execute();
  }

  @Override
  public java.sql.ResultSetMetaData getMetaData() throws java.sql.SQLException {
    return d.getMetaData();
  }

  @Override
  public java.sql.ParameterMetaData getParameterMetaData() throws java.sql.SQLException {
    return d.getParameterMetaData();
  }

  @Override
  public void setArray(int a0, java.sql.Array a1) throws java.sql.SQLException {
    d.setArray(a0, a1);
  }

  @Override
  public void setAsciiStream(int a0, java.io.InputStream a1, int a2) throws java.sql.SQLException {
    d.setAsciiStream(a0, a1, a2);
  }

  @Override
  public void setAsciiStream(int a0, java.io.InputStream a1, long a2) throws java.sql.SQLException {
    d.setAsciiStream(a0, a1, a2);
  }

  @Override
  public void setAsciiStream(int a0, java.io.InputStream a1) throws java.sql.SQLException {
    d.setAsciiStream(a0, a1);
  }

  @Override
  public void setBigDecimal(int a0, java.math.BigDecimal a1) throws java.sql.SQLException {
    d.setBigDecimal(a0, a1);
  }

  @Override
  public void setBinaryStream(int a0, java.io.InputStream a1, int a2) throws java.sql.SQLException {
    d.setBinaryStream(a0, a1, a2);
  }

  @Override
  public void setBinaryStream(int a0, java.io.InputStream a1, long a2)
      throws java.sql.SQLException {
    d.setBinaryStream(a0, a1, a2);
  }

  @Override
  public void setBinaryStream(int a0, java.io.InputStream a1) throws java.sql.SQLException {
    d.setBinaryStream(a0, a1);
  }

  @Override
  public void setBlob(int a0, java.io.InputStream a1, long a2) throws java.sql.SQLException {
    d.setBlob(a0, a1, a2);
  }

  @Override
  public void setBlob(int a0, java.io.InputStream a1) throws java.sql.SQLException {
    d.setBlob(a0, a1);
  }

  @Override
  public void setBlob(int a0, java.sql.Blob a1) throws java.sql.SQLException {
    d.setBlob(a0, a1);
  }

  @Override
  public void setBoolean(int a0, boolean a1) throws java.sql.SQLException {
    d.setBoolean(a0, a1);
  }

  @Override
  public void setByte(int a0, byte a1) throws java.sql.SQLException {
    d.setByte(a0, a1);
  }

  @Override
  public void setBytes(int a0, byte[] a1) throws java.sql.SQLException {
    d.setBytes(a0, a1);
  }

  @Override
  public void setCharacterStream(int a0, java.io.Reader a1, int a2) throws java.sql.SQLException {
    d.setCharacterStream(a0, a1, a2);
  }

  @Override
  public void setCharacterStream(int a0, java.io.Reader a1, long a2) throws java.sql.SQLException {
    d.setCharacterStream(a0, a1, a2);
  }

  @Override
  public void setCharacterStream(int a0, java.io.Reader a1) throws java.sql.SQLException {
    d.setCharacterStream(a0, a1);
  }

  @Override
  public void setClob(int a0, java.io.Reader a1, long a2) throws java.sql.SQLException {
    d.setClob(a0, a1, a2);
  }

  @Override
  public void setClob(int a0, java.io.Reader a1) throws java.sql.SQLException {
    d.setClob(a0, a1);
  }

  @Override
  public void setClob(int a0, java.sql.Clob a1) throws java.sql.SQLException {
    d.setClob(a0, a1);
  }

  @Override
  public void setDate(int a0, java.sql.Date a1, java.util.Calendar a2)
      throws java.sql.SQLException {
    d.setDate(a0, a1, a2);
  }

  @Override
  public void setDate(int a0, java.sql.Date a1) throws java.sql.SQLException {
    d.setDate(a0, a1);
  }

  @Override
  public void setDouble(int a0, double a1) throws java.sql.SQLException {
    d.setDouble(a0, a1);
  }

  @Override
  public void setFloat(int a0, float a1) throws java.sql.SQLException {
    d.setFloat(a0, a1);
  }

  @Override
  public void setInt(int a0, int a1) throws java.sql.SQLException {
    d.setInt(a0, a1);
  }

  @Override
  public void setLong(int a0, long a1) throws java.sql.SQLException {
    d.setLong(a0, a1);
  }

  @Override
  public void setNCharacterStream(int a0, java.io.Reader a1, long a2) throws java.sql.SQLException {
    d.setNCharacterStream(a0, a1, a2);
  }

  @Override
  public void setNCharacterStream(int a0, java.io.Reader a1) throws java.sql.SQLException {
    d.setNCharacterStream(a0, a1);
  }

  @Override
  public void setNClob(int a0, java.io.Reader a1, long a2) throws java.sql.SQLException {
    d.setNClob(a0, a1, a2);
  }

  @Override
  public void setNClob(int a0, java.io.Reader a1) throws java.sql.SQLException {
    d.setNClob(a0, a1);
  }

  @Override
  public void setNClob(int a0, java.sql.NClob a1) throws java.sql.SQLException {
    d.setNClob(a0, a1);
  }

  @Override
  public void setNString(int a0, java.lang.String a1) throws java.sql.SQLException {
    d.setNString(a0, a1);
  }

  @Override
  public void setNull(int a0, int a1, java.lang.String a2) throws java.sql.SQLException {
    d.setNull(a0, a1, a2);
  }

  @Override
  public void setNull(int a0, int a1) throws java.sql.SQLException {
    d.setNull(a0, a1);
  }

  @Override
  public void setObject(int a0, java.lang.Object a1, int a2, int a3) throws java.sql.SQLException {
    d.setObject(a0, a1, a2, a3);
  }

  @Override
  public void setObject(int a0, java.lang.Object a1, int a2) throws java.sql.SQLException {
    d.setObject(a0, a1, a2);
  }

  @Override
  public void setObject(int a0, java.lang.Object a1) throws java.sql.SQLException {
    d.setObject(a0, a1);
  }

  @Override
  public void setRef(int a0, java.sql.Ref a1) throws java.sql.SQLException {
    d.setRef(a0, a1);
  }

  @Override
  public void setRowId(int a0, java.sql.RowId a1) throws java.sql.SQLException {
    d.setRowId(a0, a1);
  }

  @Override
  public void setSQLXML(int a0, java.sql.SQLXML a1) throws java.sql.SQLException {
    d.setSQLXML(a0, a1);
  }

  @Override
  public void setShort(int a0, short a1) throws java.sql.SQLException {
    d.setShort(a0, a1);
  }

  @Override
  public void setString(int a0, java.lang.String a1) throws java.sql.SQLException {
    d.setString(a0, a1);
  }

  @Override
  public void setTime(int a0, java.sql.Time a1, java.util.Calendar a2)
      throws java.sql.SQLException {
    d.setTime(a0, a1, a2);
  }

  @Override
  public void setTime(int a0, java.sql.Time a1) throws java.sql.SQLException {
    d.setTime(a0, a1);
  }

  @Override
  public void setTimestamp(int a0, java.sql.Timestamp a1, java.util.Calendar a2)
      throws java.sql.SQLException {
    d.setTimestamp(a0, a1, a2);
  }

  @Override
  public void setTimestamp(int a0, java.sql.Timestamp a1) throws java.sql.SQLException {
    d.setTimestamp(a0, a1);
  }

  @Override
  public void setURL(int a0, java.net.URL a1) throws java.sql.SQLException {
    d.setURL(a0, a1);
  }

  @SuppressWarnings("deprecation")
  @Override
  public void setUnicodeStream(int a0, java.io.InputStream a1, int a2)
      throws java.sql.SQLException {
    d.setUnicodeStream(a0, a1, a2);
  }
}
