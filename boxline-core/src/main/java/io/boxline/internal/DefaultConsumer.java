package io.boxline.internal;

import io.boxline.BatchHandler;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.spi.CursorState;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import io.boxline.spi.WakeupListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Delivers a subscription's partitions to one handler. A dispatcher thread ({@code
 * boxline-consumer-<id>}) tracks which partitions have a backlog and hands each to a worker ({@code
 * boxline-worker-<id>-N}); one partition is drained by at most one worker at a time, so its events
 * are handled in sequence order. The cursor is committed, fenced by the claimed epoch, after every
 * batch.
 */
final class DefaultConsumer implements Consumer, WakeupListener {
  private static final System.Logger LOG = System.getLogger(DefaultConsumer.class.getName());

  /** Mutable state of one partition; fields are only written by the worker that drains it. */
  private static final class Partition {
    final TopicInfo topic;
    final int partition;
    final long epoch;
    volatile long position;
    volatile long knownLast;
    volatile boolean fenced;
    final AtomicBoolean draining = new AtomicBoolean();

    Partition(TopicInfo topic, CursorState c) {
      this.topic = topic;
      this.partition = c.partition();
      this.epoch = c.epoch();
      this.position = c.position();
      this.knownLast = c.lastSequence();
    }
  }

  private final Store store;
  private final TopicCache topics;
  private final WakeupBus bus;
  private final SubscriptionInfo subscription;
  private final String id;
  private final EventHandler handler;
  private final BatchHandler batchHandler;
  private final int batchSize;
  private final int concurrency;
  private final Duration shutdownTimeout;
  private final long initialBackoffNanos;
  private final long maxBackoffNanos;
  private final long idlePollNanos;
  private final Runnable onClose;

  private final Map<Long, Partition> partitions = new ConcurrentHashMap<>();
  private final Signal signal = new Signal();
  private final CountDownLatch stopLatch = new CountDownLatch(1);
  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong fenced = new AtomicLong();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private volatile boolean stopping;
  private volatile boolean abandoned;
  private volatile boolean resync = true;
  private Thread dispatcher;
  private ExecutorService workers;

  DefaultConsumer(
      Store store,
      TopicCache topics,
      WakeupBus bus,
      SubscriptionInfo subscription,
      String id,
      EventHandler handler,
      BatchHandler batchHandler,
      int batchSize,
      int concurrency,
      Duration shutdownTimeout,
      Duration initialBackoff,
      Duration maxBackoff,
      Duration idlePoll,
      Runnable onClose) {
    this.store = store;
    this.topics = topics;
    this.bus = bus;
    this.subscription = subscription;
    this.id = id;
    this.handler = handler;
    this.batchHandler = batchHandler;
    this.batchSize = batchSize;
    this.concurrency = concurrency;
    this.shutdownTimeout = shutdownTimeout;
    this.initialBackoffNanos = initialBackoff.toNanos();
    this.maxBackoffNanos = maxBackoff.toNanos();
    this.idlePollNanos = idlePoll.toNanos();
    this.onClose = onClose;
  }

  private static long key(long topicId, int partition) {
    return (topicId << 17) | partition;
  }

  @Override
  public Consumer start() {
    if (!started.compareAndSet(false, true)) {
      return this;
    }
    for (CursorState c : store.claimCursors(subscription.id(), id)) {
      partitions.put(key(c.topicId(), c.partition()), new Partition(topics.get(c.topicId()), c));
    }
    AtomicInteger n = new AtomicInteger();
    workers =
        Executors.newFixedThreadPool(
            concurrency,
            r -> {
              Thread t = new Thread(r, "boxline-worker-" + id + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    bus.add(this);
    dispatcher = new Thread(this::dispatch, "boxline-consumer-" + id);
    dispatcher.setDaemon(true);
    dispatcher.start();
    LOG.log(
        Level.INFO,
        "consumer {0} started on subscription {1} ({2} partitions)",
        id,
        subscription.name(),
        partitions.size());
    return this;
  }

  @Override
  public String subscription() {
    return subscription.name();
  }

  @Override
  public long handledCount() {
    return handled.get();
  }

  @Override
  public long fencedCount() {
    return fenced.get();
  }

  // ---- wake-ups
  @Override
  public void outboxChanged() {}

  @Override
  public void logAppended(List<PartitionHead> heads) {
    if (heads == null) {
      resynchronize();
      return;
    }
    boolean any = false;
    for (PartitionHead h : heads) {
      Partition p = partitions.get(key(h.topicId(), h.partition()));
      if (p != null && h.lastSequence() > p.knownLast) {
        p.knownLast = h.lastSequence();
        any = true;
      }
    }
    if (any) {
      signal.raise();
    }
  }

  @Override
  public void resynchronize() {
    resync = true;
    signal.raise();
  }

  // ---- dispatch
  private void dispatch() {
    long backoff = TimeUnit.MILLISECONDS.toNanos(50);
    while (!stopping) {
      try {
        if (resync) {
          resync = false;
          for (PartitionHead h : store.backlogged(subscription.id())) {
            Partition p = partitions.get(key(h.topicId(), h.partition()));
            if (p != null && h.lastSequence() > p.knownLast) {
              p.knownLast = h.lastSequence();
            }
          }
        }
        for (Partition p : partitions.values()) {
          if (!p.fenced && p.knownLast > p.position && p.draining.compareAndSet(false, true)) {
            workers.execute(() -> drain(p));
          }
        }
        backoff = TimeUnit.MILLISECONDS.toNanos(50);
        if (!signal.await(idlePollNanos)) {
          resync = true;
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "consumer " + id + " could not look for new events; retrying", e);
        resync = true;
        if (waitForStop(backoff)) {
          return;
        }
        backoff = Math.min(backoff * 2, TimeUnit.SECONDS.toNanos(5));
      }
    }
  }

  private void drain(Partition p) {
    long backoff = initialBackoffNanos;
    try {
      while (!stopping && !p.fenced) {
        List<StoredEvent> rows;
        try {
          rows = store.read(p.topic.id(), p.partition, p.position, batchSize);
        } catch (RuntimeException e) {
          LOG.log(
              Level.WARNING, "consumer " + id + " could not read " + where(p) + "; retrying", e);
          if (waitForStop(backoff)) {
            return;
          }
          backoff = Math.min(backoff * 2, maxBackoffNanos);
          continue;
        }
        if (rows.isEmpty()) {
          return;
        }
        List<Event> batch = new ArrayList<>(rows.size());
        for (StoredEvent r : rows) {
          batch.add(
              new Event(
                  r.id(),
                  p.topic.name(),
                  p.partition,
                  r.sequence(),
                  r.key(),
                  r.type(),
                  r.source(),
                  r.contentType(),
                  r.payload(),
                  r.headers(),
                  r.createdAt()));
        }
        boolean complete = deliver(p, batch);
        if (!complete || (rows.size() < batchSize && p.knownLast <= p.position)) {
          return;
        }
      }
    } finally {
      p.draining.set(false);
      signal.raise(); // a head may have arrived while this partition was busy
    }
  }

  /**
   * Runs the handler on the batch, retrying in place, and commits the cursor up to the last handled
   * event. Returns true when the whole batch was handled and committed.
   */
  private boolean deliver(Partition p, List<Event> batch) {
    long backoff = initialBackoffNanos;
    int done = 0;
    int committed = 0;
    while (done < batch.size() && !stopping) {
      try {
        if (batchHandler != null) {
          batchHandler.handle(batch);
          done = batch.size();
        } else {
          handler.handle(batch.get(done));
          done++;
        }
        backoff = initialBackoffNanos;
      } catch (RuntimeException e) {
        LOG.log(
            Level.WARNING,
            "consumer "
                + id
                + ": handler failed on "
                + batch.get(done)
                + "; retrying in "
                + backoff / 1_000_000
                + " ms",
            e);
        if (done > committed && !abandoned) {
          // Keep what succeeded: a restart during the backoff must not redeliver it.
          commit(p, batch.get(done - 1).sequence(), done - committed);
          committed = done;
          if (p.fenced) {
            return false;
          }
        }
        if (waitForStop(backoff)) {
          break;
        }
        backoff = Math.min(backoff * 2, maxBackoffNanos);
      }
    }
    if (done > committed && !abandoned) {
      commit(p, batch.get(done - 1).sequence(), done - committed);
    }
    return done == batch.size() && !p.fenced;
  }

  private void commit(Partition p, long position, int count) {
    if (store.commitCursor(subscription.id(), p.topic.id(), p.partition, position, p.epoch)) {
      p.position = position;
      handled.addAndGet(count);
    } else {
      p.fenced = true;
      fenced.incrementAndGet();
      LOG.log(
          Level.WARNING,
          "consumer {0}: {1} was taken by another consumer (epoch {2} is stale); stopped that partition",
          id,
          where(p),
          p.epoch);
    }
  }

  private String where(Partition p) {
    return subscription.name() + " " + p.topic.name() + "#" + p.partition;
  }

  /** Waits up to {@code nanos}; true when the consumer is stopping. */
  private boolean waitForStop(long nanos) {
    try {
      return stopLatch.await(nanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  @Override
  public boolean stop(Duration timeout) {
    if (!stopped.compareAndSet(false, true)) {
      return true;
    }
    stopping = true;
    stopLatch.countDown();
    bus.remove(this);
    boolean clean = true;
    if (dispatcher != null) {
      signal.raise();
      try {
        dispatcher.join(timeout.toMillis());
        workers.shutdown();
        clean = workers.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!clean) {
          abandoned = true;
          workers.shutdownNow();
          workers.awaitTermination(1, TimeUnit.SECONDS);
          LOG.log(
              Level.WARNING,
              "consumer {0}: in-flight batches did not finish within {1}; abandoned them (they will be"
                  + " delivered again)",
              id,
              timeout);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        abandoned = true;
        workers.shutdownNow();
        clean = false;
      }
    }
    onClose.run();
    LOG.log(Level.INFO, "consumer {0} stopped; handled {1} events", id, handled.get());
    return clean;
  }

  @Override
  public void close() {
    stop(shutdownTimeout);
  }
}
