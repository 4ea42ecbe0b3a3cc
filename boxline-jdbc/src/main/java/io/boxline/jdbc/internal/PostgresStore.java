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
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The PostgreSQL dialect. Multi-row writes go through {@code unnest} of arrays, so a batch of any
 * size is one round trip; wake-ups use LISTEN/NOTIFY, sent by the sequencer once per batch (and by
 * remote publishers at a bounded rate), never by every producer transaction.
 */
public final class PostgresStore implements Store {
  private final DataSource dataSource;
  private final String schema;
  private final String prefix;
  private final String description;
  private final Map<String, String> q;
  final String outboxChannel;
  final String logChannel;
  private final PostgresCoordination coordination;
  private final PostgresParking parking;
  private final JdbcSql db;
  private final boolean vacuumWhenAutovacuumOff;
  private volatile PostgresListener listener;
  private final IdleConnection idle;
  private static final System.Logger LOG = System.getLogger(PostgresStore.class.getName());

  public PostgresStore(DataSource dataSource, String schema, String prefix, String version) {
    this(dataSource, schema, prefix, version, true);
  }

  public PostgresStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      boolean vacuumWhenAutovacuumOff) {
    this.dataSource = dataSource;
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    this.schema = schema;
    this.prefix = prefix;
    this.description =
        version + " schema=" + schema + (prefix.isEmpty() ? "" : " prefix=" + prefix);
    this.q = SqlScript.named("postgresql", schema, prefix);
    this.outboxChannel = schema + "_" + prefix + "outbox";
    this.logChannel = schema + "_" + prefix + "log";
    this.idle = new IdleConnection(dataSource);
    this.coordination = new PostgresCoordination(dataSource, q, description, idle);
    this.db = new JdbcSql(dataSource, q);
    this.parking =
        new PostgresParking(
            db,
            name -> findTopic(name).map(TopicInfo::id).orElse(-1L),
            logChannel,
            vacuumWhenAutovacuumOff);
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

  private Connection connect() throws SQLException {
    return db.connect();
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

  private <T> T tx(String name, JdbcSql.Work<T> work) {
    return db.tx(name, work);
  }

  // ------------------------------------------------------------------ migrations
  @Override
  public void migrate() {
    tx(
        "migrate",
        c -> {
          try (PreparedStatement lock = c.prepareStatement(sql("lock_migrations"))) {
            lock.setLong(1, ("boxline:" + schema + "." + prefix).hashCode());
            lock.execute();
          }
          try (Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            st.execute(sql("create_version_table"));
          }
          int current;
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery(sql("current_version"))) {
            rs.next();
            current = rs.getInt(1);
          }
          List<String> migrations = SqlScript.POSTGRES_MIGRATIONS;
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
            try (Statement st = c.createStatement()) {
              st.execute(SqlScript.load("postgresql", file, schema, prefix));
            }
            try (PreparedStatement ps = c.prepareStatement(sql("record_version"))) {
              ps.setInt(1, v);
              ps.setString(2, file);
              ps.executeUpdate();
            }
          }
          return null;
        });
    if (!parking.autovacuumOn()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "autovacuum is off on this PostgreSQL server: Boxline's outbox, log and coordination"
              + " tables only shrink when vacuumed. "
              + (vacuumWhenAutovacuumOff
                  ? "Boxline's retention loop vacuums them after each run; turn autovacuum on for"
                      + " steadier sizes."
                  : "vacuumWhenAutovacuumOff is false, so vacuum them yourself or turn autovacuum"
                      + " on."));
    }
  }

  // ------------------------------------------------------------------ admin
  @Override
  public void createNamespace(NamespacePath namespace) {
    tx(
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
              ps.executeUpdate();
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
    return tx(
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
          try (PreparedStatement ps = c.prepareStatement(sql("insert_topic"))) {
            ps.setLong(1, ns);
            ps.setString(2, topic.name());
            ps.setInt(3, partitions);
            try (ResultSet rs = ps.executeQuery()) {
              if (rs.next()) {
                id = rs.getLong(1);
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
        rs.getTimestamp(5).toInstant());
  }

  @Override
  public Optional<TopicInfo> findTopic(TopicName topic) {
    try (Connection c = connect()) {
      return topicByName(c, topic);
    } catch (SQLException e) {
      throw fail("topic_by_name", e);
    }
  }

  @Override
  public Optional<TopicInfo> findTopic(long topicId) {
    return db.one("topic_by_id", ps -> ps.setLong(1, topicId), PostgresStore::topic);
  }

  @Override
  public List<TopicInfo> topics() {
    return db.list("all_topics", ps -> {}, PostgresStore::topic);
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    return tx(
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
          try (PreparedStatement ps = c.prepareStatement(sql("insert_subscription"))) {
            ps.setString(1, spec.name());
            try (ResultSet rs = ps.executeQuery()) {
              if (rs.next()) {
                id = rs.getLong(1);
              }
            }
          }
          if (id == null) {
            SubscriptionInfo existing = subscription(c, spec.name()).orElseThrow();
            if (!new java.util.HashSet<>(existing.topics())
                .equals(new java.util.HashSet<>(spec.topics()))) {
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
                  ps.setTimestamp(2, Timestamp.from(start.timestamp()));
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
        created = rs.getTimestamp(2).toInstant();
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
    try (Connection c = connect()) {
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
                JdbcSql.instant(rs.getTimestamp(6))));
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
                        JdbcSql.instant(rs.getTimestamp(7)))))
        .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
    out.replaceAll((k, v) -> List.copyOf(v));
    return out;
  }

  @Override
  public io.boxline.OutboxBacklog outboxBacklog() {
    return db.one(
            "outbox_backlog",
            ps -> {},
            rs -> new io.boxline.OutboxBacklog(rs.getLong(1), JdbcSql.instant(rs.getTimestamp(2))))
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
      if (toStore.size() == 1) {
        step = "append_one";
        OutboxRecord r = toStore.get(0);
        try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
          ps.setObject(1, r.eventId());
          ps.setLong(2, r.topicId());
          ps.setInt(3, r.partition());
          ps.setString(4, r.key());
          ps.setString(5, r.type());
          ps.setString(6, r.source());
          ps.setString(7, r.contentType());
          ps.setBytes(8, r.payload());
          ps.setString(9, Headers.toJson(r.headers()));
          ps.setTimestamp(10, r.deliverAt() == null ? null : Timestamp.from(r.deliverAt()));
          ps.executeUpdate();
        }
      } else if (!toStore.isEmpty()) {
        step = "append_many";
        int n = toStore.size();
        UUID[] ids = new UUID[n];
        Long[] topics = new Long[n];
        Integer[] parts = new Integer[n];
        String[] keys = new String[n];
        String[] types = new String[n];
        String[] sources = new String[n];
        String[] contentTypes = new String[n];
        byte[][] payloads = new byte[n][];
        String[] headers = new String[n];
        Timestamp[] deliverAt = new Timestamp[n];
        for (int i = 0; i < n; i++) {
          OutboxRecord r = toStore.get(i);
          deliverAt[i] = r.deliverAt() == null ? null : Timestamp.from(r.deliverAt());
          ids[i] = r.eventId();
          topics[i] = r.topicId();
          parts[i] = r.partition();
          keys[i] = r.key();
          types[i] = r.type();
          sources[i] = r.source();
          contentTypes[i] = r.contentType();
          payloads[i] = r.payload();
          headers[i] = Headers.toJson(r.headers());
        }
        try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
          ps.setArray(1, tx.createArrayOf("uuid", ids));
          ps.setArray(2, tx.createArrayOf("bigint", topics));
          ps.setArray(3, tx.createArrayOf("integer", parts));
          ps.setArray(4, tx.createArrayOf("text", keys));
          ps.setArray(5, tx.createArrayOf("text", types));
          ps.setArray(6, tx.createArrayOf("text", sources));
          ps.setArray(7, tx.createArrayOf("text", contentTypes));
          ps.setObject(8, payloads);
          ps.setArray(9, tx.createArrayOf("text", headers));
          ps.setArray(10, tx.createArrayOf("timestamptz", deliverAt));
          ps.executeUpdate();
        }
      }
      return existing;
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  /** Inserts the keys that are new; returns the owning event id of every key in the batch. */
  private Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records)
      throws SQLException {
    List<Long> topics = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    List<UUID> ids = new ArrayList<>();
    for (OutboxRecord r : records) {
      if (r.idempotencyKey() != null) {
        topics.add(r.topicId());
        keys.add(r.idempotencyKey());
        ids.add(r.eventId());
      }
    }
    Array topicArray = tx.createArrayOf("bigint", topics.toArray());
    Array keyArray = tx.createArrayOf("text", keys.toArray());
    try (PreparedStatement ps = tx.prepareStatement(sql("claim_idempotency_keys"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      ps.setArray(3, tx.createArrayOf("uuid", ids.toArray()));
      ps.executeUpdate();
    }
    Map<String, UUID> owners = new HashMap<>();
    try (PreparedStatement ps = tx.prepareStatement(sql("idempotency_owners"))) {
      ps.setArray(1, topicArray);
      ps.setArray(2, keyArray);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          owners.put(rs.getLong(1) + "/" + rs.getString(2), rs.getObject(3, UUID.class));
        }
      }
    }
    return owners;
  }

  @Override
  public void notifyOutbox(Connection tx) {
    try (PreparedStatement ps = tx.prepareStatement(sql("notify"))) {
      ps.setString(1, outboxChannel);
      ps.setString(2, "");
      ps.execute();
    } catch (SQLException e) {
      throw fail("notify", e);
    }
  }

  // ------------------------------------------------------------------ sequencer
  @Override
  public LeaseStatus acquireSequencerLease(String owner, Duration ttl) {
    try (Connection c = idle.borrow();
        PreparedStatement ps = c.prepareStatement(sql("acquire_sequencer"))) {
      ps.setString(1, owner);
      ps.setString(2, owner);
      ps.setDouble(3, ttl.toMillis() / 1000.0);
      ps.setString(4, owner);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return LeaseStatus.NOT_HELD;
        }
        return rs.getBoolean(1) ? LeaseStatus.HELD_WITH_WORK : LeaseStatus.HELD_IDLE;
      }
    } catch (SQLException e) {
      throw fail("acquire_sequencer", e);
    }
  }

  @Override
  public void releaseSequencerLease(String owner) {
    db.update("release_sequencer", ps -> ps.setString(1, owner));
  }

  /** One outbox row taken by the sequencer. */
  private record Taken(
      long outboxId,
      UUID eventId,
      long topicId,
      int partition,
      String key,
      String type,
      String source,
      String contentType,
      byte[] payload,
      String headers,
      Timestamp createdAt,
      Timestamp deliverAt) {}

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    return sequence(owner, ttl, maxEvents, assigner, false);
  }

  @Override
  public SequencedBatch sequence(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner, boolean returnEvents) {
    SequencedBatch fast = sequenceInOneStatement(owner, ttl, maxEvents, returnEvents);
    if (fast != null) {
      return fast;
    }
    return sequenceInSteps(owner, ttl, maxEvents, assigner);
  }

  /**
   * The common case in one round trip: the whole batch is one auto-commit statement. Returns null
   * when the oldest outbox row has no partition yet (published from SQL): the Java partitioner must
   * assign it, so that batch goes through {@link #sequenceInSteps}.
   */
  private SequencedBatch sequenceInOneStatement(
      String owner, Duration ttl, int maxEvents, boolean returnEvents) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("sequence_batch"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setInt(3, maxEvents);
      ps.setString(4, logChannel);
      ps.setInt(5, PostgresListener.MAX_PAYLOAD);
      ps.setBoolean(6, returnEvents);
      boolean leased = false;
      int taken = 0;
      boolean unassigned = false;
      String heads = null;
      Map<PartitionKey, List<StoredEvent>> appended = new HashMap<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (rs.getInt(1) == 0) {
            leased = rs.getBoolean(2);
            taken = rs.getInt(3);
            unassigned = rs.getBoolean(4);
            heads = rs.getString(5);
          } else {
            appended
                .computeIfAbsent(
                    PartitionKey.of(rs.getLong(8), rs.getInt(9)), k -> new ArrayList<>())
                .add(
                    new StoredEvent(
                        rs.getObject(11, UUID.class),
                        rs.getLong(10),
                        rs.getString(12),
                        rs.getString(13),
                        rs.getString(14),
                        rs.getString(15),
                        rs.getBytes(16),
                        Headers.fromJson(rs.getString(17)),
                        rs.getTimestamp(18).toInstant(),
                        JdbcSql.instant(rs.getTimestamp(19))));
          }
        }
      }
      if (!leased) {
        return SequencedBatch.NOT_LEADER;
      }
      if (taken == 0) {
        return unassigned ? null : SequencedBatch.EMPTY;
      }
      for (List<StoredEvent> run : appended.values()) {
        run.sort(Comparator.comparingLong(StoredEvent::sequence));
      }
      return new SequencedBatch(true, taken, heads(heads), appended);
    } catch (SQLException e) {
      throw fail("sequence_batch", e);
    }
  }

  private static List<PartitionHead> heads(String list) {
    List<PartitionHead> heads = PostgresListener.decodeHeads(list);
    return heads == null ? List.of() : heads;
  }

  private SequencedBatch sequenceInSteps(
      String owner, Duration ttl, int maxEvents, PartitionAssigner assigner) {
    String[] step = {"lock_sequencer"};
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        SequencedBatch result = sequence(c, step, owner, ttl, maxEvents, assigner);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw fail(step[0], e);
    }
  }

  private SequencedBatch sequence(
      Connection c,
      String[] step,
      String owner,
      Duration ttl,
      int maxEvents,
      PartitionAssigner assigner)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("lock_sequencer"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setString(3, Long.toString(ttl.toMillis()));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return SequencedBatch.NOT_LEADER;
        }
      }
    }
    step[0] = "take_outbox";
    List<Taken> taken = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql("take_outbox"))) {
      ps.setInt(1, maxEvents);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long topicId = rs.getLong(3);
          int partition = rs.getInt(4);
          if (rs.wasNull()) {
            partition = -1;
          }
          String key = rs.getString(5);
          taken.add(
              new Taken(
                  rs.getLong(1),
                  rs.getObject(2, UUID.class),
                  topicId,
                  partition,
                  key,
                  rs.getString(6),
                  rs.getString(7),
                  rs.getString(8),
                  rs.getBytes(9),
                  rs.getString(10),
                  rs.getTimestamp(11),
                  rs.getTimestamp(12)));
        }
      }
    }
    if (taken.isEmpty()) {
      return SequencedBatch.EMPTY;
    }
    // Outbox order is publish order; DELETE ... RETURNING does not promise any order.
    taken.sort((a, b) -> Long.compare(a.outboxId(), b.outboxId()));
    Map<Long, Integer> counts = new LinkedHashMap<>();
    int[] partitions = new int[taken.size()];
    for (int i = 0; i < taken.size(); i++) {
      Taken t = taken.get(i);
      int p = t.partition() >= 0 ? t.partition() : assigner.assign(t.topicId(), t.key());
      partitions[i] = p;
      counts.merge(headKey(t.topicId(), p), 1, Integer::sum);
    }
    step[0] = "advance_partitions";
    int groups = counts.size();
    Long[] gTopics = new Long[groups];
    Integer[] gParts = new Integer[groups];
    Long[] gCounts = new Long[groups];
    int g = 0;
    for (Map.Entry<Long, Integer> e : counts.entrySet()) {
      gTopics[g] = e.getKey() >>> 17;
      gParts[g] = (int) (e.getKey() & 0x1ffff);
      gCounts[g] = (long) e.getValue();
      g++;
    }
    Map<Long, Long> next = new HashMap<>();
    List<PartitionHead> heads = new ArrayList<>(groups);
    try (PreparedStatement ps = c.prepareStatement(sql("advance_partitions"))) {
      ps.setArray(1, c.createArrayOf("bigint", gTopics));
      ps.setArray(2, c.createArrayOf("integer", gParts));
      ps.setArray(3, c.createArrayOf("bigint", gCounts));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long topicId = rs.getLong(1);
          int partition = rs.getInt(2);
          long last = rs.getLong(3);
          long k = headKey(topicId, partition);
          next.put(k, last - counts.get(k) + 1);
          heads.add(new PartitionHead(topicId, partition, last));
        }
      }
    }
    if (next.size() != groups) {
      throw new StoreException(
          "outbox holds events for a partition that does not exist (topic deleted or rows written by"
              + " hand?)",
          new SQLException("advance_partitions matched " + next.size() + " of " + groups));
    }
    step[0] = "append_log";
    int n = taken.size();
    Long[] topics = new Long[n];
    Integer[] parts = new Integer[n];
    Long[] seqs = new Long[n];
    UUID[] ids = new UUID[n];
    String[] keys = new String[n];
    String[] types = new String[n];
    String[] sources = new String[n];
    String[] contentTypes = new String[n];
    byte[][] payloads = new byte[n][];
    String[] headers = new String[n];
    Timestamp[] created = new Timestamp[n];
    Timestamp[] deliver = new Timestamp[n];
    for (int i = 0; i < n; i++) {
      Taken t = taken.get(i);
      long k = headKey(t.topicId(), partitions[i]);
      long seq = next.get(k);
      next.put(k, seq + 1);
      topics[i] = t.topicId();
      parts[i] = partitions[i];
      seqs[i] = seq;
      ids[i] = t.eventId();
      keys[i] = t.key();
      types[i] = t.type();
      sources[i] = t.source();
      contentTypes[i] = t.contentType();
      payloads[i] = t.payload();
      headers[i] = t.headers();
      created[i] = t.createdAt();
      deliver[i] = t.deliverAt();
    }
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setArray(1, c.createArrayOf("bigint", topics));
      ps.setArray(2, c.createArrayOf("integer", parts));
      ps.setArray(3, c.createArrayOf("bigint", seqs));
      ps.setArray(4, c.createArrayOf("uuid", ids));
      ps.setArray(5, c.createArrayOf("text", keys));
      ps.setArray(6, c.createArrayOf("text", types));
      ps.setArray(7, c.createArrayOf("text", sources));
      ps.setArray(8, c.createArrayOf("text", contentTypes));
      ps.setObject(9, payloads);
      ps.setArray(10, c.createArrayOf("text", headers));
      ps.setArray(11, c.createArrayOf("timestamptz", created));
      ps.setArray(12, c.createArrayOf("timestamptz", deliver));
      ps.executeUpdate();
    }
    step[0] = "notify";
    try (PreparedStatement ps = c.prepareStatement(sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    }
    return new SequencedBatch(true, n, heads);
  }

  private static long headKey(long topicId, int partition) {
    return (topicId << 17) | partition;
  }

  // ------------------------------------------------------------------ consume
  @Override
  public long[] fenceCursors(
      long subscriptionId, List<PartitionKey> partitions, long[] epochs, String owner) {
    long[] positions = new long[partitions.size()];
    java.util.Arrays.fill(positions, -1);
    Long[] topics = new Long[partitions.size()];
    Integer[] parts = new Integer[partitions.size()];
    Long[] eps = new Long[partitions.size()];
    Map<PartitionKey, Integer> index = new HashMap<>();
    for (int i = 0; i < partitions.size(); i++) {
      PartitionKey k = partitions.get(i);
      topics[i] = k.topicId();
      parts[i] = k.partition();
      eps[i] = epochs[i];
      index.put(k, i);
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("fence_cursors"))) {
      ps.setString(1, owner);
      ps.setArray(2, c.createArrayOf("bigint", topics));
      ps.setArray(3, c.createArrayOf("integer", parts));
      ps.setArray(4, c.createArrayOf("bigint", eps));
      ps.setLong(5, subscriptionId);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Integer i = index.get(PartitionKey.of(rs.getLong(1), rs.getInt(2)));
          if (i != null) {
            positions[i] = rs.getLong(3);
          }
        }
      }
      return positions;
    } catch (SQLException e) {
      throw fail("fence_cursors", e);
    }
  }

  @Override
  public CoordinationStore coordination() {
    return coordination;
  }

  @Override
  public List<Backlog> backlogged(long subscriptionId) {
    try (Connection c = idle.borrow()) {
      return db.list(
          c,
          "backlogged",
          ps -> ps.setLong(1, subscriptionId),
          rs -> new Backlog(rs.getLong(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4)));
    } catch (SQLException e) {
      throw fail("backlogged", e);
    }
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
                rs.getObject(2, UUID.class),
                rs.getLong(1),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                rs.getBytes(7),
                Headers.fromJson(rs.getString(8)),
                rs.getTimestamp(9).toInstant(),
                JdbcSql.instant(rs.getTimestamp(10))));
  }

  @Override
  public boolean commitCursor(
      long subscriptionId, long topicId, int partition, long position, long epoch) {
    return db.list(
                "commit_cursor",
                ps -> {
                  ps.setLong(1, position);
                  ps.setLong(2, subscriptionId);
                  ps.setLong(3, topicId);
                  ps.setInt(4, partition);
                  ps.setLong(5, epoch);
                },
                rs -> Boolean.TRUE)
            .size()
        == 1;
  }

  @Override
  public CommitOutcome commitBatchIfLogHolds(
      long subscriptionId,
      PartitionKey partition,
      long position,
      long epoch,
      List<Park> parks,
      long[] sequences,
      UUID[] eventIds) {
    if (parks.isEmpty()) {
      try (Connection c = connect()) { // one auto-commit statement, as for commitCursor
        return commitIfLogHolds(c, subscriptionId, partition, position, epoch, sequences, eventIds);
      } catch (SQLException e) {
        throw fail("commit_cursor_if_log_holds", e);
      }
    }
    return tx(
        "commit_cursor_if_log_holds",
        c -> {
          parking.insertParks(c, subscriptionId, partition, parks);
          CommitOutcome outcome =
              commitIfLogHolds(c, subscriptionId, partition, position, epoch, sequences, eventIds);
          if (outcome != CommitOutcome.COMMITTED) {
            c.rollback(); // park nothing
          }
          return outcome;
        });
  }

  private CommitOutcome commitIfLogHolds(
      Connection c,
      long subscriptionId,
      PartitionKey partition,
      long position,
      long epoch,
      long[] sequences,
      UUID[] eventIds)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql("commit_cursor_if_log_holds"))) {
      long first = sequences[0];
      long last = sequences[sequences.length - 1];
      if (last - first + 1 != sequences.length) {
        throw new IllegalArgumentException(
            "handed-over events must have consecutive sequences: " + first + ".." + last);
      }
      ps.setLong(1, last);
      ps.setLong(2, first);
      ps.setLong(3, partition.topicId());
      ps.setInt(4, partition.partition());
      ps.setLong(5, first);
      ps.setLong(6, last);
      ps.setArray(7, c.createArrayOf("uuid", eventIds));
      ps.setLong(8, first);
      ps.setLong(9, position);
      ps.setLong(10, subscriptionId);
      ps.setLong(11, partition.topicId());
      ps.setInt(12, partition.partition());
      ps.setLong(13, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return !rs.getBoolean(1)
            ? CommitOutcome.LOG_CHANGED
            : rs.getBoolean(2) ? CommitOutcome.COMMITTED : CommitOutcome.FENCED;
      }
    }
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
    return tx(
        "park",
        c -> {
          parking.insertParks(c, subscriptionId, partition, parks);
          try (PreparedStatement ps = c.prepareStatement(sql("commit_cursor"))) {
            ps.setLong(1, position);
            ps.setLong(2, subscriptionId);
            ps.setLong(3, partition.topicId());
            ps.setInt(4, partition.partition());
            ps.setLong(5, epoch);
            int moved = 0;
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                moved++;
              }
            }
            if (moved != 1) {
              c.rollback(); // fenced: park nothing
              return false;
            }
          }
          return true;
        });
  }

  // ------------------------------------------------------------------ parked events, inbox,
  // retention
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
  public io.boxline.spi.PurgeResult purge(
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
    return parking.resolveParked(subscriptionId, partition, seq, epoch, resolution);
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

  // ------------------------------------------------------------------ wake-ups
  @Override
  public synchronized boolean listen(WakeupListener wakeups) {
    if (listener == null) {
      listener = new PostgresListener(dataSource, outboxChannel, logChannel, wakeups);
      listener.start();
    }
    return true;
  }

  @Override
  public synchronized void close() {
    if (listener != null) {
      listener.stop();
      listener = null;
    }
    idle.close();
  }
}
