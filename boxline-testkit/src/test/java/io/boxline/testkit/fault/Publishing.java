package io.boxline.testkit.fault;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/** Publishing helpers: waves of raw events in transactions, and a paced background publisher. */
final class Publishing {
  private Publishing() {}

  /** Publishes {@code count} events spread over {@code topics} in transactions of {@code perTx}. */
  static Set<UUID> wave(Boxline boxline, List<TopicName> topics, int count, int perTx, String tag) {
    Set<UUID> ids = ConcurrentHashMap.newKeySet();
    for (int start = 0; start < count; start += perTx) {
      List<OutgoingEvent> batch = new ArrayList<>();
      for (int i = start; i < Math.min(count, start + perTx); i++) {
        batch.add(event(topics.get(i % topics.size()), tag, i));
      }
      ids.addAll(publish(boxline, batch));
    }
    return ids;
  }

  static OutgoingEvent event(TopicName topic, String tag, long i) {
    return OutgoingEvent.builder(topic)
        .type("fault.test")
        .key("key-" + (i % 997))
        .payload((tag + "-" + i).getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static List<UUID> publish(Boxline boxline, List<OutgoingEvent> batch) {
    List<PublishResult> results =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    List<UUID> ids = new ArrayList<>(results.size());
    for (PublishResult r : results) {
      ids.add(r.eventId());
    }
    return ids;
  }

  /**
   * A thread that keeps publishing transactions of {@code perTx} events, at most one per {@code
   * pauseMillis} (a load pace, not a synchronisation), until {@link #stop()}. Only events of
   * committed transactions are recorded.
   */
  static final class Background implements AutoCloseable {
    private final Boxline boxline;
    private final List<TopicName> topics;
    private final int perTx;
    private final long pauseNanos;
    private final Set<UUID> ids = ConcurrentHashMap.newKeySet();
    private final AtomicLong transactions = new AtomicLong();
    private final AtomicInteger counter = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean running = true;

    Background(Boxline boxline, List<TopicName> topics, int perTx, long pauseMillis) {
      this.boxline = boxline;
      this.topics = topics;
      this.perTx = perTx;
      this.pauseNanos = TimeUnit.MILLISECONDS.toNanos(pauseMillis);
      this.thread = new Thread(this::run, "background-publisher");
      thread.setDaemon(true);
    }

    Background start() {
      thread.start();
      return this;
    }

    private void run() {
      try {
        while (running) {
          List<OutgoingEvent> batch = new ArrayList<>(perTx);
          for (int i = 0; i < perTx; i++) {
            int n = counter.getAndIncrement();
            batch.add(event(topics.get(n % topics.size()), "bg", n));
          }
          ids.addAll(publish(boxline, batch));
          transactions.incrementAndGet();
          LockSupport.parkNanos(pauseNanos);
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    }

    /** Committed transactions so far. */
    long transactions() {
      return transactions.get();
    }

    /** Ids of committed events (complete once {@link #stop()} returned). */
    Set<UUID> ids() {
      return ids;
    }

    /** Stops publishing, waits for the thread, and rethrows what made it fail, if anything. */
    Set<UUID> stop() {
      running = false;
      try {
        thread.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (thread.isAlive()) {
        throw new AssertionError("background publisher did not stop within 30 s");
      }
      if (failure.get() != null) {
        throw new AssertionError("background publisher failed", failure.get());
      }
      return ids;
    }

    /** Fails when the publisher thread has died. */
    void check() {
      if (failure.get() != null) {
        throw new AssertionError("background publisher failed", failure.get());
      }
    }

    /** Stops publishing and waits (bounded) for the thread; never throws. */
    @Override
    public void close() {
      running = false;
      try {
        thread.join(TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
