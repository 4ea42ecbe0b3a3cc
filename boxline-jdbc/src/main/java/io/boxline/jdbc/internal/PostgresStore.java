package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.Backlog;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.CursorMove;
import io.boxline.spi.LeaseStatus;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.Park;
import io.boxline.spi.PartitionAssigner;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.SequencedBatch;
import io.boxline.spi.StoreStats;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The PostgreSQL dialect. Multi-row writes go through {@code unnest} of arrays, so a batch of any
 * size is one round trip; wake-ups use LISTEN/NOTIFY, sent by the sequencer once per batch (and by
 * remote publishers at a bounded rate), never by every producer transaction.
 */
public final class PostgresStore extends SqlStore<PostgresParking> {
  final String outboxChannel;
  final String logChannel;
  private final PostgresCoordination coordination;
  private final boolean vacuumWhenAutovacuumOff;

  /** Default of {@code JdbcStore.Builder.outboxVacuumEvery}. */
  public static final int DEFAULT_OUTBOX_VACUUM_EVERY = 4096;

  private final int outboxVacuumEvery;

  /** Events sequenced since the outbox was last vacuumed. */
  private final AtomicLong sequencedSinceVacuum = new AtomicLong();

  private final AtomicBoolean vacuuming = new AtomicBoolean();
  private final AtomicLong outboxVacuums = new AtomicLong();
  private final AtomicLong outboxVacuumFailures = new AtomicLong();
  private final AtomicLong longTransactionWarnings = new AtomicLong();
  private volatile Thread vacuumThread;

  /** Default of {@code JdbcStore.Builder.longTransactionWarning}. */
  public static final Duration DEFAULT_LONG_TRANSACTION_WARNING = Duration.ofMinutes(1);

  /**
   * At most one long-transaction warning per this interval, however often the outbox is vacuumed.
   */
  private static final long LONG_TRANSACTION_WARNING_EVERY_NANOS = Duration.ofMinutes(5).toNanos();

  private final Duration longTransactionWarning;

  /** No long-transaction warning before this (System.nanoTime); one per interval at most. */
  private long longTransactionQuietUntilNanos = System.nanoTime();

  /** How long {@link #close} waits for a running outbox vacuum. */
  private static final long VACUUM_CLOSE_WAIT_MILLIS = 10_000;

  private volatile PostgresListener listener;
  private final IdleConnection idle;
  private static final System.Logger LOG = System.getLogger(PostgresStore.class.getName());

  public PostgresStore(DataSource dataSource, String schema, String prefix, String version) {
    this(
        dataSource,
        schema,
        prefix,
        version,
        true,
        DEFAULT_OUTBOX_VACUUM_EVERY,
        DEFAULT_LONG_TRANSACTION_WARNING);
  }

  /**
   * @param outboxVacuumEvery the sequencer vacuums the outbox after this many events (0: never)
   * @param longTransactionWarning after an outbox vacuum, warn about transactions open longer than
   *     this (zero: never)
   */
  public PostgresStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String version,
      boolean vacuumWhenAutovacuumOff,
      int outboxVacuumEvery,
      Duration longTransactionWarning) {
    this(
        dataSource,
        schema,
        prefix,
        description(version, "schema", schema, prefix),
        SqlScript.named("postgresql", schema, prefix),
        vacuumWhenAutovacuumOff,
        outboxVacuumEvery,
        longTransactionWarning);
  }

  private PostgresStore(
      DataSource dataSource,
      String schema,
      String prefix,
      String description,
      Map<String, String> q,
      boolean vacuumWhenAutovacuumOff,
      int outboxVacuumEvery,
      Duration longTransactionWarning) {
    super(
        dataSource,
        schema,
        prefix,
        description,
        new JdbcSql(dataSource, q),
        (db, topicIds) ->
            new PostgresParking(db, topicIds, logChannel(schema, prefix), vacuumWhenAutovacuumOff));
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    this.outboxVacuumEvery = outboxVacuumEvery;
    this.longTransactionWarning = longTransactionWarning;
    this.outboxChannel = schema + "_" + prefix + "outbox";
    this.logChannel = logChannel(schema, prefix);
    this.idle = new IdleConnection(dataSource);
    this.coordination = new PostgresCoordination(dataSource, q, description, idle);
  }

  private static String logChannel(String schema, String prefix) {
    return schema + "_" + prefix + "log";
  }

  private Connection connect() throws SQLException {
    return db.connect();
  }

  private <T> T tx(String name, JdbcSql.Work<T> work) {
    return db.tx(name, work);
  }

  @Override
  Instant instant(ResultSet rs, int column) throws SQLException {
    return JdbcSql.instant(rs.getTimestamp(column));
  }

  @Override
  void bindInstant(PreparedStatement ps, int at, Instant t) throws SQLException {
    ps.setTimestamp(at, Timestamp.from(t));
  }

  @Override
  UUID uuid(ResultSet rs, int column) throws SQLException {
    return rs.getObject(column, UUID.class);
  }

  /** The insert's {@code RETURNING id} yields no row when the row existed. */
  @Override
  Long insertReturningId(Connection c, String name, JdbcSql.Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql(name))) {
      binder.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
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
            throw newerSchema("schema", current, migrations.size());
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

  // ------------------------------------------------------------------ publish
  /** One row through {@code append_one}; more through {@code append_many}, one array a column. */
  @Override
  void appendRows(Connection tx, List<OutboxRecord> toStore) {
    String step = "append_one";
    try {
      if (toStore.size() == 1) {
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
        EventArrays a = EventArrays.of(toStore, null);
        try (PreparedStatement ps = tx.prepareStatement(sql(step))) {
          ps.setArray(1, tx.createArrayOf("uuid", a.ids));
          ps.setArray(2, tx.createArrayOf("bigint", a.topics));
          ps.setArray(3, tx.createArrayOf("integer", a.partitions));
          a.bindBody(ps, tx, 4);
          ps.setArray(10, tx.createArrayOf("timestamptz", a.deliverAt));
          ps.executeUpdate();
        }
      }
    } catch (SQLException e) {
      throw fail(step, e);
    }
  }

  /** Inserts the keys that are new; returns the owning event id of every key in the batch. */
  @Override
  Map<String, UUID> claimKeys(Connection tx, List<OutboxRecord> records) throws SQLException {
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
  public int setAsideUnplaceable() {
    return db.update("set_aside_unplaceable", ps -> {});
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

  /** One call of {@code append_to_log} (V10): locks, numbers and inserts in one round trip. */
  @Override
  long[] appendToLogRows(Connection tx, List<OutboxRecord> rows, Instant createdAt)
      throws SQLException {
    int n = rows.size();
    EventArrays a = EventArrays.of(rows, createdAt);
    long[] seqs = new long[n];
    try (PreparedStatement ps = tx.prepareStatement(sql("append_to_log"))) {
      ps.setArray(1, tx.createArrayOf("bigint", a.topics));
      ps.setArray(2, tx.createArrayOf("integer", a.partitions));
      ps.setArray(3, tx.createArrayOf("uuid", a.ids));
      a.bindBody(ps, tx, 4);
      ps.setArray(10, tx.createArrayOf("timestamptz", a.created));
      ps.setArray(11, tx.createArrayOf("timestamptz", a.deliverAt));
      try (ResultSet rs = ps.executeQuery()) {
        int i = 0;
        while (rs.next()) {
          seqs[i++] = rs.getLong(1);
        }
        if (i != n) {
          throw new SQLException("append_to_log returned " + i + " sequences for " + n + " rows");
        }
      }
    }
    return seqs;
  }

  @Override
  public boolean announceIn(Connection tx, List<PartitionHead> heads) {
    try (PreparedStatement ps = tx.prepareStatement(sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
      return true;
    } catch (SQLException e) {
      throw fail("notify", e);
    }
  }

  @Override
  public void announce(List<PartitionHead> heads) {
    try (Connection c = idle.borrow();
        PreparedStatement ps = c.prepareStatement(sql("announce"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    } catch (SQLException e) {
      throw fail("announce", e);
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
    SequencedBatch batch =
        sequenceInOneStatement(owner, ttl, maxEvents, returnEvents, assigner.kafkaCompatible());
    if (batch == null) {
      batch = sequenceInSteps(owner, ttl, maxEvents, assigner);
    }
    if (outboxVacuumEvery > 0
        && batch.events() > 0
        && sequencedSinceVacuum.addAndGet(batch.events()) >= outboxVacuumEvery
        && vacuuming.compareAndSet(false, true)) {
      // On a thread of its own: under load a vacuum can wait seconds for the pages producers are
      // inserting into (W1 saw 1.5 s), and sequencing must not wait with it.
      Thread t =
          new Thread(this::vacuumOutboxWhileDue, "boxline-outbox-vacuum-" + schema + "." + prefix);
      t.setDaemon(true);
      vacuumThread = t;
      t.start();
    }
    return batch;
  }

  /**
   * Every sequencer batch finds its rows by scanning the outbox's primary key from the start, and
   * the rows it deleted stay in that index until a vacuum: without one the scan grows by every
   * event sequenced (W1 measured 7 ms per batch after 150,000 events, autovacuum off) and even
   * autovacuum only comes by once a minute. Vacuuming just the outbox this often keeps the scan
   * short for about 1 µs per event. A vacuum that fails (say, the user does not own the table) only
   * logs: sequencing goes on.
   */
  private void vacuumOutboxWhileDue() {
    while (true) {
      sequencedSinceVacuum.set(0);
      vacuumOutbox();
      warnOfLongTransaction();
      vacuuming.set(false);
      // A batch that reached the threshold while this ran could not start a vacuum: do it here
      // (or that batch's next sibling does, if it wins the flag).
      if (sequencedSinceVacuum.get() < outboxVacuumEvery || !vacuuming.compareAndSet(false, true)) {
        return;
      }
    }
  }

  private void vacuumOutbox() {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute(sql("vacuum_outbox"));
      outboxVacuums.incrementAndGet();
    } catch (SQLException | RuntimeException e) {
      outboxVacuumFailures.incrementAndGet();
      LOG.log(
          System.Logger.Level.WARNING,
          "could not vacuum the outbox (sequencing goes on, but its batches slow down until"
              + " autovacuum or the retention loop vacuums it): "
              + e.getMessage());
    }
  }

  /**
   * Runs on the vacuum thread, one at a time (the vacuuming flag). A transaction that stays open
   * keeps every row version newer than its snapshot, so the vacuum that just ran could not clear
   * the outbox's index, and sequencing slows until that transaction ends: say who it is.
   */
  private void warnOfLongTransaction() {
    if (longTransactionWarning.isZero()) {
      return;
    }
    long now = System.nanoTime();
    if (now - longTransactionQuietUntilNanos < 0) {
      return;
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("oldest_open_transaction"))) {
      ps.setDouble(1, longTransactionWarning.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          longTransactionQuietUntilNanos = now + LONG_TRANSACTION_WARNING_EVERY_NANOS;
          longTransactionWarnings.incrementAndGet();
          LOG.log(
              System.Logger.Level.WARNING,
              "a transaction has been open for {0} s in this database (pid {1}, application"
                  + " ''{2}'', state ''{3}'', statement: {4}): while it lasts no vacuum can clear"
                  + " the outbox, and each sequencer batch gets slower. End it (or set"
                  + " idle_in_transaction_session_timeout); this warning repeats at most every"
                  + " 5 minutes",
              String.format(java.util.Locale.ROOT, "%.1f", rs.getDouble(4)),
              String.valueOf(rs.getInt(1)),
              rs.getString(2),
              rs.getString(3),
              rs.getString(5));
        }
      }
    } catch (SQLException | RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not look for long transactions: " + e.getMessage());
    }
  }

  @Override
  public StoreStats stats() {
    return new StoreStats(
        outboxVacuums.get(), outboxVacuumFailures.get(), longTransactionWarnings.get());
  }

  /**
   * The common case in one round trip: the whole batch is one auto-commit statement. Returns null
   * when the oldest outbox row has no partition yet (published from SQL): the Java partitioner must
   * assign it, so that batch goes through {@link #sequenceInSteps}.
   */
  private SequencedBatch sequenceInOneStatement(
      String owner, Duration ttl, int maxEvents, boolean returnEvents, boolean placeUnassigned) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql("sequence_batch"))) {
      ps.setDouble(1, ttl.toMillis() / 1000.0);
      ps.setString(2, owner);
      ps.setInt(3, maxEvents);
      ps.setString(4, logChannel);
      ps.setInt(5, PostgresListener.MAX_PAYLOAD);
      ps.setBoolean(6, returnEvents);
      ps.setBoolean(7, placeUnassigned);
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
                    Headers.storedEvent(
                        rs.getObject(11, UUID.class),
                        rs.getLong(10),
                        rs.getString(12),
                        rs.getString(13),
                        rs.getString(14),
                        rs.getString(15),
                        rs.getBytes(16),
                        rs.getString(17),
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
    Step step = new Step("lock_sequencer");
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
      throw fail(step.name(), e);
    }
  }

  private SequencedBatch sequence(
      Connection c,
      Step step,
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
    step.at("take_outbox");
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
    Map<PartitionKey, Integer> counts = new LinkedHashMap<>();
    int[] partitions = new int[taken.size()];
    for (int i = 0; i < taken.size(); i++) {
      Taken t = taken.get(i);
      int p = t.partition() >= 0 ? t.partition() : assigner.assign(t.topicId(), t.key());
      partitions[i] = p;
      counts.merge(PartitionKey.of(t.topicId(), p), 1, Integer::sum);
    }
    step.at("advance_partitions");
    int groups = counts.size();
    Long[] gTopics = new Long[groups];
    Integer[] gParts = new Integer[groups];
    Long[] gCounts = new Long[groups];
    int g = 0;
    for (Map.Entry<PartitionKey, Integer> e : counts.entrySet()) {
      gTopics[g] = e.getKey().topicId();
      gParts[g] = e.getKey().partition();
      gCounts[g] = (long) e.getValue();
      g++;
    }
    Map<PartitionKey, Long> next = new HashMap<>();
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
          PartitionKey k = PartitionKey.of(topicId, partition);
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
    step.at("append_log");
    int n = taken.size();
    EventArrays a = new EventArrays(n);
    Long[] seqs = new Long[n];
    for (int i = 0; i < n; i++) {
      Taken t = taken.get(i);
      PartitionKey k = PartitionKey.of(t.topicId(), partitions[i]);
      long seq = next.get(k);
      next.put(k, seq + 1);
      seqs[i] = seq;
      a.set(
          i,
          t.topicId(),
          partitions[i],
          t.eventId(),
          t.key(),
          t.type(),
          t.source(),
          t.contentType(),
          t.payload(),
          t.headers(),
          t.createdAt(),
          t.deliverAt());
    }
    try (PreparedStatement ps = c.prepareStatement(sql("append_log"))) {
      ps.setArray(1, c.createArrayOf("bigint", a.topics));
      ps.setArray(2, c.createArrayOf("integer", a.partitions));
      ps.setArray(3, c.createArrayOf("bigint", seqs));
      ps.setArray(4, c.createArrayOf("uuid", a.ids));
      a.bindBody(ps, c, 5);
      ps.setArray(11, c.createArrayOf("timestamptz", a.created));
      ps.setArray(12, c.createArrayOf("timestamptz", a.deliverAt));
      ps.executeUpdate();
    }
    step.at("notify");
    try (PreparedStatement ps = c.prepareStatement(sql("notify"))) {
      ps.setString(1, logChannel);
      ps.setString(2, PostgresListener.encodeHeads(heads));
      ps.execute();
    }
    return new SequencedBatch(true, n, heads);
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

  /**
   * The same check of the log as the group commit, through the same function: one move, and in a
   * transaction with its parks when it has some.
   */
  @Override
  public CommitOutcome commitBatchIfLogHolds(
      long subscriptionId,
      PartitionKey partition,
      long expectedPosition,
      long position,
      long epoch,
      List<Park> parks,
      long[] sequences,
      UUID[] eventIds) {
    List<CursorMove> move =
        List.of(new CursorMove(partition, expectedPosition, position, epoch, sequences, eventIds));
    if (parks.isEmpty()) {
      return commitCursors(subscriptionId, move).get(0);
    }
    return tx(
        "commit_cursors",
        c -> {
          parking.insertParks(c, subscriptionId, partition, parks);
          CommitOutcome outcome = commitCursors(c, subscriptionId, move).get(0);
          if (outcome != CommitOutcome.COMMITTED) {
            c.rollback(); // park nothing
          }
          return outcome;
        });
  }

  @Override
  public List<CommitOutcome> commitCursors(long subscriptionId, List<CursorMove> moves) {
    try (Connection c = connect()) { // one auto-commit statement
      return commitCursors(c, subscriptionId, moves);
    } catch (SQLException e) {
      throw fail("commit_cursors", e);
    }
  }

  private List<CommitOutcome> commitCursors(
      Connection c, long subscriptionId, List<CursorMove> moves) throws SQLException {
    // Primitive arrays travel in pgjdbc's binary array format: building ten text arrays with
    // createArrayOf was most of a worker's time in W1. A first sequence of 0 (sequences start at 1)
    // marks a move over events read from the log.
    int n = moves.size();
    long[] topics = new long[n];
    int[] partitions = new int[n];
    long[] expected = new long[n];
    long[] positions = new long[n];
    long[] epochs = new long[n];
    long[] firstSeqs = new long[n];
    long[] lastSeqs = new long[n];
    int[] firstIds = new int[n];
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CursorMove m = moves.get(i);
      topics[i] = m.partition().topicId();
      partitions[i] = m.partition().partition();
      expected[i] = m.expectedPosition();
      positions[i] = m.position();
      epochs[i] = m.epoch();
      if (m.checksLog()) {
        long[] seqs = m.heldSequences();
        firstSeqs[i] = seqs[0];
        lastSeqs[i] = seqs[seqs.length - 1];
        firstIds[i] = ids.size() + 1; // SQL arrays count from 1
        ids.addAll(Arrays.asList(m.heldIds()));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(sql("commit_cursors"))) {
      ps.setLong(1, subscriptionId);
      ps.setObject(2, topics);
      ps.setObject(3, partitions);
      ps.setObject(4, expected);
      ps.setObject(5, positions);
      ps.setObject(6, epochs);
      ps.setObject(7, firstSeqs);
      ps.setObject(8, lastSeqs);
      ps.setObject(9, firstIds);
      ps.setArray(10, ids.isEmpty() ? null : c.createArrayOf("uuid", ids.toArray()));
      List<CommitOutcome> outcomes = new ArrayList<>(n);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          outcomes.add(
              !rs.getBoolean(1)
                  ? CommitOutcome.LOG_CHANGED
                  : rs.getBoolean(2)
                      ? CommitOutcome.COMMITTED
                      : rs.getBoolean(3) ? CommitOutcome.CURSOR_MOVED : CommitOutcome.FENCED);
        }
      }
      return outcomes;
    }
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
    Thread vacuum = vacuumThread;
    if (vacuum != null) {
      try {
        vacuum.join(VACUUM_CLOSE_WAIT_MILLIS); // it holds a pooled connection the caller may close
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (vacuum.isAlive()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "closing while the outbox vacuum still runs after "
                + VACUUM_CLOSE_WAIT_MILLIS
                + " ms; it ends with its connection");
      }
    }
    idle.close();
  }
}
