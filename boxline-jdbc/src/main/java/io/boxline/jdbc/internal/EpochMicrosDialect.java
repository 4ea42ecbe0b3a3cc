package io.boxline.jdbc.internal;

import io.boxline.spi.Park;
import io.boxline.spi.PartitionKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * The dialects without a time zone-aware timestamp, a uuid type or NOTIFY (MariaDB / MySQL, H2):
 * times are epoch microseconds in {@code BIGINT} columns, event ids are text, and other processes
 * are woken through the {@code wake_all} row that their pollers watch.
 */
abstract class EpochMicrosDialect implements SqlDialect {
  @Override
  public Instant instant(ResultSet rs, int column) throws SQLException {
    return EpochMicros.instant(rs, column);
  }

  @Override
  public void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    ps.setObject(at, EpochMicros.microsOrNull(t), Types.BIGINT);
  }

  @Override
  public UUID uuid(ResultSet rs, int column) throws SQLException {
    return EpochMicros.uuid(rs.getString(column));
  }

  @Override
  public void bindUuid(PreparedStatement ps, int at, UUID id) throws SQLException {
    ps.setString(at, id == null ? null : id.toString());
  }

  @Override
  public void bindDuration(PreparedStatement ps, int at, Duration d) throws SQLException {
    ps.setLong(at, EpochMicros.micros(d));
  }

  /**
   * Binds one parked event's row of the row-wise {@code park} statement of these dialects from
   * parameter {@code i}; returns the next index. The state goes in four times: its column, and the
   * three time columns it decides.
   */
  static int bindParkRow(
      PreparedStatement ps, int i, long subscriptionId, PartitionKey partition, Park k)
      throws SQLException {
    String state = k.state().name();
    ps.setLong(i++, subscriptionId);
    ps.setLong(i++, partition.topicId());
    ps.setInt(i++, partition.partition());
    ps.setLong(i++, k.seq());
    ps.setString(i++, k.eventId().toString());
    ps.setString(i++, k.key());
    ps.setString(i++, k.type());
    ps.setString(i++, state);
    ps.setInt(i++, k.attempts());
    ps.setLong(i++, EpochMicros.micros(k.nextAttemptAt()));
    ps.setString(i++, k.lastError());
    ps.setString(i++, state);
    ps.setString(i++, state);
    ps.setString(i++, state);
    return i;
  }

  /** The new row's generated key, when the insert did not skip it as present. */
  @Override
  public Long insertReturningId(Connection c, String sql, JdbcSql.Binder binder)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql, java.sql.Statement.RETURN_GENERATED_KEYS)) {
      binder.bind(ps);
      if (insertUnlessPresent(ps) == 1) {
        try (ResultSet rs = ps.getGeneratedKeys()) {
          if (rs.next()) {
            return rs.getLong(1);
          }
        }
      }
    }
    return null;
  }

  /** Every consumer re-reads its backlog at its next poll (see {@link PollingWakeups}). */
  @Override
  public void wakeAll(Connection tx, JdbcSql db) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(db.sql("wake_all"))) {
      ps.executeUpdate();
    }
  }
}
