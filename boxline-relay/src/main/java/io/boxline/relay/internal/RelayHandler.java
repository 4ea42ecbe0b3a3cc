package io.boxline.relay.internal;

import io.boxline.BatchFailure;
import io.boxline.BatchHandler;
import io.boxline.BoxlineException;
import io.boxline.BoxlineObserver;
import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.TopicName;
import io.boxline.relay.Sink;
import io.boxline.relay.SinkException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The relay's batch handler: sends a batch, resends what failed retryably (with backoff, while the
 * partition waits), and reports what failed permanently as dead letters through {@link
 * BatchFailure}. Returns normally only when every event not dead-lettered was confirmed, so the
 * cursor never moves past an unconfirmed event. Every send is reported to the Boxline instance's
 * observers ({@link BoxlineObserver#sinkDelivered}): the confirmed events as a success, the others
 * (if any) with the sink's failure, both with the duration of the send.
 */
public final class RelayHandler implements BatchHandler {
  private static final System.Logger LOG = System.getLogger(RelayHandler.class.getName());

  private final Sink sink;
  private final BoxlineObserver observer;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final Duration stallTimeout;
  private final String subscription;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final LongAdder sent = new LongAdder();
  private final LongAdder deadLettered = new LongAdder();
  private final LongAdder retries = new LongAdder();
  private final AtomicInteger stalled = new AtomicInteger();

  public RelayHandler(
      Sink sink,
      Duration initialBackoff,
      Duration maxBackoff,
      Duration stallTimeout,
      String subscription,
      BoxlineObserver observer) {
    this.sink = sink;
    this.observer = observer;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
    this.stallTimeout = stallTimeout;
    this.subscription = subscription;
  }

  @Override
  public void handle(List<Event> batch) {
    List<Event> pending = batch;
    Map<Event, String> dead = new LinkedHashMap<>();
    int failedSends = 0;
    int idleSends = 0;
    long stallStart = 0;
    try {
      while (true) {
        if (closed.getCount() == 0) {
          throw new BoxlineException(
              "relay of subscription '"
                  + subscription
                  + "' is closing; "
                  + pending.size()
                  + " unconfirmed events stay behind the cursor and will be sent again");
        }
        SinkException failure;
        long started = System.nanoTime();
        try {
          sink.send(pending);
          report(pending, started, null);
          sent.add(pending.size());
          break;
        } catch (SinkException e) {
          failure = e;
        } catch (RuntimeException e) {
          report(pending, started, e);
          throw e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        Map<UUID, SinkException.Failure> byId = new HashMap<>();
        for (SinkException.Failure f : failure.failures()) {
          byId.put(f.event().id(), f);
        }
        List<Event> retry = new ArrayList<>();
        List<Event> confirmed = new ArrayList<>();
        List<Event> failed = new ArrayList<>();
        int failedHere = 0;
        for (Event e : pending) {
          SinkException.Failure f = byId.get(e.id());
          if (f == null) {
            confirmed.add(e);
            continue;
          }
          failed.add(e);
          failedHere++;
          if (f.kind() == SinkException.Kind.PERMANENT) {
            dead.put(e, f.reason());
          } else {
            retry.add(e);
          }
        }
        if (failedHere == 0) {
          // The sink failed without naming any event of this batch: nothing can be taken as
          // confirmed, so the whole batch is sent again.
          LOG.log(
              Level.WARNING,
              "relay {0} -> {1}: the sink failed without naming an event of the batch; sending all"
                  + " {2} again: {3}",
              subscription,
              sink.name(),
              pending.size(),
              failure.getMessage());
          retry.addAll(pending);
          failedHere = pending.size();
          confirmed.clear();
          failed = pending;
        }
        report(confirmed, took, null);
        report(failed, took, failure);
        sent.add(pending.size() - failedHere);
        if (retry.isEmpty()) {
          break;
        }
        failedSends++;
        // The backoff grows only while sends make no progress at all; a send that got some events
        // through (or settled them as rejected) starts it again from the initial pause.
        boolean progress = retry.size() < pending.size();
        idleSends = progress ? 1 : idleSends + 1;
        if (failedSends == 1) {
          stalled.incrementAndGet();
          stallStart = System.nanoTime();
          LOG.log(
              Level.WARNING,
              "relay {0} -> {1}: {2} events not confirmed, sending again with backoff: {3}",
              subscription,
              sink.name(),
              retry.size(),
              failure.getMessage());
        }
        if (stallTimeout != null && System.nanoTime() - stallStart >= stallTimeout.toNanos()) {
          if (batch.size() == 1) {
            throw failure; // a single event retried by Boxline: its retry policy decides
          }
          throw handBack(retry, failure, dead);
        }
        retries.increment();
        if (pause(backoff(idleSends))) {
          continue; // closing: the check at the top of the loop throws
        }
        pending = retry;
      }
    } finally {
      if (failedSends > 0) {
        stalled.decrementAndGet();
      }
    }
    if (failedSends > 0) {
      LOG.log(
          Level.INFO,
          "relay {0} -> {1}: recovered after {2} failed sends ({3} ms)",
          subscription,
          sink.name(),
          failedSends,
          (System.nanoTime() - stallStart) / 1_000_000);
    }
    if (!dead.isEmpty()) {
      if (batch.size() == 1) {
        // Boxline hands single events to the batch handler when it retries them one by one; a
        // HandlerDecision says directly what a BatchFailure of one event would.
        deadLettered.increment();
        throw HandlerDecision.deadLetter(
            sink.name() + " rejected it: " + dead.values().iterator().next());
      }
      BatchFailure.Builder report = BatchFailure.builder();
      dead.forEach(
          (e, reason) ->
              report.failed(
                  e, HandlerDecision.deadLetter(sink.name() + " rejected it: " + reason)));
      deadLettered.add(dead.size());
      throw report.build();
    }
  }

  /**
   * After the stall timeout: hands the still-failing events back to Boxline's retry policy (parked,
   * retried later, dead-lettered after its attempts), and dead-letters the rejected ones.
   */
  private BatchFailure handBack(List<Event> retry, SinkException failure, Map<Event, String> dead) {
    LOG.log(
        Level.WARNING,
        "relay {0} -> {1}: {2} events still not confirmed after the stall timeout {3};"
            + " handing them to the retry policy",
        subscription,
        sink.name(),
        retry.size(),
        stallTimeout);
    BatchFailure.Builder report = BatchFailure.builder();
    for (Event e : retry) {
      report.failed(e, failure);
    }
    dead.forEach(
        (e, reason) ->
            report.failed(e, HandlerDecision.deadLetter(sink.name() + " rejected it: " + reason)));
    deadLettered.add(dead.size());
    return report.build();
  }

  private void report(List<Event> events, long startedNanos, Throwable error) {
    report(events, Duration.ofNanos(System.nanoTime() - startedNanos), error);
  }

  /**
   * Tells the observers that {@code events} were handed to the sink in {@code took}: one call per
   * topic (a batch is one partition's, so normally one call).
   */
  private void report(List<Event> events, Duration took, Throwable error) {
    if (events.isEmpty()) {
      return;
    }
    TopicName first = events.get(0).topic();
    int same = 0;
    for (Event e : events) {
      if (e.topic().equals(first)) {
        same++;
      }
    }
    if (same == events.size()) {
      delivered(first, events.size(), took, error);
      return;
    }
    Map<TopicName, Integer> byTopic = new LinkedHashMap<>();
    for (Event e : events) {
      byTopic.merge(e.topic(), 1, Integer::sum);
    }
    byTopic.forEach((topic, n) -> delivered(topic, n, took, error));
  }

  private void delivered(TopicName topic, int events, Duration took, Throwable error) {
    try {
      observer.sinkDelivered(sink.name(), topic, events, took, error);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "observer failed in sinkDelivered", e);
    }
  }

  private Duration backoff(int idleSends) {
    long initial = initialBackoff.toNanos();
    long max = maxBackoff.toNanos();
    long delay = initial;
    for (int i = 1; i < idleSends && delay < max; i++) {
      delay = delay * 2;
    }
    return Duration.ofNanos(Math.min(delay, max));
  }

  /** Waits {@code d}; true when the relay is closing (or the thread was interrupted). */
  private boolean pause(Duration d) {
    try {
      return closed.await(d.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxlineException(
          "relay of subscription '" + subscription + "' was interrupted while backing off", e);
    }
  }

  /** Wakes every partition that waits out a backoff; later sends are refused. */
  public void close() {
    closed.countDown();
  }

  public long sent() {
    return sent.sum();
  }

  public long deadLettered() {
    return deadLettered.sum();
  }

  public long retries() {
    return retries.sum();
  }

  public int stalled() {
    return stalled.get();
  }
}
