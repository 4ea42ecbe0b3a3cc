package io.boxline.jdbc.internal;

import io.boxline.spi.OutboxRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Events as one array per column, for PostgreSQL's {@code unnest(...)} statements (the outbox
 * insert of many events, the sequencer's log insert, {@code append_to_log}): one round trip
 * whatever the number of events.
 */
final class EventArrays {
  final Long[] topics;
  final Integer[] partitions;
  final UUID[] ids;
  final String[] keys;
  final String[] types;
  final String[] sources;
  final String[] contentTypes;
  final byte[][] payloads;
  final String[] headers;
  final Timestamp[] created;
  final Timestamp[] deliverAt;

  EventArrays(int n) {
    topics = new Long[n];
    partitions = new Integer[n];
    ids = new UUID[n];
    keys = new String[n];
    types = new String[n];
    sources = new String[n];
    contentTypes = new String[n];
    payloads = new byte[n][];
    headers = new String[n];
    created = new Timestamp[n];
    deliverAt = new Timestamp[n];
  }

  /** Records as the publisher made them; {@code createdAt} null leaves the column to the table. */
  static EventArrays of(List<OutboxRecord> records, Instant createdAt) {
    EventArrays a = new EventArrays(records.size());
    Timestamp created = createdAt == null ? null : Timestamp.from(createdAt);
    for (int i = 0; i < records.size(); i++) {
      OutboxRecord r = records.get(i);
      a.set(
          i,
          r.topicId(),
          r.partition(),
          r.eventId(),
          r.key(),
          r.type(),
          r.source(),
          r.contentType(),
          r.payload(),
          Headers.toJson(r.headers()),
          created,
          r.deliverAt() == null ? null : Timestamp.from(r.deliverAt()));
    }
    return a;
  }

  void set(
      int i,
      long topic,
      int partition,
      UUID id,
      String key,
      String type,
      String source,
      String contentType,
      byte[] payload,
      String headersJson,
      Timestamp createdAt,
      Timestamp deliver) {
    topics[i] = topic;
    partitions[i] = partition;
    ids[i] = id;
    keys[i] = key;
    types[i] = type;
    sources[i] = source;
    contentTypes[i] = contentType;
    payloads[i] = payload;
    headers[i] = headersJson;
    created[i] = createdAt;
    deliverAt[i] = deliver;
  }

  /**
   * Binds key, type, source, content type, payload and headers, the columns every event statement
   * has in this order, at parameters {@code from} … {@code from + 5}; returns the next parameter.
   */
  int bindBody(PreparedStatement ps, Connection c, int from) throws SQLException {
    ps.setArray(from, c.createArrayOf("text", keys));
    ps.setArray(from + 1, c.createArrayOf("text", types));
    ps.setArray(from + 2, c.createArrayOf("text", sources));
    ps.setArray(from + 3, c.createArrayOf("text", contentTypes));
    ps.setObject(from + 4, payloads);
    ps.setArray(from + 5, c.createArrayOf("text", headers));
    return from + 6;
  }
}
