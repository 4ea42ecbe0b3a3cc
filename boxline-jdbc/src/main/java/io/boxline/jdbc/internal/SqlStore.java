package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.StoreException;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.Fence;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.Resolution;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.spi.StoreStats;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The one store of every SQL database: namespaces, topics and subscriptions, publishing, the
 * sequencer, reads, fenced cursor moves, parking, retention and wake-ups. Every statement is loaded
 * by name from the dialect's {@code queries.sql}, and everything that differs between databases —
 * how values and lists are bound, migrations, the sequencer's strategy, wake-ups, log segments — is
 * reached through the {@link SqlDialect}.
 */
public final class SqlStore implements Store {
  private static final System.Logger LOG = System.getLogger(SqlStore.class.getName());
  private final DataSource dataSource;
  private final SqlContext ctx;
  private final JdbcSql db;
  private final SqlDialect dialect;
  private final IdleConnection idle;
  private final SqlParking parking;
  private final SqlCatalog catalog;
  private final SqlCursors cursors;
  private final SqlCoordination coordination;
  private final SqlSequencing sequencing;
  private final SqlSignals signals;
  private final ReplicaReads replicas;

  /**
   * A store of Boxline's tables in {@code schema}, named with {@code prefix}, on the database of
   * {@code dialect}.
   *
   * @param version the database's name and version, for {@link #describe}
   */
  public SqlStore(
      DataSource dataSource, String version, String schema, String prefix, SqlDialect dialect) {
    this(dataSource, version, schema, prefix, dialect, List.of(), Duration.ZERO);
  }

  /**
   * A store that sends reads of the log to {@code replicas} (streaming replicas of the primary),
   * waiting up to {@code replicaWait} for one that lags before the primary answers (see {@link
   * ReplicaReads}).
   */
  public SqlStore(
      DataSource dataSource,
      String version,
      String schema,
      String prefix,
      SqlDialect dialect,
      List<DataSource> replicas,
      Duration replicaWait) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.db = new JdbcSql(dataSource, SqlScript.named(dialect.folder(), schema, prefix));
    this.idle = dialect.keepsIdleConnection() ? new IdleConnection(dataSource) : null;
    String description = SqlContext.description(version, dialect.schemaKind(), schema, prefix);
    this.ctx = new SqlContext(dataSource, db, schema, prefix, description, idle);
    this.catalog = new SqlCatalog(db, dialect);
    this.parking =
        new SqlParking(
            db,
            dialect,
            name -> findTopic(name).map(TopicInfo::id).orElse(-1L),
            dialect.vacuumsWhenAutovacuumOff(),
            dialect.segments(ctx));
    this.cursors = new SqlCursors(db, dialect, parking);
    this.coordination = new SqlCoordination(db, dialect, description, idle);
    this.sequencing = dialect.sequencing(ctx);
    this.signals = dialect.signals(ctx);
    this.replicas =
        replicas.isEmpty()
            ? null
            : new ReplicaReads(db, replicas, replicaWait.toNanos(), System::nanoTime);
  }

  @Override
  public void migrate() {
    dialect.migrate(ctx);
  }

  @Override
  public String describe() {
    return ctx.description();
  }

  private StoreException fail(String name, SQLException e) {
    return db.fail(name, e);
  }

  @Override
  public Connection openTransaction() {
    try {
      Connection c = dataSource.getConnection();
      c.setAutoCommit(false);
      return c;
    } catch (SQLException e) {
      throw new StoreException(
          "cannot open a connection: "
              + e.getMessage()
              + (e instanceof java.sql.SQLTransientConnectionException
                  ? " (every connection of the pool is in use: give the pool more connections than"
                      + " the application and Boxline's consumers, sequencer and listener hold at"
                      + " once, or find the code that keeps connections open)"
                  : ""),
          e);
    }
  }

  // ------------------------------------------------------------------ catalog (see SqlCatalog)
  @Override
  public void createNamespace(NamespacePath namespace) {
    catalog.createNamespace(namespace);
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    return catalog.createTopic(topic, partitions, sequencing);
  }

  @Override
  public Optional<TopicInfo> findTopic(TopicName topic) {
    return catalog.findTopic(topic);
  }

  @Override
  public Optional<TopicInfo> findTopic(long topicId) {
    return catalog.findTopic(topicId);
  }

  @Override
  public List<TopicInfo> topics() {
    return catalog.topics();
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    return catalog.createSubscription(spec);
  }

  @Override
  public int rewindCursors(long subscriptionId, StartPosition to) {
    return catalog.rewindCursors(subscriptionId, to);
  }

  @Override
  public int seekCursors(long subscriptionId, java.util.Map<PartitionKey, Long> positions) {
    return catalog.seekCursors(subscriptionId, positions);
  }

  @Override
  public Optional<SubscriptionInfo> findSubscription(String name) {
    return catalog.findSubscription(name);
  }

  @Override
  public List<PartitionLag> lag(long subscriptionId) {
    return catalog.lag(subscriptionId);
  }

  @Override
  public List<PartitionLag> lagWithAge(long subscriptionId) {
    return catalog.lagWithAge(subscriptionId);
  }

  @Override
  public Map<String, List<PartitionLag>> lagBySubscription() {
    return catalog.lagBySubscription();
  }

  @Override
  public io.boxline.OutboxBacklog outboxBacklog() {
    return catalog.outboxBacklog();
  }

  @Override
  public List<NamespacePath> namespaces() {
    return catalog.namespaces();
  }

  @Override
  public List<SubscriptionInfo> subscriptions() {
    return catalog.subscriptions();
  }

  @Override
  public SubscriptionInfo renameSubscription(SubscriptionInfo subscription, String to) {
    return catalog.renameSubscription(subscription, to);
  }

  @Override
  public boolean deleteSubscription(SubscriptionInfo subscription) {
    return catalog.deleteSubscription(subscription);
  }

  @Override
  public boolean deleteTopic(long topicId) {
    return catalog.deleteTopic(topicId);
  }

  @Override
  public boolean deleteNamespace(NamespacePath namespace) {
    return catalog.deleteNamespace(namespace);
  }

  // ------------------------------------------------------------------ publish
  @Override
  public List<UUID> append(Connection tx, List<OutboxRecord> records) {
    String step = "claim_idempotency_keys";
    try {
      List<UUID> owners = owners(tx, records);
      step = "append";
      dialect.appendRows(tx, db, unowned(records, owners));
      return owners;
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  @Override
  public List<UUID> claimIdempotencyKeys(Connection tx, List<OutboxRecord> records) {
    try {
      return owners(tx, records);
    } catch (SQLException e) {
      throw fail("claim_idempotency_keys", e);
    }
  }

  /**
   * Claims the idempotency keys of {@code records}; per record, the id of the event that owned its
   * key already, or null (no key, or the key is now this event's: store it).
   */
  private List<UUID> owners(Connection tx, List<OutboxRecord> records) throws SQLException {
    SqlDialect.KeyClaims claims =
        records.stream().anyMatch(r -> r.idempotencyKey() != null)
            ? dialect.claimKeys(tx, db, records)
            : new SqlDialect.KeyClaims(Map.of(), java.util.Set.of());
    java.util.Set<String> storing = new java.util.HashSet<>();
    List<UUID> owners = new ArrayList<>(records.size());
    for (OutboxRecord r : records) {
      if (r.idempotencyKey() == null) {
        owners.add(null);
        continue;
      }
      String key = dialect.ownerKey(r);
      UUID owner = claims.owners().get(key);
      // Stored only by the first record of the batch that holds a key this call claimed.
      boolean ours =
          owner == null
              || (owner.equals(r.eventId())
                  && claims.claimedNow().contains(key)
                  && storing.add(key));
      owners.add(ours ? null : owner);
    }
    return owners;
  }

  /** The records whose key no earlier event owns: those to store. */
  private static List<OutboxRecord> unowned(List<OutboxRecord> records, List<UUID> owners) {
    if (owners.stream().allMatch(java.util.Objects::isNull)) {
      return records;
    }
    List<OutboxRecord> out = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      if (owners.get(i) == null) {
        out.add(records.get(i));
      }
    }
    return out;
  }

  @Override
  public List<LogAppend> appendToLog(Connection tx, List<OutboxRecord> records) {
    List<LogAppend> out = new ArrayList<>(records.size());
    String step = "claim_idempotency_keys";
    try {
      List<UUID> owners = owners(tx, records);
      for (UUID owner : owners) {
        out.add(owner == null ? null : new LogAppend(owner, 0, null));
      }
      List<OutboxRecord> toStore = unowned(records, owners);
      step = "append_to_log";
      // Microseconds: what every dialect's column keeps, so a handed-over event and the same event
      // read back from the log carry the same time.
      Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MICROS);
      List<Long> seqs = toStore.isEmpty() ? List.of() : dialect.appendToLog(tx, db, toStore, now);
      int j = 0;
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i) == null) {
          out.set(i, new LogAppend(null, seqs.get(j++), now));
        }
      }
      return out;
    } catch (SQLException e) {
      if (dialect.serializationFailure(e)) {
        throw new StoreException(
            "publishing to an IN_TRANSACTION topic failed: this transaction runs above Read Committed"
                + " (Repeatable Read or Serializable) and another transaction moved a partition head"
                + " it uses. Roll this transaction back and retry it, or run transactions that publish"
                + " to IN_TRANSACTION topics at Read Committed. The database said: "
                + e.getMessage(),
            fail(step, e));
      }
      if (JdbcSql.isDeadlock(e)) {
        throw new StoreException(
            "publishing to an IN_TRANSACTION topic deadlocked: another transaction holds a partition"
                + " this one needs and waits for one this one holds (they locked them in different"
                + " orders; transactions run through boxline.inTransaction(...) always lock in one"
                + " order, so at least one of the two was a plain transaction that published in"
                + " several calls). Roll this transaction back and retry it. To avoid it, publish all"
                + " of a plain transaction's events for such topics in one publishAll call, or run it"
                + " through boxline.inTransaction(...), which writes them in one fixed order at the"
                + " commit. The database said: "
                + e.getMessage(),
            fail(step, e));
      }
      throw fail(step, e);
    }
  }

  /** One statement per topic: the range of its partitions asked for, filtered here. */
  @Override
  public List<PartitionHead> heads(List<PartitionKey> partitions) {
    Map<Long, int[]> ranges = new java.util.TreeMap<>();
    java.util.Set<PartitionKey> wanted = new HashSet<>(partitions);
    for (PartitionKey k : partitions) {
      ranges.merge(
          k.topicId(),
          new int[] {k.partition(), k.partition()},
          (a, b) -> new int[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
    }
    List<PartitionHead> out = new ArrayList<>(partitions.size());
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(db.sql("partition_heads"))) {
      for (Map.Entry<Long, int[]> r : ranges.entrySet()) {
        ps.setLong(1, r.getKey());
        ps.setInt(2, r.getValue()[0]);
        ps.setInt(3, r.getValue()[1]);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            PartitionHead h = new PartitionHead(r.getKey(), rs.getInt(1), rs.getLong(2));
            if (wanted.contains(PartitionKey.of(h.topicId(), h.partition()))) {
              out.add(h);
            }
          }
        }
      }
      if (replicas != null) {
        replicas.saw(out);
      }
      return out;
    } catch (SQLException e) {
      throw fail("partition_heads", e);
    }
  }

  // ------------------------------------------------------------------ cursors (see SqlCursors)
  @Override
  public List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit) {
    if (replicas != null) {
      return readEach(
              List.of(new io.boxline.spi.PartitionRead(topicId, partition, afterSequence, limit)))
          .get(0);
    }
    return cursors.read(topicId, partition, afterSequence, limit);
  }

  @Override
  public List<List<StoredEvent>> readEach(List<io.boxline.spi.PartitionRead> reads) {
    if (replicas != null) {
      return replicas.readEach(reads, cursors::readEach);
    }
    return cursors.readEach(reads);
  }

  @Override
  public List<StoredEvent> readWhere(
      long topicId, int partition, long afterSequence, String key, UUID eventId, int limit) {
    if (replicas != null) {
      return replicas.any(
          on -> cursors.readWhere(on, topicId, partition, afterSequence, key, eventId, limit));
    }
    return cursors.readWhere(db, topicId, partition, afterSequence, key, eventId, limit);
  }

  @Override
  public List<OptionalLong> fenceCursors(long subscriptionId, List<Fence> fences, String owner) {
    if (fences.isEmpty()) {
      return List.of();
    }
    // Key order, as every statement that locks several cursors takes them.
    List<Fence> sorted = new ArrayList<>(fences);
    sorted.sort(
        Comparator.comparingLong((Fence f) -> f.partition().topicId())
            .thenComparingInt(f -> f.partition().partition()));
    return JdbcSql.inOrder(
        Fence.partitions(fences), dialect.fence(db, subscriptionId, sorted, owner));
  }

  @Override
  public List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements) {
    return cursors.settle(subscriptionId, settlements);
  }

  /**
   * Where the dialect moves cursors in one statement and nothing is parked: every subscription's
   * moves in one auto-commit statement; otherwise each subscription's in a call of its own.
   */
  @Override
  public List<CommitOutcome> settleAcross(List<io.boxline.spi.SubscriptionSettlement> settlements) {
    boolean parks =
        settlements.stream()
            .map(io.boxline.spi.SubscriptionSettlement::settlement)
            .anyMatch(st -> !st.parks().isEmpty() || !st.doneParked().isEmpty());
    if (parks || !dialect.movesInOneStatement()) {
      return Store.super.settleAcross(settlements);
    }
    try (Connection c = db.connect()) {
      return dialect.moveAcross(c, db, settlements);
    } catch (SQLException e) {
      throw fail("commit_cursors", e);
    }
  }

  @Override
  public CommitOutcome settleIn(Connection tx, long subscriptionId, Settlement settlement) {
    return cursors.settleIn(tx, subscriptionId, settlement);
  }

  // ------------------------------------------------------------------ inbox, retention, parked
  @Override
  public boolean inboxClaim(Connection tx, long subscriptionId, String key) {
    return parking.inboxClaim(tx, subscriptionId, key);
  }

  @Override
  public boolean inboxSeen(long subscriptionId, String key) {
    return parking.inboxSeen(subscriptionId, key);
  }

  @Override
  public void inboxRecord(long subscriptionId, String key) {
    db.on("inbox_claim", c -> parking.inboxClaim(c, subscriptionId, key));
  }

  @Override
  public RetentionPolicy retention(long topicId) {
    return parking.retention(topicId);
  }

  @Override
  public void setRetention(long topicId, RetentionPolicy policy) {
    parking.setRetention(topicId, policy);
  }

  @Override
  public void markActive(java.util.Collection<Long> subscriptionIds) {
    catalog.markActive(subscriptionIds);
  }

  @Override
  public PurgeResult purge(
      Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch) {
    return parking.purge(inboxAge, deadLetterAge, idempotencyAge, batch);
  }

  @Override
  public ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks) {
    return parking.parked(subscriptionId, partition, deadBlocks);
  }

  @Override
  public List<ParkedEvent> dueParked(
      long subscriptionId, PartitionKey partition, boolean deadBlocks, Instant now, int limit) {
    return parking.dueParked(subscriptionId, partition, deadBlocks, now, limit);
  }

  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    return parking.resolveParked(subscriptionId, partition, epoch, outcomes);
  }

  @Override
  public List<io.boxline.DeadLetterReason> deadLetterReasons(long subscriptionId, int limit) {
    return parking.deadLetterReasons(subscriptionId, limit);
  }

  @Override
  public List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q) {
    return parking.deadLetters(subscriptionId, q);
  }

  @Override
  public int redriveDeadLetters(long subscriptionId, DeadLetterQuery q) {
    int n = parking.redriveDeadLetters(subscriptionId, q);
    if (n > 0) {
      signals.redriven();
    }
    return n;
  }

  @Override
  public List<io.boxline.RetryingEvent> retrying(
      long subscriptionId, String subscription, io.boxline.EventPosition after, int limit) {
    return parking.retrying(subscriptionId, subscription, after, limit);
  }

  @Override
  public List<io.boxline.FailureCounts> failureCounts() {
    return parking.failureCounts();
  }

  @Override
  public Map<String, Long> inboxSizes() {
    return parking.inboxSizes();
  }

  @Override
  public long inboxSize(long subscriptionId) {
    return parking.inboxSize(subscriptionId);
  }

  @Override
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return parking.discardDeadLetters(subscriptionId, q);
  }

  // ------------------------------------------------------------------ sequencer and wake-ups
  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    return sequencing.acquire(owner, ttl);
  }

  @Override
  public void releaseSequencerLease(String owner) {
    sequencing.release(owner);
  }

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch batch = sequencing.sequence(owner, ttl, maxEvents, assigner, returnEvents);
    if (replicas != null) {
      replicas.saw(batch.heads());
    }
    return batch;
  }

  @Override
  public StoreStats stats() {
    StoreStats own = sequencing.stats();
    return replicas == null
        ? own
        : own.withReplicaReads(replicas.replicaReads(), replicas.fallbacks());
  }

  @Override
  public int setAsideUnplaceable() {
    return dialect.setAsideUnplaceable(db);
  }

  @Override
  public void notifyOutbox(Connection tx) {
    signals.notifyOutbox(tx);
  }

  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    return signals.announceIn(tx, heads);
  }

  @Override
  public void announce(List<PartitionHead> heads) {
    if (replicas != null) {
      replicas.saw(heads);
    }
    signals.announce(heads);
  }

  @Override
  public boolean listen(WakeupListener wakeups) {
    if (replicas == null) {
      return signals.listen(wakeups);
    }
    // The heads other processes sequenced: a replica read must reach them.
    return signals.listen(
        new WakeupListener() {
          @Override
          public void outboxChanged() {
            wakeups.outboxChanged();
          }

          @Override
          public void logAppended(List<PartitionHead> heads) {
            replicas.saw(heads);
            wakeups.logAppended(heads);
          }

          @Override
          public void resynchronize() {
            wakeups.resynchronize();
          }
        });
  }

  @Override
  public CoordinationStore coordination() {
    return coordination;
  }

  /** On the held connection where the dialect keeps one: groups re-read backlogs on a timer. */
  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    JdbcSql.RowMapper<Backlog> row =
        rs -> new Backlog(rs.getLong(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4));
    if (idle == null) {
      return db.list("backlogged", ps -> ps.setLong(1, subscriptionId), row);
    }
    try (Connection c = idle.borrow()) {
      return db.list(c, "backlogged", ps -> ps.setLong(1, subscriptionId), row);
    } catch (SQLException e) {
      throw fail("backlogged", e);
    }
  }

  /** Stops wake-ups, the sequencer and coordination, each even when an earlier step fails. */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (AutoCloseable part :
        new AutoCloseable[] {signals, sequencing, coordination, idle == null ? () -> {} : idle}) {
      try {
        part.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new StoreException("closing " + ctx.description() + " failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    LOG.log(System.Logger.Level.DEBUG, "closed {0}", ctx.description());
  }
}
