package io.boxline.internal.memory;

import io.boxline.NamespacePath;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import io.boxline.spi.StoreStats;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link Store} in memory, for fast unit tests of the engine and single-JVM experiments. It is
 * not durable (everything is gone with the JVM) and runs no SQL; it passes the store contract suite
 * of {@code boxline-testkit}.
 *
 * <pre>{@code
 * MutableClock clock = ...;                       // any java.time.Clock
 * InMemoryStore store = InMemoryStore.create(clock);
 * Boxline boxline = Boxline.builder().store(store).clock(clock).build().start();
 * }</pre>
 *
 * <ul>
 *   <li><b>Transactions.</b> {@link #openTransaction()} returns a {@link Connection} whose writes
 *       (outbox rows, log rows of IN_TRANSACTION topics, idempotency keys, inbox keys, cursor moves
 *       of a fenced transaction) are buffered and applied atomically at {@code commit()}, dropped
 *       at {@code rollback()} or at {@code close()} without a commit. Rows an open transaction
 *       wrote stay locked until then, as in a database: another transaction claiming the same
 *       idempotency or inbox key, numbering the same partition or moving the same cursor waits (at
 *       most 30 s), and a wait cycle fails at once as a deadlock. Reads see committed data only
 *       (read committed). The connection runs no SQL: other JDBC methods throw {@link
 *       java.sql.SQLFeatureNotSupportedException}.
 *   <li><b>Locking.</b> One store-wide lock serialises every call; each call is atomic.
 *   <li><b>Time.</b> Every time the store records or compares (event creation, lease expiry, retry
 *       due times, retention ages) comes from the clock given to {@link #create(Clock)}; give the
 *       Boxline builder the same clock and retry due times become deterministic. The coordination
 *       store ({@link #coordination()}) runs on the same clock.
 *   <li><b>Wake-ups.</b> {@link #listen} returns true: outbox commits, sequenced heads and redrives
 *       reach every listener of the same database in process, on a thread of the store's own.
 *       {@link #sameDatabase()} gives another store on the same data (a second "process"), so that
 *       two Boxline instances can share it and each close its own.
 *   <li><b>Closing</b> stops this store's listeners only; the data stays, so a new Boxline may be
 *       built on the same store (a restart).
 * </ul>
 */
public final class InMemoryStore extends MemoryCursorStore implements Store {
  private final List<WakeupListener> listeners = new CopyOnWriteArrayList<>();

  private InMemoryStore(MemoryDatabase db) {
    super(db);
  }

  /** A new, empty store whose times all come from {@code clock}. */
  public static InMemoryStore create(Clock clock) {
    return new InMemoryStore(new MemoryDatabase(Objects.requireNonNull(clock, "clock")));
  }

  /** A new, empty store on the UTC system clock. */
  public static InMemoryStore create() {
    return create(Clock.systemUTC());
  }

  /** Another store on this one's data, as a second process on the same database. */
  public InMemoryStore sameDatabase() {
    return new InMemoryStore(db);
  }

  /** The clock the store reads. */
  public Clock clock() {
    return db.clock;
  }

  // ------------------------------------------------------------------ lifecycle
  /** Nothing to migrate. */
  @Override
  public void migrate() {}

  @Override
  public String describe() {
    return "in-memory store (one JVM, not durable)";
  }

  @Override
  public Connection openTransaction() {
    return new MemoryTransaction(db).connection;
  }

  @Override
  public CoordinationStore coordination() {
    return db.coordination;
  }

  @Override
  public boolean listen(WakeupListener listener) {
    Objects.requireNonNull(listener, "listener");
    listeners.add(listener);
    db.wakeups.add(listener);
    return true;
  }

  @Override
  public void close() {
    List<WakeupListener> mine = List.copyOf(listeners);
    listeners.removeAll(mine);
    db.wakeups.remove(mine);
  }

  // ------------------------------------------------------------------ catalog
  @Override
  public void createNamespace(NamespacePath namespace) {
    db.locked(() -> db.catalog.createNamespace(namespace, db.now()));
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    return db.locked(
        () -> {
          TopicInfo t = db.catalog.createTopic(topic, partitions, sequencing, db.now());
          db.log.addPartitions(t.id(), t.partitions());
          return t;
        });
  }

  @Override
  public Optional<TopicInfo> findTopic(TopicName topic) {
    return db.locked(() -> db.catalog.topic(topic));
  }

  @Override
  public Optional<TopicInfo> findTopic(long topicId) {
    return db.locked(() -> db.catalog.topic(topicId));
  }

  @Override
  public List<TopicInfo> topics() {
    return db.locked(db.catalog::topics);
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    return db.locked(
        () -> {
          Instant now = db.now();
          SubscriptionInfo s = db.catalog.createSubscription(spec, now);
          if (s == null) {
            return db.catalog.subscription(spec.name()).orElseThrow();
          }
          for (TopicName name : s.topics()) {
            TopicInfo t = db.catalog.topic(name).orElseThrow();
            for (int p = 0; p < t.partitions(); p++) {
              PartitionKey k = PartitionKey.of(t.id(), p);
              db.cursors.create(s.id(), k, db.log.startPosition(k, spec.start()), now);
            }
          }
          return s;
        });
  }

  @Override
  public RetentionPolicy retention(long topicId) {
    return db.locked(
        () -> db.catalog.retentions().getOrDefault(topicId, RetentionPolicy.forever()));
  }

  @Override
  public List<NamespacePath> namespaces() {
    return db.locked(db.catalog::namespaces);
  }

  @Override
  public List<SubscriptionInfo> subscriptions() {
    return db.locked(db.catalog::subscriptions);
  }

  @Override
  public SubscriptionInfo renameSubscription(SubscriptionInfo subscription, String to) {
    SubscriptionInfo renamed =
        db.locked(() -> db.catalog.renameSubscription(subscription.id(), to));
    db.coordination.forget(subscription.name());
    return renamed;
  }

  @Override
  public boolean deleteSubscription(SubscriptionInfo subscription) {
    boolean deleted =
        db.locked(
            () -> {
              db.cursors.deleteSubscription(subscription.id());
              db.parking.deleteSubscription(subscription.id());
              return db.catalog.deleteSubscription(subscription.id());
            });
    db.coordination.forget(subscription.name());
    return deleted;
  }

  @Override
  public boolean deleteTopic(long topicId) {
    return db.locked(
        () -> {
          db.cursors.deleteTopic(topicId);
          db.parking.deleteTopic(topicId);
          db.log.deleteTopic(topicId);
          return db.catalog.deleteTopic(topicId);
        });
  }

  @Override
  public boolean deleteNamespace(NamespacePath namespace) {
    return db.locked(() -> db.catalog.deleteNamespace(namespace));
  }

  @Override
  public Optional<SubscriptionInfo> findSubscription(String name) {
    return db.locked(() -> db.catalog.subscription(name));
  }

  @Override
  public int rewindCursors(long subscriptionId, StartPosition to) {
    return db.locked(
        () -> {
          int n = db.cursors.rewind(subscriptionId, k -> db.log.startPosition(k, to), db.now());
          Map<PartitionKey, Long> positions = new HashMap<>();
          db.cursors.of(subscriptionId).forEach((k, c) -> positions.put(k, c.position));
          db.parking.dropAfter(subscriptionId, positions);
          return n;
        });
  }

  @Override
  public int seekCursors(long subscriptionId, Map<PartitionKey, Long> to) {
    return db.locked(
        () -> {
          int n = db.cursors.seek(subscriptionId, to, db.now());
          Map<PartitionKey, Long> positions = new HashMap<>();
          db.cursors.of(subscriptionId).forEach((k, c) -> positions.put(k, c.position));
          db.parking.dropAfter(subscriptionId, positions);
          return n;
        });
  }

  @Override
  public void setRetention(long topicId, RetentionPolicy policy) {
    db.locked(() -> db.catalog.setRetention(topicId, policy));
  }

  // ------------------------------------------------------------------ publish
  @Override
  public List<UUID> append(Connection tx, List<OutboxRecord> records) {
    MemoryTransaction t = transaction(tx);
    return db.locked(
        () -> {
          Instant now = db.now();
          List<UUID> owners = db.log.claimKeys(t, records, now);
          db.log.append(t, unowned(records, owners), now);
          return owners;
        });
  }

  private static List<OutboxRecord> unowned(List<OutboxRecord> records, List<UUID> owners) {
    List<OutboxRecord> out = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      if (owners.get(i) == null) {
        out.add(records.get(i));
      }
    }
    return out;
  }

  /** Other stores' listeners hear of the outbox when {@code tx} commits. */
  @Override
  public void notifyOutbox(Connection tx) {
    MemoryTransaction t = transaction(tx);
    db.locked(() -> t.afterCommit.add(db.wakeups::outboxChanged));
  }

  @Override
  public List<LogAppend> appendToLog(Connection tx, List<OutboxRecord> records) {
    MemoryTransaction t = transaction(tx);
    return db.locked(
        () -> {
          Instant now = db.now();
          List<UUID> owners = db.log.claimKeys(t, records, now);
          List<OutboxRecord> toStore = unowned(records, owners);
          long[] seqs = toStore.isEmpty() ? new long[0] : db.log.appendToLog(t, toStore, now);
          List<LogAppend> out = new ArrayList<>(records.size());
          int j = 0;
          for (UUID owner : owners) {
            out.add(
                owner != null
                    ? new LogAppend(owner, 0, null)
                    : new LogAppend(null, seqs[j++], now));
          }
          return out;
        });
  }

  @Override
  public List<UUID> claimIdempotencyKeys(Connection tx, List<OutboxRecord> records) {
    MemoryTransaction t = transaction(tx);
    return db.locked(() -> db.log.claimKeys(t, records, db.now()));
  }

  @Override
  public List<PartitionHead> heads(List<PartitionKey> partitions) {
    return db.locked(() -> db.log.heads(partitions));
  }

  @Override
  public void announce(List<PartitionHead> heads) {
    db.wakeups.logAppended(heads);
  }

  /** In the transaction, when anyone listens (else the caller announces after its commit). */
  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    if (!db.wakeups.listening()) {
      return false;
    }
    MemoryTransaction t = transaction(tx);
    List<PartitionHead> copy = List.copyOf(heads);
    db.locked(() -> t.afterCommit.add(() -> db.wakeups.logAppended(copy)));
    return true;
  }

  // ------------------------------------------------------------------ sequencer
  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    return db.locked(() -> db.log.acquireLease(owner, ttl, db.now()));
  }

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch batch =
        db.locked(() -> db.log.sequence(owner, ttl, maxEvents, assigner, returnEvents, db.now()));
    if (batch.events() > 0) {
      db.wakeups.logAppended(batch.heads());
    }
    return batch;
  }

  @Override
  public void releaseSequencerLease(String owner) {
    db.locked(() -> db.log.releaseLease(owner));
  }

  @Override
  public int setAsideUnplaceable() {
    return db.locked(
        () ->
            db.log.setAside(
                r ->
                    !db.catalog.hasTopic(r.topicId())
                        || (r.partition() >= 0
                            && !db.log.exists(PartitionKey.of(r.topicId(), r.partition()))),
                db.now()));
  }

  // ------------------------------------------------------------------ retention
  /** Everything past its age goes in one step under the lock ({@code batch} does not matter). */
  @Override
  public PurgeResult purge(
      Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch) {
    return db.locked(
        () -> {
          Instant now = db.now();
          long events =
              db.log.purgeLog(
                  db.catalog.retentions(),
                  now,
                  (k, policy) ->
                      db.cursors.slowest(
                          k, id -> !db.catalog.abandoned(id, now.minus(policy.abandonAfter()))),
                  db.parking::parkedAnywhere);
          return new PurgeResult(
              events,
              db.parking.purgeInbox(now.minus(inboxAge)),
              db.parking.purgeDead(now.minus(deadLetterAge)),
              db.log.purgeKeys(now.minus(idempotencyAge)));
        });
  }

  @Override
  public void markActive(java.util.Collection<Long> subscriptionIds) {
    db.locked(
        () -> {
          db.catalog.markActive(subscriptionIds, db.now());
          return null;
        });
  }

  // ------------------------------------------------------------------ monitoring
  @Override
  public List<PartitionLag> lag(long subscriptionId) {
    return db.locked(() -> lagLocked(subscriptionId, false));
  }

  @Override
  public List<PartitionLag> lagWithAge(long subscriptionId) {
    return db.locked(() -> lagLocked(subscriptionId, true));
  }

  private List<PartitionLag> lagLocked(long subscriptionId, boolean withAge) {
    List<PartitionLag> out = new ArrayList<>();
    db.cursors
        .of(subscriptionId)
        .forEach(
            (k, c) ->
                out.add(
                    new PartitionLag(
                        db.catalog.topicOf(k.topicId()).name(),
                        k.partition(),
                        c.position,
                        db.log.last(k),
                        withAge ? db.log.firstCreatedAfter(k, c.position) : null)));
    out.sort(
        Comparator.comparing(PartitionLag::topic, Catalog.TOPIC_ORDER)
            .thenComparingInt(PartitionLag::partition));
    return out;
  }

  @Override
  public Map<String, List<PartitionLag>> lagBySubscription() {
    return db.locked(
        () -> {
          Map<String, List<PartitionLag>> out = new LinkedHashMap<>();
          for (SubscriptionInfo s : db.catalog.subscriptions()) {
            List<PartitionLag> lags = lagLocked(s.id(), true);
            if (!lags.isEmpty()) {
              out.put(s.name(), List.copyOf(lags));
            }
          }
          return out;
        });
  }

  @Override
  public OutboxBacklog outboxBacklog() {
    return db.locked(db.log::backlog);
  }

  /** The store does no background work of its own. */
  @Override
  public StoreStats stats() {
    return StoreStats.NONE;
  }

  @Override
  public String toString() {
    return describe();
  }
}
