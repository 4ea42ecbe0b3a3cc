package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;

/**
 * Small helpers of the MariaDB / MySQL dialect: lists as JSON arrays (read server-side with {@code
 * JSON_TABLE}), multi-row {@code VALUES}, key hashes and retryable failures. Times are {@link
 * EpochMicros}.
 */
final class MariaDbSql {
  /** MariaDB reports deadlocks as 1213 and lock wait timeouts as 1205. */
  private static final int DEADLOCK = 1213;

  private static final int LOCK_WAIT_TIMEOUT = 1205;

  /** Rows per multi-row INSERT: far below the 65,535 placeholders a statement may carry. */
  static final int MAX_ROWS = 500;

  /** Bytes of payload per multi-row INSERT, well under the default max_allowed_packet (16 MiB). */
  static final long MAX_BYTES = 4L << 20;

  private MariaDbSql() {}

  /** Lower-case hex SHA-256 of the UTF-8 bytes: equal to {@code LOWER(SHA2(key, 256))} in SQL. */
  static String sha256(String key) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(md.digest(key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /**
   * A statement that ends in {@code VALUES (...)} with its row group repeated {@code rows} times.
   */
  static String repeatRows(String sql, int rows) {
    int at = sql.lastIndexOf("VALUES");
    String head = sql.substring(0, at + "VALUES".length());
    String row = sql.substring(at + "VALUES".length()).strip();
    StringBuilder out = new StringBuilder(head.length() + rows * (row.length() + 2));
    out.append(head).append(' ');
    for (int i = 0; i < rows; i++) {
      if (i > 0) {
        out.append(", ");
      }
      out.append(row);
    }
    return out.toString();
  }

  /** {@code [[topic, partition], ...]} */
  static String json(List<PartitionKey> partitions) {
    StringBuilder b = new StringBuilder(partitions.size() * 12 + 2).append('[');
    for (int i = 0; i < partitions.size(); i++) {
      PartitionKey k = partitions.get(i);
      if (i > 0) {
        b.append(',');
      }
      b.append('[').append(k.topicId()).append(',').append(k.partition()).append(']');
    }
    return b.append(']').toString();
  }

  /** {@code [[a0, b0, ...], ...]}: the numbers {@code columns} take from each row, in order. */
  @SafeVarargs
  static <T> String jsonRows(List<T> rows, java.util.function.ToLongFunction<T>... columns) {
    StringBuilder b = new StringBuilder(rows.size() * 24 + 2).append('[');
    for (int i = 0; i < rows.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append('[');
      for (int j = 0; j < columns.length; j++) {
        if (j > 0) {
          b.append(',');
        }
        b.append(columns[j].applyAsLong(rows.get(i)));
      }
      b.append(']');
    }
    return b.append(']').toString();
  }

  /** A JSON array of strings, escaped with Jackson. */
  static String jsonStrings(Collection<String> values) {
    try {
      return JSON.writeValueAsString(values);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /** Whether the failure is a deadlock or lock wait timeout, after which a retry may succeed. */
  static boolean retryable(SQLException e) {
    return JdbcSql.anyCause(
        e,
        s ->
            s.getErrorCode() == DEADLOCK
                || s.getErrorCode() == LOCK_WAIT_TIMEOUT
                || "40001".equals(s.getSQLState()));
  }
}
