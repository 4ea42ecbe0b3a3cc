package io.boxline.internal;

import io.boxline.ConnectionStateException;
import io.boxline.StoreException;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TransactionWork;
import io.boxline.ValidationException;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A transaction {@code inTransaction} runs, and the one owner of its protocol (as a Jdbi {@code
 * Handle} owns its transaction callbacks):
 *
 * <ul>
 *   <li>{@link #run} opens the connection, hands the work a watched one ({@link ManagedConnection}:
 *       savepoints and rollbacks are recorded, a commit inside the work is refused), commits or
 *       rolls back, and after the commit lets the {@link Participant} hand the committed events
 *       over, running the deliveries consumers left to this thread ({@link CommittingThread}) once
 *       the connection is back in the pool;
 *   <li>the scopes a thread runs form a stack (nested {@code inTransaction}), and {@link #of} finds
 *       the scope of a connection a publisher is handed: only the innermost scope's own connection
 *       belongs to it;
 *   <li>it holds the work's state: events of IN_TRANSACTION topics held back until just before the
 *       commit, the idempotency keys it claimed, the events it appended to the log and what it
 *       published, each undone with the savepoint or rollback that undid it in the database.
 * </ul>
 */
final class TransactionScope {
  /** What takes part in a scope's commit: the publisher. */
  interface Participant {
    /** The work is done and the transaction about to commit: write what was held back. */
    void beforeCommit(TransactionScope scope);

    /** The transaction committed: hand its events over (deliveries may be left to this thread). */
    void afterCommit(TransactionScope scope);
  }

  /** The innermost scope this thread runs; outer ones through {@link #outer}. */
  private static final ThreadLocal<TransactionScope> CURRENT = new ThreadLocal<>();

  /**
   * Transactions a framework runs on this thread and Boxline joined ({@link #join}); a framework
   * may suspend one and run another (Spring's REQUIRES_NEW), so there can be several.
   */
  private static final ThreadLocal<List<TransactionScope>> JOINED = new ThreadLocal<>();

  /**
   * Runs {@code work} in a new transaction on a connection from {@code open}: commits when it
   * returns, rolls back when it throws.
   */
  static <T> T run(
      java.util.function.Supplier<Connection> open,
      Participant participant,
      TransactionWork<T> work) {
    T result;
    List<CommittingThread.Delivery> onThisThread = List.of();
    try {
      try (Connection c = open.get()) {
        TransactionScope scope = new TransactionScope(c, CURRENT.get());
        CURRENT.set(scope);
        try {
          result = work.run(scope.tx);
          participant.beforeCommit(scope);
          c.commit();
        } catch (SQLException | RuntimeException e) {
          try {
            c.rollback();
          } catch (SQLException suppressed) {
            e.addSuppressed(suppressed);
          }
          if (e instanceof RuntimeException) {
            throw (RuntimeException) e;
          }
          throw new StoreException("transaction failed and was rolled back", e);
        } finally {
          if (scope.outer == null) {
            CURRENT.remove();
          } else {
            CURRENT.set(scope.outer);
          }
        }
        // Before the connection goes back to the pool: the events' way to the handler starts
        // here.
        onThisThread = CommittingThread.collect(() -> participant.afterCommit(scope));
      } catch (SQLException e) {
        throw new StoreException("could not close the transaction's connection", e);
      }
    } finally {
      CommittingThread.run(onThisThread); // handlers of consumers that asked for this thread
    }
    return result;
  }

  /**
   * The scope this thread runs whose connection is {@code tx}, or null (a transaction the
   * application runs itself, or another connection inside the work).
   */
  static TransactionScope of(Connection tx) {
    TransactionScope s = CURRENT.get();
    if (s != null && s.tx == tx) {
      return s;
    }
    List<TransactionScope> joined = JOINED.get();
    if (joined != null) {
      for (TransactionScope j : joined) {
        if (j.tx == tx) {
          return j;
        }
      }
    }
    return null;
  }

  /**
   * A scope for a transaction that a framework runs on {@code tx} on this thread: its connection is
   * the framework's own (not watched: the framework commits), and it lives until {@link #leave}.
   * Transactions this thread runs already, joined or not, count as outer ones for the nested-key
   * check.
   */
  static TransactionScope join(Connection tx) {
    if (of(tx) != null) {
      throw new ConnectionStateException(
          "this transaction is joined already (or is an inTransaction's); join it once and report"
              + " its course to that JoinedTransaction");
    }
    List<TransactionScope> joined = JOINED.get();
    if (joined == null) {
      joined = new ArrayList<>(2);
      JOINED.set(joined);
    }
    TransactionScope outer = !joined.isEmpty() ? joined.get(joined.size() - 1) : CURRENT.get();
    TransactionScope scope = new TransactionScope(tx, outer, false);
    joined.add(scope);
    return scope;
  }

  /** The framework's transaction ended: forgets {@code scope}. Idempotent. */
  static void leave(TransactionScope scope) {
    List<TransactionScope> joined = JOINED.get();
    if (joined != null && joined.remove(scope) && joined.isEmpty()) {
      JOINED.remove(); // nothing left behind on pooled threads
    }
  }

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

  /** A savepoint (a {@link java.sql.Savepoint}, or what a framework names it by). */
  private record Mark(
      Object savepoint, int heldBack, int claimed, Map<TopicName, Integer> published) {}

  /** The {@code inTransaction} whose work started this one, if any. */
  final TransactionScope outer;

  private TransactionScope(Connection pooled, TransactionScope outer) {
    this(pooled, outer, true);
  }

  private TransactionScope(Connection connection, TransactionScope outer, boolean watched) {
    this.tx = watched ? ManagedConnection.wrap(connection, this) : connection;
    this.outer = outer;
  }

  void savepoint(Object s) {
    marks.add(new Mark(s, heldBack.size(), claimed.size(), new LinkedHashMap<>(published)));
  }

  /** Releasing a savepoint releases those set after it too. */
  void released(Object s) {
    int i = indexOf(s);
    if (i >= 0) {
      marks.subList(i, marks.size()).clear();
    }
  }

  /** The database undid everything since {@code s}; so does the publisher (s stays valid). */
  void rolledBackTo(Object s) {
    int i = indexOf(s);
    if (i < 0) {
      throw new ConnectionStateException(
          "the work rolled back to a savepoint it did not set on inTransaction's connection"
              + " (an unwrapped one?), or that was never reported to the joined transaction, so"
              + " Boxline cannot tell which of the events it holds back were undone; set"
              + " savepoints on the connection inTransaction handed over, or report each with"
              + " JoinedTransaction.savepoint. The transaction must be rolled back.");
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
      for (TransactionScope o = outer; o != null; o = o.outer) {
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

  private int indexOf(Object s) {
    for (int i = 0; i < marks.size(); i++) {
      if (marks.get(i).savepoint == s) {
        return i;
      }
    }
    return -1;
  }
}
