package io.boxline.jdbc.internal;

import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The catalog on every dialect: namespaces, topics and subscriptions (creating is idempotent and
 * refuses what exists with other settings), rewinding a subscription's cursors, and the lag and
 * outbox backlog that observers read.
 */
final class SqlCatalog {
  private final JdbcSql db;
  private final SqlDialect dialect;

  SqlCatalog(JdbcSql db, SqlDialect dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  void createNamespace(NamespacePath namespace) {
    db.tx(
        "insert_namespace",
        c -> {
          List<NamespacePath> chain = new ArrayList<>();
          for (NamespacePath n = namespace; n != null; n = n.parent()) {
            chain.add(0, n);
          }
          Long parent = null;
          for (NamespacePath n : chain) {
            try (PreparedStatement ps = c.prepareStatement(db.sql("insert_namespace"))) {
              ps.setString(1, n.toString());
              ps.setObject(2, parent, Types.BIGINT);
              dialect.insertUnlessPresent(ps);
            }
            parent = namespaceId(c, n.toString());
          }
          return null;
        });
  }

  private Long namespaceId(Connection c, String path) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("namespace_id"))) {
      ps.setString(1, path);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  TopicInfo createTopic(TopicName topic, int partitions) {
    return createTopic(topic, partitions, Sequencing.SEQUENCER);
  }

  TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    io.boxline.spi.CatalogStore.requirePartitions(topic, partitions);
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
              dialect.insertReturningId(
                  c,
                  db.sql("insert_topic"),
                  ps -> {
                    ps.setLong(1, ns);
                    ps.setString(2, topic.name());
                    ps.setInt(3, partitions);
                    ps.setString(4, sequencing.name());
                  });
          if (id != null) {
            try (PreparedStatement ps = c.prepareStatement(db.sql("insert_partitions"))) {
              ps.setLong(1, id);
              dialect.bindPartitionNumbers(ps, 2, partitions);
              ps.executeUpdate();
            }
          }
          TopicInfo t = topicByName(c, topic).orElseThrow();
          return io.boxline.spi.CatalogStore.requireSameTopic(t, partitions, sequencing);
        });
  }

  private Optional<TopicInfo> topicByName(Connection c, TopicName topic) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(db.sql("topic_by_name"))) {
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
        dialect.instant(rs, 5),
        Sequencing.valueOf(rs.getString(6)));
  }

  Optional<TopicInfo> findTopic(TopicName topic) {
    return db.on("topic_by_name", c -> topicByName(c, topic));
  }

  Optional<TopicInfo> findTopic(long topicId) {
    return db.one("topic_by_id", ps -> ps.setLong(1, topicId), this::topic);
  }

  List<TopicInfo> topics() {
    return db.list("all_topics", ps -> {}, this::topic);
  }

  SubscriptionInfo createSubscription(SubscriptionSpec spec) {
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
          Long id =
              dialect.insertReturningId(
                  c,
                  db.sql("insert_subscription"),
                  ps -> {
                    ps.setString(1, spec.name());
                    ps.setString(2, spec.start().kind().name());
                    dialect.bindInstant(ps, 3, spec.start().timestamp());
                  });
          if (id == null) {
            SubscriptionInfo existing = subscription(c, spec.name()).orElseThrow();
            io.boxline.spi.CatalogStore.requireSameTopics(existing, spec);
            return existing;
          }
          for (TopicInfo t : topics) {
            try (PreparedStatement ps = c.prepareStatement(db.sql("insert_subscription_topic"))) {
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
                        db.sql(
                            start.kind() == StartPosition.Kind.EARLIEST
                                ? "insert_cursors_earliest"
                                : "insert_cursors_latest"))) {
                  ps.setLong(1, id);
                  ps.setLong(2, t.id());
                  ps.executeUpdate();
                }
                break;
              case TIMESTAMP:
                try (PreparedStatement ps = c.prepareStatement(db.sql("insert_cursors_at"))) {
                  ps.setLong(1, id);
                  dialect.bindInstant(ps, 2, start.timestamp());
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

  int rewindCursors(long subscriptionId, StartPosition to) {
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
          try (PreparedStatement ps = c.prepareStatement(db.sql(statement))) {
            int at = 1;
            if (to.kind() == StartPosition.Kind.TIMESTAMP) {
              dialect.bindInstant(ps, at++, to.timestamp());
            }
            ps.setLong(at, subscriptionId);
            cursors = ps.executeUpdate();
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("unpark_after_cursors"))) {
            ps.setLong(1, subscriptionId);
            ps.executeUpdate();
          }
          return cursors;
        });
  }

  int seekCursors(long subscriptionId, java.util.Map<io.boxline.spi.PartitionKey, Long> positions) {
    return db.tx(
        "seek_cursor",
        c -> {
          int cursors = 0;
          try (PreparedStatement ps = c.prepareStatement(db.sql("seek_cursor"))) {
            for (var e : positions.entrySet()) {
              ps.setLong(1, e.getValue());
              ps.setLong(2, subscriptionId);
              ps.setLong(3, e.getKey().topicId());
              ps.setInt(4, e.getKey().partition());
              cursors += ps.executeUpdate();
            }
          }
          try (PreparedStatement ps = c.prepareStatement(db.sql("unpark_after_cursors"))) {
            ps.setLong(1, subscriptionId);
            ps.executeUpdate();
          }
          return cursors;
        });
  }

  private Optional<SubscriptionInfo> subscription(Connection c, String name) throws SQLException {
    long id;
    Instant created;
    StartPosition start;
    Instant active;
    try (PreparedStatement ps = c.prepareStatement(db.sql("subscription_by_name"))) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        id = rs.getLong(1);
        created = dialect.instant(rs, 2);
        start = start(rs, 3);
        active = dialect.instant(rs, 5);
      }
    }
    List<TopicName> topics = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(db.sql("subscription_topics"))) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          topics.add(TopicName.of(rs.getString(1), rs.getString(2)));
        }
      }
    }
    return Optional.of(new SubscriptionInfo(name, id, List.copyOf(topics), created, start, active));
  }

  /** The start position in columns {@code at} (kind) and {@code at + 1} (time); null if unknown. */
  private StartPosition start(ResultSet rs, int at) throws SQLException {
    String kind = rs.getString(at);
    return kind == null
        ? null
        : StartPosition.of(StartPosition.Kind.valueOf(kind), dialect.instant(rs, at + 1));
  }

  /** Stamps the subscriptions as having a live consumer now (database clock). */
  void markActive(java.util.Collection<Long> ids) {
    if (ids.isEmpty()) {
      return;
    }
    db.tx(
        "mark_active",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("mark_active"))) {
            for (long id : ids) {
              ps.setLong(1, id);
              ps.addBatch();
            }
            ps.executeBatch();
          }
          return null;
        });
  }

  Optional<SubscriptionInfo> findSubscription(String name) {
    return db.on("subscription_by_name", c -> subscription(c, name));
  }

  List<PartitionLag> lag(long subscriptionId) {
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

  List<PartitionLag> lagWithAge(long subscriptionId) {
    return db.list(
        "lag_with_age",
        ps -> ps.setLong(1, subscriptionId),
        rs ->
            new PartitionLag(
                TopicName.of(rs.getString(1), rs.getString(2)),
                rs.getInt(3),
                rs.getLong(4),
                rs.getLong(5),
                dialect.instant(rs, 6)));
  }

  Map<String, List<PartitionLag>> lagBySubscription() {
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
                        dialect.instant(rs, 7))))
        .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue()));
    out.replaceAll((k, v) -> List.copyOf(v));
    return out;
  }

  OutboxBacklog outboxBacklog() {
    return db.one(
            "outbox_backlog",
            ps -> {},
            rs -> new OutboxBacklog(rs.getLong(1), dialect.instant(rs, 2)))
        .orElseThrow();
  }

  // ------------------------------------------------------------------ listing and deleting
  List<NamespacePath> namespaces() {
    return db.list("all_namespaces", ps -> {}, rs -> NamespacePath.of(rs.getString(1)));
  }

  List<SubscriptionInfo> subscriptions() {
    Map<Long, SubscriptionInfo> byId = new LinkedHashMap<>();
    Map<Long, List<TopicName>> topics = new LinkedHashMap<>();
    db.list(
        "all_subscriptions",
        ps -> {},
        rs -> {
          long id = rs.getLong(1);
          if (!byId.containsKey(id)) {
            byId.put(
                id,
                new SubscriptionInfo(
                    rs.getString(2),
                    id,
                    List.of(),
                    dialect.instant(rs, 3),
                    start(rs, 6),
                    dialect.instant(rs, 8)));
            topics.put(id, new ArrayList<>());
          }
          String namespace = rs.getString(4);
          if (namespace != null) {
            topics.get(id).add(TopicName.of(namespace, rs.getString(5)));
          }
          return id;
        });
    List<SubscriptionInfo> out = new ArrayList<>(byId.size());
    byId.forEach(
        (id, s) ->
            out.add(
                new SubscriptionInfo(
                    s.name(),
                    id,
                    List.copyOf(topics.get(id)),
                    s.createdAt(),
                    s.start(),
                    s.lastActive())));
    return out;
  }

  /** Runs {@code statements} with {@code id} bound, in order, in the open transaction. */
  private int deleteAll(Connection c, Object id, String... statements) throws SQLException {
    int last = 0;
    for (String name : statements) {
      try (PreparedStatement ps = c.prepareStatement(db.sql(name))) {
        ps.setObject(1, id);
        last = ps.executeUpdate();
      }
    }
    return last;
  }

  SubscriptionInfo renameSubscription(SubscriptionInfo s, String to) {
    db.tx(
        "rename_subscription",
        c -> {
          deleteAll(c, s.name(), "delete_group_leases", "delete_group_members");
          try (PreparedStatement ps = c.prepareStatement(db.sql("rename_subscription"))) {
            ps.setString(1, to);
            ps.setLong(2, s.id());
            return ps.executeUpdate();
          }
        });
    return findSubscription(to)
        .orElseThrow(
            () -> new io.boxline.NotFoundException("subscription '" + s.name() + "' is gone"));
  }

  boolean deleteSubscription(SubscriptionInfo s) {
    return db.tx(
        "delete_subscription",
        c -> {
          deleteAll(
              c,
              s.id(),
              "delete_subscription_parked",
              "delete_subscription_inbox",
              "delete_subscription_cursors",
              "delete_subscription_topics");
          deleteAll(
              c, s.name(), "delete_group_leases", "delete_group_members", "delete_group_policy");
          return deleteAll(c, s.id(), "delete_subscription") == 1;
        });
  }

  boolean deleteTopic(long topicId) {
    return db.tx(
        "delete_topic",
        c ->
            deleteAll(
                    c,
                    topicId,
                    "delete_topic_parked",
                    "delete_topic_cursors",
                    "delete_topic_subscriptions",
                    "delete_topic_leases",
                    "delete_topic_outbox",
                    "delete_topic_rejected",
                    "delete_topic_idempotency",
                    "delete_topic_log",
                    "delete_topic_partitions",
                    "delete_topic")
                == 1);
  }

  boolean deleteNamespace(NamespacePath namespace) {
    String path = namespace.toString();
    return db.tx(
        "delete_namespace",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(db.sql("namespace_in_use"))) {
            ps.setString(1, path);
            ps.setString(2, path);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              long children = rs.getLong(1);
              long topics = rs.getLong(2);
              if (children > 0 || topics > 0) {
                throw io.boxline.spi.CatalogStore.namespaceNotEmpty(namespace, topics, children);
              }
            }
          }
          return deleteAll(c, path, "delete_namespace") == 1;
        });
  }
}
