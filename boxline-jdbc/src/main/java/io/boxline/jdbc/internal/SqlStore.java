package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
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
import io.boxline.spi.CursorMove;
import io.boxline.spi.FencedTransaction;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.Resolution;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;
import javax.sql.DataSource;

/**
 * What the SQL dialects (PostgreSQL, MariaDB / MySQL, H2) do alike: namespaces, topics and
 * subscriptions, lag, reads, fenced cursor transactions and the parked-event calls. Every statement
 * is loaded by name from the dialect's queries.sql, so the same Java runs over each dialect's SQL;
 * subclasses say how times and event ids are stored, how an insert returns its new id and how a
 * batch of outbox rows and idempotency keys travels.
 */
abstract class SqlStore<P extends SqlStore.Parking> implements Store {
  /** The parked-event, inbox and retention side of a dialect, to which the store delegates. */
  interface Parking {
    void insertParks(Connection tx, long subscriptionId, PartitionKey partition, List<Park> parks)
        throws SQLException;

    boolean inboxClaim(Connection tx, long subscriptionId, String key);

    boolean inboxSeen(long subscriptionId, String key);

    void setRetention(long topicId, RetentionPolicy policy);

    PurgeResult purge(
        Duration inboxAge, Duration deadLetterAge, Duration idempotencyAge, int batch);

    ParkedSummary parked(long subscriptionId, PartitionKey partition, boolean deadBlocks);

    List<ParkedEvent> dueParked(
        long subscriptionId, PartitionKey partition, boolean deadBlocks, int limit);

    boolean resolveParked(
        long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes);

    List<DeadLetter> deadLetters(long subscriptionId, DeadLetterQuery q);

    int redriveDeadLetters(long subscriptionId, DeadLetterQuery q);

    int discardDeadLetters(long subscriptionId, DeadLetterQuery q);
  }

  protected final DataSource dataSource;
  protected final String schema;
  protected final String prefix;
  protected final String description;
  protected final JdbcSql db;
  protected final P parking;

  /**
   * @param parking makes the dialect's parking from the queries and a lookup of topic ids by name
   */
  SqlStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String description,
      JdbcSql db,
      BiFunction<JdbcSql, ToLongFunction<TopicName>, P> parking) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.prefix = prefix;
    this.description = description;
    this.db = db;
    this.parking = parking.apply(db, name -> findTopic(name).map(TopicInfo::id).orElse(-1L));
  }

  /** "version schema=… prefix=…": how a store describes itself ({@code label} names the schema). */
  static String description(String version, String label, String schema, String prefix) {
    return version + " " + label + "=" + schema + (prefix.isEmpty() ? "" : " prefix=" + prefix);
  }

  /** Reads a nullable time column. */
  abstract Instant instant(ResultSet rs, int column) throws SQLException;

  /** Binds a time parameter. */
  abstract void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException;

  /** Reads an event id column. */
  abstract UUID uuid(ResultSet rs, int column) throws SQLException;

  /**
   * Runs the insert-unless-present statement {@code name}; returns the new row's id, or null when
   * the row existed already.
   */
  abstract Long insertReturningId(Connection c, String name, JdbcSql.Binder binder)
      throws SQLException;

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

  /** The key under which {@link #claimKeys} reports the owner of a record's idempotency key. */
  String ownerKey(OutboxRecord r) {
    return r.topicId() + "/" + r.idempotencyKey();
  }

  /** Runs an insert whose statement skips rows that exist already; returns the rows inserted. */
  int insertUnlessPresent(PreparedStatement ps) throws SQLException {
    return ps.executeUpdate();
  }

  /** Binds the partitions of a new topic to {@code insert_partitions} at parameter {@code at}. */
  void bindPartitions(PreparedStatement ps, int at, int partitions) throws SQLException {
    ps.setInt(at, partitions);
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

  // ------------------------------------------------------------------ admin
  @Override
  public void createNamespace(NamespacePath namespace) {
    db.tx(
        "insert_namespace",
        c -> {
          List<NamespacePath> chain = new ArrayList<>();
          for (NamespacePath n = namespace; n != null; n = n.parent()) {
            chain.add(0, n);
          }
          Long parent = null;
          for (NamespacePath n : chain) {
            try (PreparedStatement ps = c.prepareStatement(sql("insert_namespace"))) {
              ps.setString(1, n.toString());
              ps.setObject(2, parent, Types.BIGINT);
              insertUnlessPresent(ps);
            }
            parent = namespaceId(c, n.toString());
          }
          return null;
        });
  }

  private Long namespaceId(Connection c, String path) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("namespace_id"))) {
      ps.setString(1, path);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions) {
    return createTopic(topic, partitions, Sequencing.SEQUENCER);
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    return db.tx(
        "insert_topic",
        c -> {
          Long ns = namespaceId(c, topic.namespace().toString());
          if (ns == null) {
            throw new NotFoundException(
                "namespace '"
                    + topic.namespace()
                    + "' does not exist; create it with admin().createNamespace(NamespacePath.of(\""
                    + topic.namespace()
                    + "\"))");
          }
          Long id =
              insertReturningId(
                  c,
                  "insert_topic",
                  ps -> {
                    ps.setLong(1, ns);
                    ps.setString(2, topic.name());
                    ps.setInt(3, partitions);
                    ps.setString(4, sequencing.name());
                  });
          if (id != null) {
            try (PreparedStatement ps = c.prepareStatement(sql("insert_partitions"))) {
              ps.setLong(1, id);
              bindPartitions(ps, 2, partitions);
              ps.executeUpdate();
            }
          }
          TopicInfo t = topicByName(c, topic).orElseThrow();
          if (t.partitions() != partitions) {
            throw new ValidationException(
                "topic '"
                    + topic
                    + "' already exists with "
                    + t.partitions()
                    + " partitions, not "
                    + partitions
                    + "; partition counts never change because that would move keys");
          }
          if (t.sequencing() != sequencing) {
            throw new ValidationException(
                "topic '"
                    + topic
                    + "' already exists with sequencing "
                    + t.sequencing()
                    + ", not "
                    + sequencing
                    + "; a topic's sequencing never changes (create another topic)");
          }
          return t;
        });
  }

  private Optional<TopicInfo> topicByName(Connection c, TopicName topic) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("topic_by_name"))) {
      ps.setString(1, topic.namespace().toString());
      ps.setString(2, topic.name());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(topic(rs)) : Optional.empty();
      }
    }
  }

  private TopicInfo topic(ResultSet rs) throws SQLException {
    return new TopicInfo(
        TopicName.of(rs.getString(2), rs.getString(3)),
        rs.getLong(1),
        rs.getInt(4),
        instant(rs, 5),
        Sequencing.valueOf(rs.getString(6)));
  }

  @Override
  public Optional<TopicInfo> findTopic(TopicName topic) {
    try (Connection c = db.connect()) {
      return topicByName(c, topic);
    } catch (SQLException e) {
      throw fail("topic_by_name", e);
    }
  }

  @Override
  public Optional<TopicInfo> findTopic(long topicId) {
    return db.one("topic_by_id", ps -> ps.setLong(1, topicId), this::topic);
  }

  @Override
  public List<TopicInfo> topics() {
    return db.list("all_topics", ps -> {}, this::topic);
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    return db.tx(
        "insert_subscription",
        c -> {
          List<TopicInfo> topics = new ArrayList<>();
          for (TopicName t : spec.topics()) {
            topics.add(
                topicByName(c, t)
                    .orElseThrow(
                        () ->
                            new NotFoundException(
                                "subscription '"
                                    + spec.name()
                                    + "' names topic '"
                                    + t
                                    + "', which does not exist; create the topic first")));
          }
          Long id = insertReturningId(c, "insert_subscription", ps -> ps.setString(1, spec.name()));
          if (id == null) {
            SubscriptionInfo existing = subscription(c, spec.name()).orElseThrow();
            if (!new HashSet<>(existing.topics()).equals(new HashSet<>(spec.topics()))) {
              throw new ValidationException(
                  "subscription '"
                      + spec.name()
                      + "' already exists with topics "
                      + existing.topics()
                      + ", not "
                      + spec.topics()
                      + "; use another name");
            }
            return existing;
          }
          for (TopicInfo t : topics) {
            try (PreparedStatement ps = c.prepareStatement(sql("insert_subscription_topic"))) {
              ps.setLong(1, id);
              ps.setLong(2, t.id());
              ps.executeUpdate();
            }
            StartPosition start = spec.start();
            switch (start.kind()) {
              case EARLIEST:
              case LATEST:
                try (PreparedStatement ps =
                    c.prepareStatement(
                        sql(
                            start.kind() == StartPosition.Kind.EARLIEST
                                ? "insert_cursors_earliest"
                                : "insert_cursors_latest"))) {
                  ps.setLong(1, id);
                  ps.setLong(2, t.id());
                  ps.executeUpdate();
                }
                break;
              case TIMESTAMP:
                try (PreparedStatement ps = c.prepareStatement(sql("insert_cursors_at"))) {
                  ps.setLong(1, id);
                  bindInstant(ps, 2, start.timestamp());
                  ps.setLong(3, t.id());
                  ps.executeUpdate();
                }
                break;
              default:
                throw new IllegalStateException(start.kind().name());
            }
          }
          return subscription(c, spec.name()).orElseThrow();
        });
  }

  @Override
  public int rewindCursors(long subscriptionId, StartPosition to) {
    String statement =
        switch (to.kind()) {
          case EARLIEST -> "rewind_cursors_earliest";
          case LATEST -> "rewind_cursors_latest";
          case TIMESTAMP -> "rewind_cursors_at";
        };
    return db.tx(
        statement,
        c -> {
          int cursors;
          try (PreparedStatement ps = c.prepareStatement(sql(statement))) {
            int at = 1;
            if (to.kind() == StartPosition.Kind.TIMESTAMP) {
              bindInstant(ps, at++, to.timestamp());
            }
            ps.setLong(at, subscriptionId);
            cursors = ps.executeUpdate();
          }
          try (PreparedStatement ps = c.prepareStatement(sql("unpark_after_cursors"))) {
            ps.setLong(1, subscriptionId);
            ps.executeUpdate();
          }
          return cursors;
        });
  }

  private Optional<SubscriptionInfo> subscription(Connection c, String name) throws SQLException {
    long id;
    Instant created;
    try (PreparedStatement ps = c.prepareStatement(sql("subscription_by_name"))) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        id = rs.getLong(1);
        created = instant(rs, 2);
      }
    }
    List<TopicName> topics = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql("subscription_topics"))) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          topics.add(TopicName.of(rs.getString(1), rs.getString(2)));
        }
      }
    }
    return Optional.of(new SubscriptionInfo(name, id, List.copyOf(topics), created));
  }

  @Override
  public Optional<SubscriptionInfo> findSubscription(String name) {
    try (Connection c = db.connect()) {
      return subscription(c, name);
    } catch (SQLException e) {
      throw fail("subscription_by_name", e);
    }
  }

  @Override
  public List<PartitionLag> lag(long subscriptionId) {
    return db.list(
        "lag",
        ps -> ps.setLong(1, subscriptionId),
        rs ->
            new PartitionLag(
                TopicName.of(rs.getString(1), rs.getString(2)),
                rs.getInt(3),
                rs.getLong(4),
                rs.getLong(5)));
  }

  @Override
  public List<PartitionLag> lagWithAge(long subscriptionId) {
    return db.list(
        "lag_with_age",
        ps -> ps.setLong(1, subscriptionId),
        rs ->
            new PartitionLag(
                TopicName.of(rs.getString(1), rs.getString(2)),
                rs.getInt(3),
                rs.getLong(4),
                rs.getLong(5),
                instant(rs, 6)));
  }

  @Override
  public Map<String, List<PartitionLag>> lagBySubscription() {
    Map<String, List<PartitionLag>> out = new LinkedHashMap<>();
    db.list(
            "lag_all",
            ps -> {},
            rs ->
                Map.entry(
                    rs.getString(1),
                    new PartitionLag(
                        TopicName.of(rs.getString(2), rs.getString(3)),
                        rs.getInt(4),
                        rs.getLong(5),
                        rs.getLong(6),
                        instant(rs, 7))))
        .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
    out.replaceAll((k, v) -> List.copyOf(v));
    return out;
  }

  @Override
  public io.boxline.OutboxBacklog outboxBacklog() {
    return db.one(
            "outbox_backlog",
            ps -> {},
            rs -> new io.boxline.OutboxBacklog(rs.getLong(1), instant(rs, 2)))
        .orElseThrow();
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
      if (isDeadlock(e)) {
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

  /** PostgreSQL's deadlock, or the serialization failure MariaDB and H2 report for one. */
  private static boolean isDeadlock(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && ("40P01".equals(s.getSQLState()) || "40001".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
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

  // ------------------------------------------------------------------ consume
  @Override
  public List<StoredEvent> read(long topicId, int partition, long afterSequence, int limit) {
    return db.list(
        "read",
        ps -> {
          ps.setLong(1, topicId);
          ps.setInt(2, partition);
          ps.setLong(3, afterSequence);
          ps.setInt(4, limit);
        },
        rs ->
            Headers.storedEvent(
                uuid(rs, 2),
                rs.getLong(1),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                rs.getBytes(7),
                rs.getString(8),
                instant(rs, 9),
                instant(rs, 10)));
  }

  /**
   * Binds {@code commit_cursor}: the cursor moves from {@code expected} to {@code position} if it
   * is still at {@code epoch} and at {@code expected}.
   */
  static void bindCommitCursor(
      PreparedStatement ps,
      long subscriptionId,
      PartitionKey partition,
      long expected,
      long position,
      long epoch)
      throws SQLException {
    ps.setLong(1, position);
    ps.setLong(2, subscriptionId);
    ps.setLong(3, partition.topicId());
    ps.setInt(4, partition.partition());
    ps.setLong(5, epoch);
    ps.setLong(6, expected);
  }

  /** Runs {@code commit_cursor} on {@code c}; returns how many cursor rows moved (0 or 1). */
  private int moveCursor(
      Connection c,
      long subscriptionId,
      PartitionKey partition,
      long expected,
      long position,
      long epoch)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("commit_cursor"))) {
      bindCommitCursor(ps, subscriptionId, partition, expected, position, epoch);
      if (!ps.execute()) {
        return ps.getUpdateCount();
      }
      // PostgreSQL's returns a row per moved cursor (its RETURNING makes the commit asynchronous).
      int moved = 0;
      try (ResultSet rs = ps.getResultSet()) {
        while (rs.next()) {
          moved++;
        }
      }
      return moved;
    }
  }

  @Override
  public CommitOutcome commitBatch(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<Park> parks) {
    if (parks.isEmpty()) {
      try (Connection c = db.connect()) { // one auto-commit statement
        return moveCursor(c, subscriptionId, partition, expectedPosition, position, epoch) == 1
            ? CommitOutcome.COMMITTED
            : whyCursorStayed(c, subscriptionId, partition, epoch);
      } catch (SQLException e) {
        throw fail("commit_cursor", e);
      }
    }
    return db.tx(
        "park",
        c -> moveAndPark(c, subscriptionId, partition, expectedPosition, position, epoch, parks));
  }

  /**
   * In the open transaction: moves the cursor first (it locks the row, or tells that the batch must
   * not be recorded), then writes the parks; rolls back and says why when the cursor stayed.
   */
  private CommitOutcome moveAndPark(
      Connection c,
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<io.boxline.spi.Park> parks)
      throws SQLException {
    if (moveCursor(c, subscriptionId, partition, expectedPosition, position, epoch) != 1) {
      CommitOutcome why = whyCursorStayed(c, subscriptionId, partition, epoch);
      c.rollback(); // park nothing
      return why;
    }
    if (!parks.isEmpty()) {
      parking.insertParks(c, subscriptionId, partition, parks);
    }
    return CommitOutcome.COMMITTED;
  }

  /**
   * Events handed over in memory (IN_TRANSACTION topics, committed through {@code inTransaction})
   * are checked against the log before the cursor passes them: the same ids at the same sequences,
   * read in the transaction that moves the cursor.
   */
  @Override
  public CommitOutcome commitBatchIfLogHolds(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<io.boxline.spi.Park> parks,
      long[] sequences,
      UUID[] eventIds) {
    return db.tx(
        "log_ids",
        c ->
            logHolds(c, partition, sequences, eventIds)
                ? moveAndPark(
                    c, subscriptionId, partition, expectedPosition, position, epoch, parks)
                : CommitOutcome.LOG_CHANGED);
  }

  /** Whether the log holds exactly these event ids at these (consecutive) sequences. */
  private boolean logHolds(Connection c, PartitionKey partition, long[] sequences, UUID[] eventIds)
      throws SQLException {
    Map<Long, String> held = new java.util.HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql("log_ids"))) {
      ps.setLong(1, partition.topicId());
      ps.setInt(2, partition.partition());
      ps.setLong(3, sequences[0]);
      ps.setLong(4, sequences[sequences.length - 1]);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          held.put(rs.getLong(1), rs.getString(2));
        }
      }
    }
    for (int i = 0; i < sequences.length; i++) {
      if (!eventIds[i].toString().equals(held.get(sequences[i]))) {
        return false;
      }
    }
    return true;
  }

  /**
   * All moves in one transaction, so the server commits (and flushes) once for all of them. A move
   * that matches no row, or whose handed-over events the log does not hold, wrote nothing, so the
   * others still commit.
   */
  @Override
  public List<CommitOutcome> commitCursors(long subscriptionId, List<CursorMove> moves) {
    return db.tx(
        "commit_cursor",
        c -> {
          List<CommitOutcome> outcomes = new ArrayList<>(moves.size());
          for (CursorMove m : moves) {
            if (m.checksLog() && !logHolds(c, m.partition(), m.heldSequences(), m.heldIds())) {
              outcomes.add(CommitOutcome.LOG_CHANGED);
              continue;
            }
            outcomes.add(
                moveCursor(
                            c,
                            subscriptionId,
                            m.partition(),
                            m.expectedPosition(),
                            m.position(),
                            m.epoch())
                        == 1
                    ? CommitOutcome.COMMITTED
                    : whyCursorStayed(c, subscriptionId, m.partition(), m.epoch()));
          }
          return outcomes;
        });
  }

  /** After a cursor move that matched no row: fenced (another epoch) or moved (lost commits). */
  protected CommitOutcome whyCursorStayed(
      Connection c, long subscriptionId, PartitionKey partition, long epoch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("cursor_epoch"))) {
      ps.setLong(1, subscriptionId);
      ps.setLong(2, partition.topicId());
      ps.setInt(3, partition.partition());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getLong(1) == epoch
            ? CommitOutcome.CURSOR_MOVED
            : CommitOutcome.FENCED;
      }
    }
  }

  // ------------------------------------------------------------------ fenced transactions
  @Override
  public FencedTransaction beginFenced(
      long subscriptionId, PartitionKey partition, long epoch, long expectedPosition) {
    Connection c = openTransaction();
    try {
      try (PreparedStatement ps = c.prepareStatement(sql("lock_cursor"))) {
        ps.setLong(1, subscriptionId);
        ps.setLong(2, partition.topicId());
        ps.setInt(3, partition.partition());
        ps.setLong(4, epoch);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getLong(1) == expectedPosition) {
            return new FencedTransaction(c, null);
          }
        }
      }
      // The row is locked by epoch: refused because of the epoch, or because of the position?
      CommitOutcome why = whyCursorStayed(c, subscriptionId, partition, epoch);
      c.rollback();
      c.close();
      return why == CommitOutcome.CURSOR_MOVED ? FencedTransaction.MOVED : FencedTransaction.FENCED;
    } catch (SQLException e) {
      JdbcSql.closeQuietly(c);
      throw fail("lock_cursor", e);
    }
  }

  @Override
  public void commitFenced(
      Connection tx, long subscriptionId, PartitionKey partition, long position, List<Park> parks) {
    String step = "park";
    try {
      if (!parks.isEmpty()) {
        parking.insertParks(tx, subscriptionId, partition, parks);
      }
      step = "advance_locked_cursor";
      try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
        ps.setLong(1, position);
        ps.setLong(2, subscriptionId);
        ps.setLong(3, partition.topicId());
        ps.setInt(4, partition.partition());
        ps.executeUpdate();
      }
      step = "commit";
      tx.commit();
    } catch (SQLException e) {
      rollbackAfter(tx, e);
      throw fail(step, e);
    } finally {
      JdbcSql.closeQuietly(tx);
    }
  }

  @Override
  public void finishParkedFenced(
      Connection tx, long subscriptionId, PartitionKey partition, long seq) {
    try {
      try (PreparedStatement ps = tx.prepareStatement(sql("parked_done_locked"))) {
        ps.setLong(1, subscriptionId);
        ps.setLong(2, partition.topicId());
        ps.setInt(3, partition.partition());
        ps.setLong(4, seq);
        ps.executeUpdate();
      }
      tx.commit();
    } catch (SQLException e) {
      rollbackAfter(tx, e);
      throw fail("parked_done_locked", e);
    } finally {
      JdbcSql.closeQuietly(tx);
    }
  }

  private static void rollbackAfter(Connection tx, SQLException failure) {
    try {
      tx.rollback();
    } catch (SQLException suppressed) {
      failure.addSuppressed(suppressed);
    }
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
  public void setRetention(long topicId, RetentionPolicy policy) {
    parking.setRetention(topicId, policy);
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
      long subscriptionId, PartitionKey partition, boolean deadBlocks, int limit) {
    return parking.dueParked(subscriptionId, partition, deadBlocks, limit);
  }

  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long seq, long epoch, Resolution resolution) {
    return parking.resolveParked(subscriptionId, partition, epoch, Map.of(seq, resolution));
  }

  @Override
  public boolean resolveParked(
      long subscriptionId, PartitionKey partition, long epoch, Map<Long, Resolution> outcomes) {
    return parking.resolveParked(subscriptionId, partition, epoch, outcomes);
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
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return parking.discardDeadLetters(subscriptionId, q);
  }
}
