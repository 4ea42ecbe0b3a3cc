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
import io.boxline.ValidationException;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.Resolution;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * What the SQL dialects (PostgreSQL, MariaDB / MySQL, H2) do alike: namespaces, topics and
 * subscriptions, lag, reads, fenced cursor transactions and the parked-event calls. Every statement
 * is loaded by name from the dialect's queries.sql, so the same Java runs over each dialect's SQL;
 * subclasses say how times and event ids are stored, how an insert returns its new id and how a
 * batch of outbox rows and idempotency keys travels.
 */
abstract class SqlStore implements Store {
  protected final DataSource dataSource;
  protected final String schema;
  protected final String prefix;
  protected final String description;
  protected final JdbcSql db;
  protected final SqlDialect dialect;
  protected final SqlParking parking;
  protected final SqlCatalog catalog;
  protected final SqlCursors cursors;

  /**
   * @param vacuumWhenAutovacuumOff see {@link SqlParking}
   * @param segments makes the log's time segments from the store's SQL and dialect (null: the
   *     dialect's retention deletes row by row)
   */
  SqlStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String description,
      JdbcSql db,
      SqlDialect dialect,
      boolean vacuumWhenAutovacuumOff,
      java.util.function.BiFunction<JdbcSql, SqlDialect, LogSegments> segments) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.prefix = prefix;
    this.description = description;
    this.db = db;
    this.dialect = dialect;
    this.catalog = new SqlCatalog(db, dialect);
    this.parking =
        new SqlParking(
            db,
            dialect,
            name -> findTopic(name).map(TopicInfo::id).orElse(-1L),
            vacuumWhenAutovacuumOff,
            segments == null ? null : segments.apply(db, dialect));
    this.cursors = new SqlCursors(db, dialect, parking);
  }

  /** "version schema=… prefix=…": how a store describes itself ({@code label} names the schema). */
  static String description(String version, String label, String schema, String prefix) {
    return version + " " + label + "=" + schema + (prefix.isEmpty() ? "" : " prefix=" + prefix);
  }

  /** Reads a nullable time column. */
  final Instant instant(ResultSet rs, int column) throws SQLException {
    return dialect.instant(rs, column);
  }

  /** Binds a nullable time parameter. */
  final void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    dialect.bindInstant(ps, at, t);
  }

  /** Reads an event id column. */
  final UUID uuid(ResultSet rs, int column) throws SQLException {
    return dialect.uuid(rs, column);
  }

  /**
   * Inserts the idempotency keys of {@code records} that are new; returns the owning event id of
   * every key in the batch, by {@link #ownerKey}.
   */
  abstract Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records)
      throws SQLException;

  /** Inserts outbox rows (maybe none) in the producer's transaction. */
  abstract void appendRows(Connection tx, List<OutboxRecord> rows) throws SQLException;

  /**
   * Appends {@code rows} (of IN_TRANSACTION topics) straight to the log in {@code tx}: locks their
   * partitions in (topic, partition) order, numbers the rows after each one's last sequence in list
   * order, inserts them. Returns each row's sequence.
   */
  abstract long[] appendToLogRows(Connection tx, List<OutboxRecord> rows, Instant createdAt)
      throws SQLException;

  /** Reads the {@code [topic, partition, position]} rows of a fencing statement. */
  static Map<PartitionKey, Long> readPositions(ResultSet rs) throws SQLException {
    Map<PartitionKey, Long> positions = new java.util.HashMap<>();
    while (rs.next()) {
      positions.put(PartitionKey.of(rs.getLong(1), rs.getInt(2)), rs.getLong(3));
    }
    return positions;
  }

  /** The key under which {@link #claimKeys} reports the owner of a record's idempotency key. */
  String ownerKey(OutboxRecord r) {
    return r.topicId() + "/" + r.idempotencyKey();
  }

  /** Runs an insert whose statement skips rows that exist already; returns the rows inserted. */
  final int insertUnlessPresent(PreparedStatement ps) throws SQLException {
    return dialect.insertUnlessPresent(ps);
  }

  /** The schema was migrated by a newer Boxline ({@code kind} is what the dialect calls it). */
  ValidationException newerSchema(String kind, int version, int known) {
    return new ValidationException(
        kind
            + " "
            + schema
            + " is at version "
            + version
            + " but this Boxline knows only "
            + known
            + "; upgrade Boxline");
  }

  /**
   * A migration the database user may not run: says how to set the schema up instead ({@code kind}
   * is what the dialect calls a schema).
   */
  StoreException migrationDenied(String kind, String user, SQLException e) {
    return new StoreException(
        "cannot migrate Boxline's "
            + kind
            + " "
            + schema
            + ": database user '"
            + user
            + "' may not change it ("
            + e.getMessage()
            + "). Run the migrations with the owner (migrator) role instead:"
            + " JdbcStore.builder(ownerDataSource).schema(\""
            + schema
            + "\").build().migrate(), or the DDL from JdbcStore.exportDdl; then start Boxline as"
            + " this user with Boxline.builder().migrate(false). See"
            + " docs/guide/least-privilege.md",
        e);
  }

  @Override
  public String describe() {
    return description;
  }

  String sql(String name) {
    return db.sql(name);
  }

  StoreException fail(String name, SQLException e) {
    return db.fail(name, e);
  }

  @Override
  public Connection openTransaction() {
    try {
      Connection c = dataSource.getConnection();
      c.setAutoCommit(false);
      return c;
    } catch (SQLException e) {
      throw new StoreException("cannot open a connection: " + e.getMessage(), e);
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
      appendRows(tx, unowned(records, owners));
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
    Map<String, UUID> claimed =
        records.stream().anyMatch(r -> r.idempotencyKey() != null)
            ? claimKeys(tx, records)
            : Map.of();
    List<UUID> owners = new ArrayList<>(records.size());
    for (OutboxRecord r : records) {
      UUID owner = r.idempotencyKey() == null ? null : claimed.get(ownerKey(r));
      owners.add(owner == null || owner.equals(r.eventId()) ? null : owner);
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
      long[] seqs = toStore.isEmpty() ? new long[0] : appendToLogRows(tx, toStore, now);
      int j = 0;
      for (int i = 0; i < out.size(); i++) {
        if (out.get(i) == null) {
          out.set(i, new LogAppend(null, seqs[j++], now));
        }
      }
      return out;
    } catch (SQLException e) {
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
        PreparedStatement ps = c.prepareStatement(sql("partition_heads"))) {
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
      return out;
    } catch (SQLException e) {
      throw fail("partition_heads", e);
    }
  }

  // ------------------------------------------------------------------ cursors (see SqlCursors)
  @Override
  public List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit) {
    return cursors.read(topicId, partition, afterSequence, limit);
  }

  @Override
  public List<StoredEvent> readWhere(
      long topicId, int partition, long afterSequence, String key, UUID eventId, int limit) {
    return cursors.readWhere(topicId, partition, afterSequence, key, eventId, limit);
  }

  @Override
  public final List<java.util.OptionalLong> fenceCursors(
      long subscriptionId, List<io.boxline.spi.Fence> fences, String owner) {
    if (fences.isEmpty()) {
      return List.of();
    }
    // Key order, as every statement that locks several cursors takes them.
    List<io.boxline.spi.Fence> sorted = new java.util.ArrayList<>(fences);
    sorted.sort(
        java.util.Comparator.comparingLong((io.boxline.spi.Fence f) -> f.partition().topicId())
            .thenComparingInt(f -> f.partition().partition()));
    return inOrder(
        io.boxline.spi.Fence.partitions(fences), fenceSorted(subscriptionId, sorted, owner));
  }

  /**
   * {@link #fenceCursors} as the database does it: raises the cursors of {@code sorted} (in key
   * order) to their fence's epoch; returns the position of each one raised.
   */
  abstract Map<PartitionKey, Long> fenceSorted(
      long subscriptionId, List<io.boxline.spi.Fence> sorted, String owner);

  /** The value of each key in {@code keys}' order, empty where {@code values} has none. */
  static List<java.util.OptionalLong> inOrder(
      List<PartitionKey> keys, Map<PartitionKey, Long> values) {
    List<java.util.OptionalLong> out = new java.util.ArrayList<>(keys.size());
    for (PartitionKey k : keys) {
      Long v = values.get(k);
      out.add(v == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(v));
    }
    return out;
  }

  @Override
  public List<CommitOutcome> settle(long subscriptionId, List<Settlement> settlements) {
    return cursors.settle(subscriptionId, settlements, this::moveCursors, movesInOneStatement());
  }

  /**
   * Moves the cursors of {@code settlements} on {@code c}, outcomes in input order (see {@link
   * SqlCursors.Mover}); by default one statement per move.
   */
  protected List<CommitOutcome> moveCursors(
      Connection c, long subscriptionId, List<Settlement> settlements) throws SQLException {
    return cursors.moveEach(c, subscriptionId, settlements);
  }

  /** Whether {@link #moveCursors} moves any number of cursors in one auto-commit statement. */
  protected boolean movesInOneStatement() {
    return false;
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
    try (Connection c = db.connect()) {
      parking.inboxClaim(c, subscriptionId, key);
    } catch (SQLException e) {
      throw fail("inbox_claim", e);
    }
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
    return parking.redriveDeadLetters(subscriptionId, q);
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
}
