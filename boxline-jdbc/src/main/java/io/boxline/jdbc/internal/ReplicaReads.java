package io.boxline.jdbc.internal;

import io.boxline.StoreException;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PartitionRead;
import io.boxline.spi.StoredEvent;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * Reads of the log sent to read replicas, and only the reads: leases, cursors, parking and every
 * write stay on the primary.
 *
 * <p>A streaming replica shows the primary as it was at some earlier commit, so each partition's
 * log there is a prefix of the primary's (the log is gap-free and appended in sequence order). A
 * replica read is therefore never wrong, only possibly short. It counts as complete when it filled
 * its limit or reached the partition's newest head this store has heard of (from its own sequencer,
 * wake-ups and head reads, all from the primary); a short read is asked again, with doubling
 * pauses, until the wait runs out, and then the primary answers it. So a consumer never takes a
 * lagging replica's silence for "caught up".
 *
 * <p>A replica that fails a read is left alone for {@link #DOWN_NANOS} and its reads go to the next
 * one, or to the primary. A replica is used only after its schema shows the same first migration,
 * to the microsecond, as the primary's: a data source pointing at another database is refused.
 */
final class ReplicaReads {
  private static final System.Logger LOG = System.getLogger(ReplicaReads.class.getName());

  /** How long a replica that failed is skipped before it is tried again. */
  static final long DOWN_NANOS = 5_000_000_000L;

  private static final long FIRST_PAUSE_NANOS = 500_000L;
  private static final long MAX_PAUSE_NANOS = 16_000_000L;

  /** A read of several partitions on one source. */
  @FunctionalInterface
  interface Reader {
    List<List<StoredEvent>> read(JdbcSql source, List<PartitionRead> reads);
  }

  private final JdbcSql primary;
  private final List<Replica> replicas;
  private final long waitNanos;
  private final LongSupplier nanoTime;
  private final Map<PartitionKey, Long> knownHeads = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicLong replicaReads = new AtomicLong();
  private final AtomicLong fallbacks = new AtomicLong();

  /** The primary's first migration, read once: what every replica must show. */
  private volatile Long primaryFingerprint;

  ReplicaReads(JdbcSql primary, List<DataSource> replicas, long waitNanos, LongSupplier nanoTime) {
    this.primary = primary;
    this.waitNanos = waitNanos;
    this.nanoTime = nanoTime;
    List<Replica> list = new ArrayList<>(replicas.size());
    for (int i = 0; i < replicas.size(); i++) {
      list.add(new Replica("read replica " + (i + 1), primary.on(replicas.get(i))));
    }
    this.replicas = List.copyOf(list);
  }

  /** Heads the primary reported: a replica read must reach them to count as complete. */
  void saw(Collection<PartitionHead> heads) {
    if (heads == null) {
      return;
    }
    for (PartitionHead h : heads) {
      knownHeads.merge(PartitionKey.of(h.topicId(), h.partition()), h.lastSequence(), Math::max);
    }
  }

  long replicaReads() {
    return replicaReads.get();
  }

  long fallbacks() {
    return fallbacks.get();
  }

  /** {@code reads} answered by replicas where they have caught up, by the primary elsewhere. */
  List<List<StoredEvent>> readEach(List<PartitionRead> reads, Reader reader) {
    @SuppressWarnings("unchecked")
    List<StoredEvent>[] out = new List[reads.size()];
    List<Integer> pending = new ArrayList<>(reads.size());
    for (int i = 0; i < reads.size(); i++) {
      pending.add(i);
    }
    long deadline = nanoTime.getAsLong() + waitNanos;
    long pause = FIRST_PAUSE_NANOS;
    while (!pending.isEmpty()) {
      Replica replica = pick();
      if (replica == null) {
        break;
      }
      List<PartitionRead> ask = new ArrayList<>(pending.size());
      pending.forEach(i -> ask.add(reads.get(i)));
      List<List<StoredEvent>> got;
      try {
        got = reader.read(replica.sql, ask);
      } catch (StoreException e) {
        replica.failed(e, nanoTime.getAsLong());
        continue;
      }
      List<Integer> still = new ArrayList<>();
      for (int j = 0; j < ask.size(); j++) {
        if (complete(ask.get(j), got.get(j))) {
          out[pending.get(j)] = got.get(j);
        } else {
          still.add(pending.get(j));
        }
      }
      replicaReads.addAndGet(pending.size() - still.size());
      pending = still;
      long now = nanoTime.getAsLong();
      if (pending.isEmpty() || now + pause > deadline) {
        break;
      }
      LockSupport.parkNanos(pause);
      pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
    }
    if (!pending.isEmpty()) {
      List<PartitionRead> ask = new ArrayList<>(pending.size());
      pending.forEach(i -> ask.add(reads.get(i)));
      List<List<StoredEvent>> got = reader.read(primary, ask);
      for (int j = 0; j < ask.size(); j++) {
        out[pending.get(j)] = got.get(j);
      }
      fallbacks.addAndGet(pending.size());
    }
    return Arrays.asList(out);
  }

  /**
   * A read that needs no completeness check (filtered browsing): on a replica that answers, else on
   * the primary.
   */
  <T> T any(java.util.function.Function<JdbcSql, T> read) {
    while (true) {
      Replica replica = pick();
      if (replica == null) {
        fallbacks.incrementAndGet();
        return read.apply(primary);
      }
      try {
        T result = read.apply(replica.sql);
        replicaReads.incrementAndGet();
        return result;
      } catch (StoreException e) {
        replica.failed(e, nanoTime.getAsLong());
      }
    }
  }

  private boolean complete(PartitionRead read, List<StoredEvent> got) {
    if (got.size() >= read.limit()) {
      return true;
    }
    long last = got.isEmpty() ? read.afterSequence() : got.get(got.size() - 1).sequence();
    Long known = knownHeads.get(PartitionKey.of(read.topicId(), read.partition()));
    return known == null || last >= known;
  }

  /** The next usable replica in turn, or null when none is. */
  private Replica pick() {
    long now = nanoTime.getAsLong();
    for (int tries = 0; tries < replicas.size(); tries++) {
      Replica r = replicas.get(Math.floorMod(next.getAndIncrement(), replicas.size()));
      if (r.usable(now)) {
        return r;
      }
    }
    return null;
  }

  /** One replica: its statements, whether it was checked against the primary, when it failed. */
  private final class Replica {
    private final String name;
    private final JdbcSql sql;
    private volatile boolean verified;
    private volatile boolean refused;
    private volatile long downUntil = Long.MIN_VALUE;
    private volatile boolean down;

    Replica(String name, JdbcSql sql) {
      this.name = name;
      this.sql = sql;
    }

    boolean usable(long now) {
      if (refused || (down && now - downUntil < 0)) {
        return false;
      }
      if (!verified) {
        synchronized (this) {
          if (!verified && !refused) {
            verify(now);
          }
        }
      }
      return verified;
    }

    /** The replica's first migration must be the primary's, or it is some other database. */
    private void verify(long now) {
      long mine;
      long theirs;
      try {
        Long known = primaryFingerprint;
        theirs = known != null ? known : fingerprint(primary);
        primaryFingerprint = theirs;
      } catch (SQLException e) {
        failed(primary.fail("schema_fingerprint", e), now);
        return;
      }
      try {
        mine = fingerprint(sql);
      } catch (SQLException e) {
        failed(sql.fail("schema_fingerprint", e), now);
        return;
      }
      if (mine != theirs) {
        refused = true;
        LOG.log(
            Level.ERROR,
            "{0} is not a copy of the primary: its Boxline schema was first migrated at {1}"
                + " (microseconds since 1970), the primary''s at {2}. Its reads go to the primary"
                + " until the store is rebuilt: point readReplicas at streaming replicas of this"
                + " primary (PostgreSQL hot standby, MariaDB/MySQL replica).",
            name,
            mine,
            theirs);
        return;
      }
      verified = true;
      if (down) {
        down = false;
        LOG.log(Level.INFO, "{0} answers again; log reads go to it", name);
      }
    }

    private long fingerprint(JdbcSql on) throws SQLException {
      try (Connection c = on.connect();
          var ps = c.prepareStatement(on.sql("schema_fingerprint"));
          var rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("the schema has no first migration recorded (not migrated yet)");
        }
        return rs.getLong(1);
      }
    }

    void failed(StoreException e, long now) {
      downUntil = now + DOWN_NANOS;
      verified = false; // checked again when it comes back: it may be another server by then
      if (!down) {
        down = true;
        LOG.log(
            Level.WARNING,
            "{0} failed a read; its reads go to the other replicas or the primary for {1} s: {2}",
            name,
            DOWN_NANOS / 1_000_000_000L,
            e.getMessage());
      }
    }
  }
}
