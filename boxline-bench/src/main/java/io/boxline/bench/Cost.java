package io.boxline.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What a trial cost, per event: this JVM's CPU time, the CPU time of the PostgreSQL backends of the
 * trial's pool and of the server's background processes, WAL written and flushed, server
 * transactions, and the JDBC statements and commits the trial's code sent ({@link Counted}).
 *
 * <ul>
 *   <li><b>JVM CPU</b>: {@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}, the
 *       whole process (producers, Boxline, JIT, GC).
 *   <li><b>PostgreSQL CPU</b>: utime + stime from {@code /proc/<pid>/stat} of the backends whose
 *       {@code application_name} is the pool's name (the pool sets it), summed over the pids seen
 *       at the start or the end. <i>Background</i>: every other child of the postmaster that is not
 *       a client backend (WAL writer, checkpointer, background writer, autovacuum); those serve the
 *       whole (shared) server. Linux, server on this machine; otherwise not measured.
 *   <li><b>WAL</b>: {@code pg_current_wal_lsn()} delta (bytes), {@code pg_stat_wal} deltas
 *       (records, full-page images, syncs = flushes). Cluster-wide: other databases' work shows
 *       too.
 *   <li><b>Transactions</b>: {@code xact_commit + xact_rollback} of the database in {@code
 *       pg_stat_database}, which counts the pool's validation pings as well. PostgreSQL 15 defers a
 *       backend's counters up to 10 s once it is idle, so {@link #stop} waits {@code settleMillis}
 *       before reading them (and the WAL counters).
 * </ul>
 */
final class Cost {
  /** The figures of one trial. Negative values: not measured. */
  record Figures(
      long events,
      double wallSeconds,
      long jvmCpuNanos,
      long jitCpuNanos,
      long pgCpuNanos,
      long pgBackgroundCpuNanos,
      long walBytes,
      long walRecords,
      long walFpi,
      long walSyncs,
      long xacts,
      long statements,
      long commits) {
    double jvmMsPer1000() {
      return jvmCpuNanos / 1e6 * 1000.0 / events;
    }

    double jitMsPer1000() {
      return jitCpuNanos < 0 ? Double.NaN : jitCpuNanos / 1e6 * 1000.0 / events;
    }

    double pgMsPer1000() {
      return pgCpuNanos < 0 ? Double.NaN : pgCpuNanos / 1e6 * 1000.0 / events;
    }

    double pgBackgroundMsPer1000() {
      return pgBackgroundCpuNanos < 0 ? Double.NaN : pgBackgroundCpuNanos / 1e6 * 1000.0 / events;
    }

    double totalMsPer1000() {
      return jvmMsPer1000() + (pgCpuNanos < 0 ? 0 : pgMsPer1000());
    }

    double perEvent(long v) {
      return v < 0 ? Double.NaN : (double) v / events;
    }
  }

  private static final long TICK_NANOS = 10_000_000L; // USER_HZ = 100 on Linux

  private final Db db;
  private final String app;
  private final Counted counted;
  private final long jvm0;
  private final long jit0;
  private final long wall0;
  private final Map<Integer, Long> own0;
  private final Map<Integer, Long> background0;
  private final long[] server0;
  private final long statements0;
  private final long commits0;

  private Cost(Db db, String app, Counted counted) {
    this.db = db;
    this.app = app;
    this.counted = counted;
    this.server0 = server();
    Map<Integer, Long> own = new HashMap<>();
    Map<Integer, Long> background = new HashMap<>();
    processes(own, background);
    this.own0 = own;
    this.background0 = background;
    this.statements0 = counted == null ? 0 : counted.statements();
    this.commits0 = counted == null ? 0 : counted.commits();
    this.wall0 = System.nanoTime();
    this.jit0 = jitCpu();
    this.jvm0 = jvmCpu();
  }

  /**
   * Starts measuring a trial whose database work goes through the pool named {@code app} ({@link
   * Db#pool} sets it as the application name), counting statements with {@code counted} (or null).
   */
  static Cost start(Db db, String app, Counted counted) {
    return new Cost(db, app, counted);
  }

  /**
   * Ends the trial's window now (CPU, statements); waits {@code settleMillis} for the server's
   * counters to be flushed, then reads them.
   */
  Figures stop(long events, long settleMillis) throws InterruptedException {
    long jvm = jvmCpu() - jvm0;
    long jit0 = this.jit0;
    long jit = jit0 < 0 ? -1 : jitCpu() - jit0;
    double wall = (System.nanoTime() - wall0) / 1e9;
    long statements = counted == null ? -1 : counted.statements() - statements0;
    long commits = counted == null ? -1 : counted.commits() - commits0;
    Map<Integer, Long> own = new HashMap<>();
    Map<Integer, Long> background = new HashMap<>();
    processes(own, background);
    long ownCpu = delta(own0, own);
    long bgCpu = delta(background0, background);
    long lsn = lsn();
    Thread.sleep(settleMillis);
    long[] s = server();
    return new Figures(
        events,
        wall,
        jvm,
        jit,
        ownCpu,
        bgCpu,
        lsn - server0[0],
        s[1] - server0[1],
        s[2] - server0[2],
        s[3] - server0[3],
        s[4] - server0[4],
        statements,
        commits);
  }

  private static long delta(Map<Integer, Long> before, Map<Integer, Long> after) {
    long sum = 0;
    Set<Integer> pids = new HashSet<>(before.keySet());
    pids.addAll(after.keySet());
    for (int pid : pids) {
      Long a = before.get(pid);
      Long b = after.get(pid);
      if (b == null) {
        continue; // ended meanwhile: its last ticks are lost
      }
      sum += b - (a == null ? 0 : a);
    }
    return sum * TICK_NANOS;
  }

  static long jvmCpu() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime();
    }
    return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos()).orElse(0L);
  }

  /**
   * CPU time of this JVM's JIT compiler threads ({@code /proc/self/task/<tid>}, names "C1
   * CompilerThre…"/"C2 CompilerThre…"), or -1 when not on Linux. A compiler thread that ended
   * meanwhile takes its time with it.
   */
  static long jitCpu() {
    long sum = 0;
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String comm = Files.readString(t.resolve("comm")).trim();
          if (!comm.startsWith("C1 Compiler") && !comm.startsWith("C2 Compiler")) {
            continue;
          }
          String s = Files.readString(t.resolve("stat"));
          String[] f = s.substring(s.lastIndexOf(')') + 2).trim().split(" ");
          sum += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
          // the thread ended
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return sum * TICK_NANOS;
  }

  /** {lsn, wal_records, wal_fpi, wal_sync, xacts}; lsn as a byte position. */
  private long[] server() {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, w.wal_records,"
                    + " w.wal_fpi, w.wal_sync, d.xact_commit + d.xact_rollback FROM pg_stat_wal w,"
                    + " pg_stat_database d WHERE d.datname = current_database()")) {
      rs.next();
      long[] v = new long[5];
      for (int i = 0; i < 5; i++) {
        v[i] = rs.getLong(i + 1);
      }
      return v;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read pg_stat_wal: " + e.getMessage(), e);
    }
  }

  private long lsn() {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the WAL position: " + e.getMessage(), e);
    }
  }

  /**
   * CPU ticks of the pool's backends ({@code own}) and of the server's processes that are not
   * client backends ({@code background}).
   */
  private void processes(Map<Integer, Long> own, Map<Integer, Long> background) {
    Set<Integer> clients = new HashSet<>();
    int postmaster = -1;
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pid, coalesce(application_name, ''), backend_type, pg_backend_pid()"
                    + " FROM pg_stat_activity")) {
      while (rs.next()) {
        int pid = rs.getInt(1);
        if ("client backend".equals(rs.getString(3))) {
          clients.add(pid);
          if (app.equals(rs.getString(2))) {
            Long t = ticks(pid);
            if (t != null) {
              own.put(pid, t);
            }
          }
        }
        if (postmaster < 0) {
          postmaster = parent(rs.getInt(4));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read pg_stat_activity: " + e.getMessage(), e);
    }
    if (postmaster <= 0) {
      return;
    }
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        String name = d.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        int pid = Integer.parseInt(name);
        if (clients.contains(pid)) {
          continue;
        }
        String[] f = stat(pid);
        if (f != null && Integer.parseInt(f[1]) == postmaster) {
          background.put(pid, Long.parseLong(f[11]) + Long.parseLong(f[12]));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux or not visible: background CPU not measured
    }
  }

  private static int parent(int pid) {
    String[] f = stat(pid);
    return f == null ? -1 : Integer.parseInt(f[1]);
  }

  private static Long ticks(int pid) {
    String[] f = stat(pid);
    return f == null ? null : Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  /**
   * The fields of /proc/pid/stat after the command: [0] state, [1] ppid, [11] utime, [12] stime.
   */
  private static String[] stat(int pid) {
    try {
      String s = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"));
      return s.substring(s.lastIndexOf(')') + 2).trim().split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
