package io.boxline.internal;

import io.boxline.ConnectionStateException;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A transaction {@code inTransaction} runs: the events of IN_TRANSACTION topics it holds back until
 * just before its commit, and those it appended to the log, handed to consumers once it has
 * committed.
 */
final class ManagedTransaction {
  /** The connection the work gets: the pooled one, watched (see ManagedConnection). */
  final Connection tx;

  final List<OutboxRecord> heldBack = new ArrayList<>();

  /** Events published per topic (not counting duplicates), for the observers after the commit. */
  final Map<TopicName, Integer> published = new LinkedHashMap<>();

  final Map<PartitionKey, List<StoredEvent>> appended = new HashMap<>();
  boolean outbox;
  boolean announcedInTransaction = true;

  /** The work's savepoints, oldest first, with what was held back and counted at each. */
  private final List<Mark> marks = new ArrayList<>();

  /** Idempotency keys this transaction claimed ("topic id/key"), in publish order. */
  private final List<String> claimed = new ArrayList<>();

  private record Mark(
      java.sql.Savepoint savepoint, int heldBack, int claimed, Map<TopicName, Integer> published) {}

  /** The {@code inTransaction} whose work started this one, if any. */
  final ManagedTransaction outer;

  ManagedTransaction(Connection pooled, ManagedTransaction outer) {
    this.tx = ManagedConnection.wrap(pooled, this);
    this.outer = outer;
  }

  void savepoint(java.sql.Savepoint s) {
    marks.add(new Mark(s, heldBack.size(), claimed.size(), new LinkedHashMap<>(published)));
  }

  /** Releasing a savepoint releases those set after it too. */
  void released(java.sql.Savepoint s) {
    int i = indexOf(s);
    if (i >= 0) {
      marks.subList(i, marks.size()).clear();
    }
  }

  /** The database undid everything since {@code s}; so does the publisher (s stays valid). */
  void rolledBackTo(java.sql.Savepoint s) {
    int i = indexOf(s);
    if (i < 0) {
      throw new ConnectionStateException(
          "the work rolled back to a savepoint it did not set on inTransaction's connection"
              + " (an unwrapped one?), so Boxline cannot tell which of the events it holds back"
              + " were undone; set savepoints on the connection inTransaction handed over. The"
              + " transaction is rolled back when this exception leaves the work.");
    }
    Mark m = marks.get(i);
    heldBack.subList(m.heldBack, heldBack.size()).clear();
    claimed.subList(m.claimed, claimed.size()).clear();
    published.clear();
    published.putAll(m.published);
    marks.subList(i + 1, marks.size()).clear();
  }

  /** The database undid the whole transaction so far; the work goes on in a new one. */
  void rolledBack() {
    heldBack.clear();
    claimed.clear();
    published.clear();
    appended.clear();
    marks.clear();
  }

  /**
   * Refuses an idempotency key that a transaction this one is nested in (same thread, another
   * connection) claimed: the database would make this one wait for that one, which waits for this
   * one to return, for good.
   */
  void checkKeys(List<OutboxRecord> records, List<TopicInfo> infos) {
    for (int i = 0; i < records.size(); i++) {
      OutboxRecord r = records.get(i);
      if (r.idempotencyKey() == null) {
        continue;
      }
      String k = r.topicId() + "/" + r.idempotencyKey();
      for (ManagedTransaction o = outer; o != null; o = o.outer) {
        if (o.claimed.contains(k)) {
          throw new ValidationException(
              "idempotency key '"
                  + r.idempotencyKey()
                  + "' on topic '"
                  + infos.get(i).name()
                  + "' was claimed by the inTransaction this one is nested in, which has not"
                  + " committed: this transaction would wait for it forever. Publish it in the"
                  + " outer transaction, or after it commits.");
        }
      }
    }
  }

  /** Notes the keys this transaction now holds (not those an earlier event owned already). */
  void claimed(List<OutboxRecord> records, List<UUID> existing) {
    for (int i = 0; i < records.size(); i++) {
      OutboxRecord r = records.get(i);
      if (r.idempotencyKey() != null && existing.get(i) == null) {
        claimed.add(r.topicId() + "/" + r.idempotencyKey());
      }
    }
  }

  private int indexOf(java.sql.Savepoint s) {
    for (int i = 0; i < marks.size(); i++) {
      if (marks.get(i).savepoint == s) {
        return i;
      }
    }
    return -1;
  }
}
