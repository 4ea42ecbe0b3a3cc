package io.boxline.chaos;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Proves, from the database and the broker after a run, what Boxline promises: the log equals the
 * committed business rows (nothing without its row, nothing rolled back, one event per idempotency
 * key), every partition gap-free, every committed event at every subscription and in the broker,
 * per-key order everywhere, duplicates within their bounds (none for the transactional handler's
 * effects), every task run, every dead letter with its designed cause.
 */
final class ChaosChecker {
  /** How many duplicates the faults allow where delivery is at least once. */
  record Bounds(long deliveries, long relay, long taskRuns) {}

  private static final String TASKS_TOPIC = "boxline/tasks";
  private static final int SAMPLES = 5;

  private final DataSource pool;
  private final String schema;
  private final String partition;
  private final PrivateNats nats;
  private final Bounds bounds;
  private final CheckReport report = new CheckReport();

  ChaosChecker(DataSource pool, ChaosDatabase db, PrivateNats nats, Bounds bounds) {
    this.pool = pool;
    this.schema = db.schema();
    this.partition = db.partitionColumn();
    this.nats = nats;
    this.bounds = bounds;
  }

  CheckReport check() throws Exception {
    long expectedEvents = single("SELECT coalesce(sum(events), 0) FROM " + schema + ".chaos_order");
    EventIndex index = new EventIndex((int) expectedEvents);
    Map<UUID, Integer> tasks = new HashMap<>(); // expected task id -> times logged
    loadOrders(index, tasks);
    report.figure(
        "committed business transactions",
        single("SELECT count(*) FROM " + schema + ".chaos_order"));
    report.figure("events they published (expected in the log)", index.size());
    report.figure("keys", index.keys());

    Set<UUID> unexpected = new HashSet<>();
    long loggedTwice = checkLog(index, tasks, unexpected);
    long missing = 0;
    for (int i = 0; i < index.size(); i++) {
      if (!index.inLog(i)) {
        missing++;
      }
    }
    report.zero("atomicity: committed events missing from the log (lost)", missing);
    report.zero("atomicity: log events without a committed business row", unexpected.size());
    report.zero("log: events logged twice", loggedTwice);
    sample("log events without a business row", unexpected);
    checkRollbacks(unexpected);
    checkResends(index, unexpected);
    report.zero("outbox rows left", single("SELECT count(*) FROM " + schema + ".outbox"));
    report.zero(
        "outbox rows set aside", single("SELECT count(*) FROM " + schema + ".outbox_rejected"));
    checkGapFree();
    report.zero(
        "per-key order: log vs publish order (events out of place)", index.logOrderViolations());

    Observations effects = observeTable("chaos_effect", ChaosNames.EFFECTS, index, false);
    report("effects (exactly once)", effects, 0);
    Observations deliveries = observeTable("chaos_delivery", ChaosNames.DELIVERIES, index, true);
    report("deliveries (at least once)", deliveries, bounds.deliveries());
    Observations broker = new Observations("broker", index, false);
    long messages = BrokerReader.readAll(nats, broker);
    report.figure("broker: messages in the stream", messages);
    report("broker (relay, JetStream)", broker, bounds.relay());

    checkDeadLetters(index);
    checkTasks(tasks);
    return report;
  }

  private void report(String what, Observations o, long duplicateBound) {
    report.zero(what + ": committed events never received", o.missing());
    report.zero(what + ": records of events never committed", o.unknown());
    report.zero(what + ": per-key order violations", o.orderViolations());
    report.atMost(what + ": duplicates", o.duplicates(), duplicateBound);
  }

  private void loadOrders(EventIndex index, Map<UUID, Integer> tasks) throws SQLException {
    String sql =
        "SELECT order_id, run, step, topic, ev_key, events, poison, task_id FROM "
            + schema
            + ".chaos_order";
    stream(
        sql,
        rs -> {
          String order = rs.getString(1);
          String key = rs.getString(4) + "|" + rs.getString(5);
          int events = rs.getInt(6);
          int poison = rs.getInt(7);
          for (int i = 0; i < events; i++) {
            index.add(
                ChaosNames.eventId(order, i), key, rs.getInt(2), rs.getLong(3), i, i == poison);
          }
          String task = rs.getString(8);
          if (task != null) {
            tasks.put(UUID.fromString(task), 0);
          }
        });
  }

  /** Streams the log once: places expected events, counts task events; returns ids logged twice. */
  private long checkLog(EventIndex index, Map<UUID, Integer> tasks, Set<UUID> unexpected)
      throws SQLException {
    Map<Long, String> topics = topicNames();
    long[] twice = {0};
    long[] unknownTasks = {0};
    stream(
        "SELECT topic_id, " + partition + ", seq, event_id FROM " + schema + ".log",
        rs -> {
          String topic = topics.get(rs.getLong(1));
          UUID id = UUID.fromString(rs.getString(4));
          if (TASKS_TOPIC.equals(topic)) {
            Integer n = tasks.get(id);
            if (n == null) {
              unknownTasks[0]++;
            } else {
              tasks.put(id, n + 1);
            }
            return;
          }
          int i = index.indexOf(id);
          if (i < 0) {
            unexpected.add(id);
          } else if (!index.logged(i, rs.getInt(2), rs.getLong(3))) {
            twice[0]++;
          }
        });
    long tasksMissing = tasks.values().stream().filter(n -> n == 0).count();
    long tasksTwice = tasks.values().stream().filter(n -> n > 1).count();
    report.figure("tasks scheduled by committed transactions", tasks.size());
    report.zero("atomicity: committed tasks missing from the log", tasksMissing);
    report.zero("atomicity: tasks in the log without a committed business row", unknownTasks[0]);
    report.zero("tasks logged twice", tasksTwice);
    return twice[0];
  }

  private void checkRollbacks(Set<UUID> unexpected) throws SQLException {
    long[] rolledBackEvents = {0};
    long[] present = {0};
    stream(
        "SELECT order_id, events FROM " + schema + ".chaos_rolled_back",
        rs -> {
          for (int i = 0; i < rs.getInt(2); i++) {
            rolledBackEvents[0]++;
            if (unexpected.contains(ChaosNames.eventId(rs.getString(1), i))) {
              present[0]++;
            }
          }
        });
    report.figure("events of rolled-back transactions (recorded)", rolledBackEvents[0]);
    report.zero("atomicity: rolled-back events in the log", present[0]);
    report.zero(
        "atomicity: rolled-back business rows present",
        single(
            "SELECT count(*) FROM "
                + schema
                + ".chaos_rolled_back r JOIN "
                + schema
                + ".chaos_order o ON o.order_id = r.order_id"));
  }

  private void checkResends(EventIndex index, Set<UUID> unexpected) throws SQLException {
    long[] resends = {0};
    long[] wrong = {0};
    long[] stored = {0};
    stream(
        "SELECT order_id, sent_id, returned_id, duplicate FROM " + schema + ".chaos_resend",
        rs -> {
          resends[0]++;
          UUID first = ChaosNames.eventId(rs.getString(1), 0);
          if (rs.getInt(4) != 1 || !first.toString().equals(rs.getString(3))) {
            wrong[0]++;
          }
          if (unexpected.contains(UUID.fromString(rs.getString(2)))) {
            stored[0]++;
          }
        });
    report.figure("idempotency keys published a second time", resends[0]);
    report.zero("idempotency: second publishes not answered 'duplicate, first id'", wrong[0]);
    report.zero("idempotency: second publishes stored in the log", stored[0]);
  }

  /** Per partition: the log holds exactly the sequences 1..last_seq. */
  private void checkGapFree() throws SQLException {
    long[] partitions = {0};
    long[] bad = {0};
    stream(
        "SELECT p.topic_id, p."
            + partition
            + ", p.last_seq, count(l.seq),"
            + " coalesce(min(l.seq), 1), coalesce(max(l.seq), 0) FROM "
            + schema
            + ".partition p LEFT JOIN "
            + schema
            + ".log l ON l.topic_id = p.topic_id AND l."
            + partition
            + " = p."
            + partition
            + " GROUP BY p.topic_id, p."
            + partition
            + ", p.last_seq",
        rs -> {
          partitions[0]++;
          long last = rs.getLong(3);
          // (topic, partition, seq) is the log's key: count = max = last_seq and min = 1 is 1..N.
          if (rs.getLong(4) != last || rs.getLong(6) != last || rs.getLong(5) != 1) {
            bad[0]++;
            report.detail(
                "partition "
                    + rs.getLong(1)
                    + "#"
                    + rs.getInt(2)
                    + ": last_seq "
                    + last
                    + ", logged "
                    + rs.getLong(4)
                    + " from "
                    + rs.getLong(5)
                    + " to "
                    + rs.getLong(6));
          }
        });
    report.figure("partitions", partitions[0]);
    report.zero("gap-free: partitions whose log is not exactly 1..last_seq", bad[0]);
  }

  private Observations observeTable(
      String table, String name, EventIndex index, boolean poisonRetried) throws SQLException {
    Observations o = new Observations(name, index, poisonRetried);
    stream(
        "SELECT n, event_id FROM " + schema + "." + table + " ORDER BY n",
        rs -> o.observe(UUID.fromString(rs.getString(2)), rs.getLong(1)));
    return o;
  }

  /**
   * Every dead letter must have a cause and be a poison event of {@code deliveries}; every poison
   * event must be dead there. A poison event's last attempt may fail for another real reason (its
   * delivery record could not be written while the database restarted): that is still its cause,
   * and such dead letters are counted apart.
   */
  private void checkDeadLetters(EventIndex index) throws SQLException {
    long[] dead = {0};
    long[] designedError = {0};
    long[] withoutCause = {0};
    long[] notPoison = {0};
    long[] live = {0};
    Set<UUID> deadPoison = new HashSet<>();
    stream(
        "SELECT s.name, p.event_id, p.state, p.last_error FROM "
            + schema
            + ".parked p JOIN "
            + schema
            + ".subscription s ON s.id = p.subscription_id",
        rs -> {
          String sub = rs.getString(1);
          UUID id = UUID.fromString(rs.getString(2));
          String error = rs.getString(4);
          if (!"DEAD".equals(rs.getString(3))) {
            live[0]++;
            return;
          }
          dead[0]++;
          int i = index.indexOf(id);
          if (error == null || error.isBlank()) {
            withoutCause[0]++;
            report.detail("dead letter of " + sub + " without a cause: " + id);
          }
          if (ChaosNames.DELIVERIES.equals(sub) && i >= 0 && index.poison(i)) {
            deadPoison.add(id);
            if (error != null && error.contains(ChaosNames.POISON_ERROR)) {
              designedError[0]++;
            } else {
              report.detail("poison event " + id + " dead with another cause: " + error);
            }
          } else {
            notPoison[0]++;
            report.detail("dead letter of " + sub + " not designed to fail: " + id + " " + error);
          }
        });
    long poison = 0;
    for (int i = 0; i < index.size(); i++) {
      if (index.poison(i)) {
        poison++;
      }
    }
    report.figure("dead letters", dead[0]);
    report.figure("... whose cause is the handler's designed error", designedError[0]);
    report.zero("dead letters without a cause", withoutCause[0]);
    report.zero("dead letters of events not designed to fail", notPoison[0]);
    report.equal("poison events dead-lettered by 'deliveries'", deadPoison.size(), poison);
    report.zero("events still parked for a retry", live[0]);
  }

  private void checkTasks(Map<UUID, Integer> tasks) throws SQLException {
    Map<UUID, Integer> runs = new HashMap<>();
    long[] unknown = {0};
    stream(
        "SELECT task_id FROM " + schema + ".chaos_task_run",
        rs -> {
          UUID id = UUID.fromString(rs.getString(1));
          if (tasks.containsKey(id)) {
            runs.merge(id, 1, Integer::sum);
          } else {
            unknown[0]++;
          }
        });
    long notRun = tasks.keySet().stream().filter(id -> !runs.containsKey(id)).count();
    long extra = runs.values().stream().mapToLong(n -> n - 1).sum();
    report.zero("tasks never run (lost)", notRun);
    report.zero("task runs of tasks never committed", unknown[0]);
    report.atMost("task runs beyond the first", extra, bounds.taskRuns());
  }

  private void sample(String what, Set<UUID> ids) {
    if (!ids.isEmpty()) {
      List<UUID> some = new ArrayList<>(ids).subList(0, Math.min(SAMPLES, ids.size()));
      report.detail(what + ", e.g. " + some);
    }
  }

  private Map<Long, String> topicNames() throws SQLException {
    Map<Long, String> out = new HashMap<>();
    stream(
        "SELECT t.id, n.path, t.name FROM "
            + schema
            + ".topic t JOIN "
            + schema
            + ".namespace n ON n.id = t.namespace_id",
        rs -> out.put(rs.getLong(1), rs.getString(2) + "/" + rs.getString(3)));
    return out;
  }

  private interface RowHandler {
    void row(ResultSet rs) throws SQLException;
  }

  /** Reads a query row by row with a fetch size, so a million rows never sit in memory at once. */
  private void stream(String sql, RowHandler handler) throws SQLException {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setFetchSize(10_000);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            handler.row(rs);
          }
        }
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
  }

  private long single(String sql) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
