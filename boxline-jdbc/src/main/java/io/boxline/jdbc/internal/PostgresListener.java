package io.boxline.jdbc.internal;

import io.boxline.spi.PartitionHead;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The {@code boxline-listener} thread: holds one connection with LISTEN on the outbox and log
 * channels and forwards notifications. Waiting for notifications reads the socket and sends no
 * statements, so an idle listener costs the database nothing. On connection loss it reconnects with
 * backoff and asks everyone to re-check, since notifications sent meanwhile are lost.
 */
final class PostgresListener {
  private static final System.Logger LOG = System.getLogger(PostgresListener.class.getName());

  /** NOTIFY payloads are limited to 8000 bytes; past this, the message says "look everywhere". */
  static final int MAX_PAYLOAD = 7000;

  private final DataSource dataSource;
  private final String outboxChannel;
  private final String logChannel;
  private final WakeupListener target;
  private final Thread thread;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile boolean running = true;
  private volatile Connection connection;

  PostgresListener(
      DataSource dataSource, String outboxChannel, String logChannel, WakeupListener target) {
    this.dataSource = dataSource;
    this.outboxChannel = outboxChannel;
    this.logChannel = logChannel;
    this.target = target;
    this.thread = new Thread(this::run, "boxline-listener-" + logChannel);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  private void run() {
    long backoffMs = 100;
    boolean first = true;
    while (running) {
      try (Connection c = dataSource.getConnection()) {
        connection = c;
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
          st.execute("LISTEN " + outboxChannel);
          st.execute("LISTEN " + logChannel);
        }
        if (!first) {
          target.resynchronize();
        }
        first = false;
        backoffMs = 100;
        PGConnection pg = c.unwrap(PGConnection.class);
        while (running) {
          PGNotification[] notes = pg.getNotifications(500);
          if (notes == null) {
            continue;
          }
          boolean outbox = false;
          for (PGNotification n : notes) {
            if (n.getName().equals(outboxChannel)) {
              outbox = true;
            } else {
              target.logAppended(decodeHeads(n.getParameter()));
            }
          }
          if (outbox) {
            target.outboxChanged();
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          break;
        }
        LOG.log(
            Level.WARNING,
            "wake-up listener lost its connection ({0}); reconnecting in {1} ms",
            e.getMessage(),
            backoffMs);
        try {
          if (stopped.await(backoffMs, TimeUnit.MILLISECONDS)) {
            break;
          }
        } catch (InterruptedException ie) {
          break;
        }
        backoffMs = Math.min(backoffMs * 2, 5000);
      } finally {
        connection = null;
      }
    }
  }

  void stop() {
    running = false;
    stopped.countDown();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * {@code topicId:partition:lastSeq} items joined by commas, or {@code *} when they would not fit.
   */
  static String encodeHeads(List<PartitionHead> heads) {
    StringBuilder sb = new StringBuilder();
    for (PartitionHead h : heads) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(h.topicId()).append(':').append(h.partition()).append(':').append(h.lastSequence());
      if (sb.length() > MAX_PAYLOAD) {
        return "*";
      }
    }
    return sb.toString();
  }

  static List<PartitionHead> decodeHeads(String payload) {
    if (payload == null || payload.isEmpty() || payload.equals("*")) {
      return null;
    }
    List<PartitionHead> heads = new ArrayList<>();
    for (String item : payload.split(",")) {
      String[] f = item.split(":");
      if (f.length != 3) {
        return null;
      }
      try {
        heads.add(
            new PartitionHead(Long.parseLong(f[0]), Integer.parseInt(f[1]), Long.parseLong(f[2])));
      } catch (NumberFormatException e) {
        return null;
      }
    }
    return heads;
  }
}
