package io.boxline.jdbc.internal;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.PartitionLag;
import io.boxline.StartPosition;
import io.boxline.StoreException;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.spi.Backlog;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.Resolution;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The H2 (2.2.224+) dialect, in memory or file mode, embedded or through an H2 server. It follows
 * the MariaDB dialect's shape: times are epoch microseconds, there is no LISTEN/NOTIFY (wake-ups
 * come from in-process signals and from {@link MariaDbPoller}, an adaptive poll of one primary-key
 * row), and there are no data-modifying CTEs. Lists travel as SQL arrays read with {@code UNNEST};
 * rows of a list that must be locked are locked one per execution, in key order. The sequencer
 * keeps a connection of its own (READ COMMITTED). See docs/h2.md.
 */
public final class H2Store implements Store {
  private static final System.Logger LOG = System.getLogger(H2Store.class.getName());

  /** Migrations of one schema in one JVM run one at a time (H2 has no named locks). */
  private static final java.util.concurrent.ConcurrentHashMap<String, Object> MIGRATION_LOCKS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private final DataSource dataSource;
  private final String schema;
  private final String prefix;
  private final String description;
  private final JdbcSql db;
  private final H2Coordination coordination;
  private final H2Parking parking;
  private final Duration fastestPoll;
  private final Duration slowestPoll;
  private final Object sequencerLock = new Object();
  private Connection sequencerConnection;
  private MariaDbPoller poller;

  /**
   * @param fastestPoll the wake-up poll's interval right after activity
   * @param slowestPoll the wake-up poll's interval when idle (its whole idle cost)
   */
  public H2Store(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      Duration fastestPoll,
      Duration slowestPoll) {
    this.dataSource = dataSource;
    this.schema = schema;
    this.prefix = prefix;
    this.fastestPoll = fastestPoll;
    this.slowestPoll = slowestPoll;
    this.description =
        version + " schema=" + schema + (prefix.isEmpty() ? "" : " prefix=" + prefix);
    this.db = new JdbcSql(dataSource, SqlScript.named("h2", schema, prefix));
    this.coordination = new H2Coordination(db, description);
    this.parking = new H2Parking(db, name -> findTopic(name).map(TopicInfo::id).orElse(-1L));
  }

  @Override
  public String describe() {
    return description;
  }

  private String sql(String name) {
    return db.sql(name);
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
      throw new StoreException("cannot open a connection: " + e.getMessage(), e);
    }
  }

  // ------------------------------------------------------------------ migrations
  /**
   * DDL commits implicitly in H2, so migrations cannot run in one transaction: every statement is
   * re-runnable ({@code IF NOT EXISTS}), each file is recorded right after it was applied, and a
   * version recorded twice (two processes migrating at once) is ignored. Within one JVM migrations
   * of the same schema also take turns on a lock.
   */
  @Override
  public void migrate() {
    String key;
    try (Connection c = db.connect()) {
      key = c.getMetaData().getURL() + "|" + schema + "|" + prefix;
    } catch (SQLException e) {
      throw new StoreException("migrate: connect", "connect", e);
    }
    synchronized (MIGRATION_LOCKS.computeIfAbsent(key, k -> new Object())) {
      migrateLocked();
    }
  }

  private void migrateLocked() {
    String step = "create_version_table";
    try (Connection c = db.connect()) {
      try (Statement st = c.createStatement()) {
        st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
        st.execute(sql(step));
      }
      step = "current_version";
      int current;
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery(sql(step))) {
        rs.next();
        current = rs.getInt(1);
      }
      List<String> migrations = SqlScript.H2_MIGRATIONS;
      if (current > migrations.size()) {
        throw new ValidationException(
            "schema "
                + schema
                + " is at version "
                + current
                + " but this Boxline knows only "
                + migrations.size()
                + "; upgrade Boxline");
      }
      for (int v = current + 1; v <= migrations.size(); v++) {
        String file = migrations.get(v - 1);
        step = file;
        for (String statement : SqlScript.statements(SqlScript.load("h2", file, schema, prefix))) {
          try (Statement st = c.createStatement()) {
            st.execute(statement);
          }
        }
        step = "record_version";
        try (PreparedStatement ps = c.prepareStatement(sql(step))) {
          ps.setInt(1, v);
          ps.setString(2, file);
          H2Sql.insertIgnore(ps);
        }
      }
    } catch (SQLException e) {
      throw new StoreException("migrate: " + step, step, e);
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
              H2Sql.insertIgnore(ps);
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
    if (partitions < 1 || partitions > 65_536) {
      throw new ValidationException(
          "a topic has 1 to 65536 partitions, not " + partitions + " (topic '" + topic + "')");
    }
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
          Long id = null;
          try (PreparedStatement ps =
              c.prepareStatement(sql("insert_topic"), Statement.RETURN_GENERATED_KEYS)) {
            ps.setLong(1, ns);
            ps.setString(2, topic.name());
            ps.setInt(3, partitions);
            if (H2Sql.insertIgnore(ps) == 1) {
              try (ResultSet rs = ps.getGeneratedKeys()) {
                if (rs.next()) {
                  id = rs.getLong(1);
                }
              }
            }
          }
          if (id != null) {
            try (PreparedStatement ps = c.prepareStatement(sql("insert_partitions"))) {
              ps.setLong(1, id);
              ps.setInt(2, partitions);
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

  private static TopicInfo topic(ResultSet rs) throws SQLException {
    return new TopicInfo(
        TopicName.of(rs.getString(2), rs.getString(3)),
        rs.getLong(1),
        rs.getInt(4),
        MariaDbSql.instant(rs.getLong(5)));
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
    return db.one("topic_by_id", ps -> ps.setLong(1, topicId), H2Store::topic);
  }

  @Override
  public List<TopicInfo> topics() {
    return db.list("all_topics", ps -> {}, H2Store::topic);
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
          Long id = null;
          try (PreparedStatement ps =
              c.prepareStatement(sql("insert_subscription"), Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, spec.name());
            if (H2Sql.insertIgnore(ps) == 1) {
              try (ResultSet rs = ps.getGeneratedKeys()) {
                if (rs.next()) {
                  id = rs.getLong(1);
                }
              }
            }
          }
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
                  ps.setLong(2, MariaDbSql.micros(start.timestamp()));
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

  private Optional<SubscriptionInfo> subscription(Connection c, String name) throws SQLException {
    long id;
    java.time.Instant created;
    try (PreparedStatement ps = c.prepareStatement(sql("subscription_by_name"))) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        id = rs.getLong(1);
        created = MariaDbSql.instant(rs.getLong(2));
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
                MariaDbSql.instant(rs, 6)));
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
                        MariaDbSql.instant(rs, 7))))
        .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
    out.replaceAll((k, v) -> List.copyOf(v));
    return out;
  }

  @Override
  public io.boxline.OutboxBacklog outboxBacklog() {
    return db.one(
            "outbox_backlog",
            ps -> {},
            rs -> new io.boxline.OutboxBacklog(rs.getLong(1), MariaDbSql.instant(rs, 2)))
        .orElseThrow();
  }

  // ------------------------------------------------------------------ publish
  @Override
  public List<UUID> append(Connection tx, List<OutboxRecord> records) {
    List<UUID> existing = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      existing.add(null);
    }
    List<OutboxRecord> toStore = records;
    String step = "claim_idempotency_keys";
    try {
      if (records.stream().anyMatch(r -> r.idempotencyKey() != null)) {
        Map<String, UUID> owners = claimKeys(tx, records);
        toStore = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
          OutboxRecord r = records.get(i);
          if (r.idempotencyKey() != null) {
            UUID owner = owners.get(r.topicId() + "/" + r.idempotencyKey());
            if (!r.eventId().equals(owner)) {
              existing.set(i, owner);
              continue;
            }
          }
          toStore.add(r);
        }
      }
      step = "append";
      appendRows(tx, toStore);
      return existing;
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  /** One JDBC batch of single-row inserts (H2 runs it in-process, or in one round trip). */
  private void appendRows(Connection tx, List<OutboxRecord> rows) throws SQLException {
    if (rows.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = tx.prepareStatement(sql("append"))) {
      for (OutboxRecord r : rows) {
        int i = 1;
        ps.setString(i++, r.eventId().toString());
        ps.setLong(i++, r.topicId());
        ps.setObject(i++, r.partition() < 0 ? null : r.partition(), Types.INTEGER);
        ps.setString(i++, r.key());
        ps.setString(i++, r.type());
        ps.setString(i++, r.source());
        ps.setString(i++, r.contentType());
        ps.setBytes(i++, r.payload());
        ps.setString(i++, Headers.toJson(r.headers()));
        ps.setObject(i, MariaDbSql.microsOrNull(r.deliverAt()), Types.BIGINT);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /**
   * Inserts the keys that are new (a key another transaction holds waits for it, then counts as
   * taken); returns the owning event id of every key in the batch, by "topic/key".
   */
  private Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records)
      throws SQLException {
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement claim = tx.prepareStatement(sql("claim_idempotency_key"));
        PreparedStatement owner = tx.prepareStatement(sql("idempotency_owner"))) {
      for (OutboxRecord r : records) {
        if (r.idempotencyKey() == null) {
          continue;
        }
        String id = r.topicId() + "/" + r.idempotencyKey();
        if (owners.containsKey(id)) {
          continue; // the first record of the batch with this key owns it
        }
        claim.setLong(1, r.topicId());
        claim.setString(2, r.idempotencyKey());
        claim.setString(3, r.eventId().toString());
        if (H2Sql.insertIgnore(claim) == 1) {
          owners.put(id, r.eventId());
          continue;
        }
        owner.setLong(1, r.topicId());
        owner.setString(2, r.idempotencyKey());
        try (ResultSet rs = owner.executeQuery()) {
          owners.put(id, rs.next() ? MariaDbSql.uuid(rs.getString(1)) : null);
        }
      }
    }
    return owners;
  }

  /**
   * Nothing to add to the transaction: there is no NOTIFY. The sequencer's process finds the rows
   * with its wake-up poll (see {@link MariaDbPoller}).
   */
  @Override
  public void notifyOutbox(Connection tx) {}

  // ------------------------------------------------------------------ sequencer
  /** The sequencer's own connection: auto-commit off, READ COMMITTED. */
  private Connection sequencerConnection() throws SQLException {
    if (sequencerConnection == null) {
      Connection c = dataSource.getConnection();
      try {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        c.commit();
      } catch (SQLException | RuntimeException e) {
        JdbcSql.closeQuietly(c);
        throw e;
      }
      sequencerConnection = c;
    }
    return sequencerConnection;
  }

  private void closeSequencerConnection() {
    if (sequencerConnection != null) {
      Connection c = sequencerConnection;
      try {
        c.rollback();
      } catch (SQLException e) {
        try {
          c.abort(Runnable::run); // cannot reset it: make sure nobody reuses it
        } catch (SQLException | RuntimeException ignored) {
          // closing anyway
        }
      }
      JdbcSql.closeQuietly(c);
      sequencerConnection = null;
    }
  }

  /** Runs sequencer work on its connection; any failure discards the connection. */
  private <T> T onSequencerConnection(Duration ttl, String[] step, JdbcSql.Work<T> work) {
    synchronized (sequencerLock) {
      try {
        Connection c = sequencerConnection();
        try {
          T result = work.run(c);
          c.commit();
          return result;
        } catch (SQLException | RuntimeException e) {
          closeSequencerConnection();
          throw e;
        }
      } catch (SQLException e) {
        closeSequencerConnection();
        throw fail(step[0], e);
      }
    }
  }

  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    String[] step = {"try_sequencer"};
    return onSequencerConnection(
        ttl,
        step,
        c -> {
          boolean work;
          try (PreparedStatement ps = c.prepareStatement(sql("try_sequencer"))) {
            ps.setString(1, owner);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                return LeaseStatus.NOT_HELD;
              }
              work = rs.getBoolean(2);
            }
          }
          step[0] = "take_sequencer";
          try (PreparedStatement ps = c.prepareStatement(sql("take_sequencer"))) {
            ps.setString(1, owner);
            ps.setString(2, owner);
            ps.setLong(3, MariaDbSql.micros(ttl));
            ps.executeUpdate();
          }
          return work ? LeaseStatus.HELD_WITH_WORK : LeaseStatus.HELD_IDLE;
        });
  }

  @Override
  public void releaseSequencerLease(String owner) {
    synchronized (sequencerLock) {
      closeSequencerConnection();
    }
    db.update("release_sequencer", ps -> ps.setString(1, owner));
  }

  /** One outbox row taken by the sequencer (the payload stays in the server). */
  private record Taken(long outboxId, long topicId, int partition, String key) {}

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    String[] step = {"lock_sequencer"};
    return onSequencerConnection(
        ttl, step, c -> sequence(c, step, owner, ttl, maxEvents, assigner));
  }

  private SequencedBatch sequence(
      Connection c,
      String[] step,
      String owner,
      Duration ttl,
      int maxEvents,
      PartitionAssigner assigner)
      throws SQLException {
    long version;
    try (PreparedStatement ps = c.prepareStatement(sql("lock_sequencer"))) {
      ps.setLong(1, MariaDbSql.micros(ttl));
      ps.setString(2, owner);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return SequencedBatch.NOT_LEADER;
        }
        version = rs.getLong(1);
      }
    }
    step[0] = "take_outbox";
    List<Taken> taken = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql("take_outbox"))) {
      ps.setInt(1, maxEvents);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int partition = rs.getInt(3);
          if (rs.wasNull()) {
            partition = -1;
          }
          taken.add(new Taken(rs.getLong(1), rs.getLong(2), partition, rs.getString(4)));
        }
      }
    }
    if (taken.isEmpty()) {
      return SequencedBatch.EMPTY;
    }
    // Outbox order is publish order (the read is ordered by id; assignment keeps it).
    Map<PartitionKey, Integer> counts = new LinkedHashMap<>();
    int[] partitions = new int[taken.size()];
    for (int i = 0; i < taken.size(); i++) {
      Taken t = taken.get(i);
      int p = t.partition() >= 0 ? t.partition() : assigner.assign(t.topicId(), t.key());
      partitions[i] = p;
      counts.merge(PartitionKey.of(t.topicId(), p), 1, Integer::sum);
    }
    List<PartitionKey> keys = MariaDbSql.sorted(counts.keySet());
    step[0] = "lock_partition";
    Map<PartitionKey, Long> last = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql("lock_partition"))) {
      for (PartitionKey k : keys) {
        ps.setLong(1, k.topicId());
        ps.setInt(2, k.partition());
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            last.put(k, rs.getLong(1));
          }
        }
      }
    }
    if (last.size() != keys.size()) {
      throw new StoreException(
          "outbox holds events for a partition that does not exist (topic deleted or rows written by"
              + " hand?)",
          new SQLException("lock_partition matched " + last.size() + " of " + keys.size()));
    }
    Map<PartitionKey, Long> next = new HashMap<>();
    List<long[]> advanced = new ArrayList<>(keys.size());
    List<PartitionHead> heads = new ArrayList<>(keys.size());
    for (PartitionKey k : keys) {
      long from = last.get(k);
      long to = from + counts.get(k);
      next.put(k, from + 1);
      advanced.add(new long[] {k.topicId(), k.partition(), to});
      heads.add(new PartitionHead(k.topicId(), k.partition(), to));
    }
    step[0] = "advance_partition";
    try (PreparedStatement ps = c.prepareStatement(sql("advance_partition"))) {
      for (long[] a : advanced) {
        ps.setLong(1, a[2]);
        ps.setLong(2, version);
        ps.setLong(3, a[0]);
        ps.setInt(4, (int) a[1]);
        ps.addBatch();
      }
      ps.executeBatch();
    }
    List<long[]> rows = new ArrayList<>(taken.size());
    List<long[]> ids = new ArrayList<>(taken.size());
    for (int i = 0; i < taken.size(); i++) {
      Taken t = taken.get(i);
      PartitionKey k = PartitionKey.of(t.topicId(), partitions[i]);
      long seq = next.get(k);
      next.put(k, seq + 1);
      rows.add(new long[] {t.outboxId(), partitions[i], seq});
      ids.add(new long[] {t.outboxId()});
    }
    step[0] = "append_log";
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setObject(1, H2Sql.longs(rows, 0));
      ps.setObject(2, H2Sql.ints(rows, 1));
      ps.setObject(3, H2Sql.longs(rows, 2));
      int n = ps.executeUpdate();
      if (n != rows.size()) {
        throw new StoreException(
            "the sequencer appended " + n + " of " + rows.size() + " outbox rows",
            new SQLException("append_log count mismatch"));
      }
    }
    step[0] = "delete_outbox";
    try (PreparedStatement ps = c.prepareStatement(sql("delete_outbox"))) {
      ps.setObject(1, H2Sql.longs(ids, 0));
      ps.executeUpdate();
    }
    step[0] = "commit";
    return new SequencedBatch(true, taken.size(), heads);
  }

  // ------------------------------------------------------------------ consume
  @Override
  public long[] fenceCursors(
      long subscriptionId, List<PartitionKey> partitions, long[] epochs, String owner) {
    long[] positions = new long[partitions.size()];
    java.util.Arrays.fill(positions, -1);
    if (partitions.isEmpty()) {
      return positions;
    }
    Map<PartitionKey, Integer> index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      index.put(partitions.get(i), i);
    }
    List<long[]> rows = new ArrayList<>();
    for (PartitionKey k : MariaDbSql.sorted(partitions)) {
      rows.add(new long[] {k.topicId(), k.partition(), epochs[index.get(k)]});
    }
    return db.tx(
        "fence_cursors",
        c -> {
          try (PreparedStatement lock = c.prepareStatement(sql("fence_lock"));
              PreparedStatement fence = c.prepareStatement(sql("fence_cursor"))) {
            for (long[] r : rows) {
              PartitionKey k = PartitionKey.of(r[0], (int) r[1]);
              lock.setLong(1, subscriptionId);
              lock.setLong(2, r[0]);
              lock.setInt(3, (int) r[1]);
              lock.setLong(4, r[2]);
              try (ResultSet rs = lock.executeQuery()) {
                if (!rs.next()) {
                  continue; // already at this epoch or beyond
                }
                positions[index.get(k)] = rs.getLong(1);
              }
              fence.setLong(1, r[2]);
              fence.setString(2, owner);
              fence.setLong(3, subscriptionId);
              fence.setLong(4, r[0]);
              fence.setInt(5, (int) r[1]);
              fence.setLong(6, r[2]);
              fence.executeUpdate();
            }
          }
          return positions;
        });
  }

  @Override
  public CoordinationStore coordination() {
    return coordination;
  }

  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    return db.list(
        "backlogged",
        ps -> ps.setLong(1, subscriptionId),
        rs -> new Backlog(rs.getLong(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4)));
  }

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
            new StoredEvent(
                MariaDbSql.uuid(rs.getString(2)),
                rs.getLong(1),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                rs.getBytes(7),
                Headers.fromJson(rs.getString(8)),
                MariaDbSql.instant(rs.getLong(9)),
                MariaDbSql.instant(rs, 10)));
  }

  @Override
  public boolean commitCursor(
      long subscriptionId, long topicId, int partition, long position, long epoch) {
    return db.update(
            "commit_cursor",
            ps -> {
              ps.setLong(1, position);
              ps.setLong(2, subscriptionId);
              ps.setLong(3, topicId);
              ps.setInt(4, partition);
              ps.setLong(5, epoch);
            })
        == 1;
  }

  // ------------------------------------------------------------------ parked events
  @Override
  public Connection openFenced(long subscriptionId, PartitionKey partition, long epoch) {
    Connection c = openTransaction();
    try {
      try (PreparedStatement ps = c.prepareStatement(sql("lock_cursor"))) {
        ps.setLong(1, subscriptionId);
        ps.setLong(2, partition.topicId());
        ps.setInt(3, partition.partition());
        ps.setLong(4, epoch);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return c;
          }
        }
      }
      c.rollback();
      c.close();
      return null;
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
      try {
        tx.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw fail(step, e);
    } finally {
      JdbcSql.closeQuietly(tx);
    }
  }

  @Override
  public boolean commitBatch(
      long subscriptionId, PartitionKey partition, long position, long epoch, List<Park> parks) {
    if (parks.isEmpty()) {
      return commitCursor(
          subscriptionId, partition.topicId(), partition.partition(), position, epoch);
    }
    return db.tx(
        "park",
        c -> {
          // The cursor first: it locks the row at our epoch, or tells us we were fenced.
          try (PreparedStatement ps = c.prepareStatement(sql("commit_cursor"))) {
            ps.setLong(1, position);
            ps.setLong(2, subscriptionId);
            ps.setLong(3, partition.topicId());
            ps.setInt(4, partition.partition());
            ps.setLong(5, epoch);
            if (ps.executeUpdate() != 1) {
              c.rollback(); // fenced: park nothing
              return false;
            }
          }
          parking.insertParks(c, subscriptionId, partition, parks);
          return true;
        });
  }

  @Override
  public void finishParkedFenced(
      Connection tx, long subscriptionId, PartitionKey partition, long seq) {
    parking.finishParkedFenced(tx, subscriptionId, partition, seq);
  }

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
    parking.inboxRecord(subscriptionId, key);
  }

  @Override
  public void setRetention(long topicId, io.boxline.RetentionPolicy policy) {
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
    int n = parking.redriveDeadLetters(subscriptionId, q);
    MariaDbPoller local;
    synchronized (this) {
      local = poller;
    }
    if (n > 0 && local != null) {
      local.wakeAllLocally(); // other processes see wake_all at their next poll
    }
    return n;
  }

  @Override
  public int discardDeadLetters(long subscriptionId, DeadLetterQuery q) {
    return parking.discardDeadLetters(subscriptionId, q);
  }

  // ------------------------------------------------------------------ wake-ups
  /** Starts the adaptive wake-up poll (H2 has no LISTEN/NOTIFY). */
  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (poller == null) {
      poller =
          new MariaDbPoller(
              db, "boxline-listener-" + schema + prefix, wakeups, fastestPoll, slowestPoll);
      poller.start();
    }
    return true;
  }

  /** Statements the wake-up poll has run, for measuring its cost. */
  public synchronized long pollStatements() {
    return poller == null ? 0 : poller.statements();
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.stop();
      poller = null;
    }
    synchronized (sequencerLock) {
      closeSequencerConnection();
    }
    LOG.log(System.Logger.Level.DEBUG, "closed {0}", description);
  }
}
