package io.boxline.jdbc.internal;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

/**
 * Times as epoch microseconds, and event ids as text: how MariaDB / MySQL and H2 store them (see
 * {@link PollingDialect}).
 */
final class EpochMicros {
  private EpochMicros() {}

  static long micros(Instant t) {
    // Not ChronoUnit.MICROS.between: it counts in nanoseconds first, which overflow a long outside
    // 1677 to 2262 (a delivery time in 2300 failed with an ArithmeticException).
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
  }

  static Long microsOrNull(Instant t) {
    return t == null ? null : micros(t);
  }

  static long micros(Duration d) {
    return d.toNanos() / 1000;
  }

  static Instant instant(long micros) {
    return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
  }

  /** Reads a nullable microsecond column. */
  static Instant instant(java.sql.ResultSet rs, int column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : instant(v);
  }

  static UUID uuid(String s) {
    return s == null ? null : UUID.fromString(s);
  }
}
