package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Commits the events of concurrent publish requests in shared database transactions. Each request
 * stays all-or-nothing and is answered only after the transaction holding it committed: when a
 * shared transaction fails, each of its requests is committed again in a transaction of its own, so
 * one bad request fails alone. Requests queue while a commit runs and the next commit takes them
 * all (up to {@link #MAX_EVENTS} events), so the busier the server, the fewer transactions per
 * event; an idle server commits a lone request at once.
 *
 * <p>The committers are named threads ({@code boxline-http-commit-<n>}); {@link #close} stops
 * taking requests, commits what is queued within its timeout, and fails the rest with 503.
 */
final class GroupCommit implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.http");

  /** The most events one shared transaction carries (a request of more has one to itself). */
  static final int MAX_EVENTS = 1000;

  private record Pending(List<OutgoingEvent> events, CompletableFuture<List<PublishResult>> done) {}

  private final Boxline boxline;
  private final BlockingQueue<Pending> queue;
  private final java.util.concurrent.Semaphore running;
  private final int concurrency;
  private final AtomicLong transactions = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();
  private volatile boolean closing;

  /**
   * @param concurrency transactions that may run at once (0: none start on their own; for tests)
   * @param capacity requests that may wait for a transaction; past it a request gets 503
   */
  GroupCommit(Boxline boxline, int concurrency, int capacity) {
    this.boxline = boxline;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.concurrency = concurrency;
    this.running = new java.util.concurrent.Semaphore(concurrency);
  }

  /** Completes with the request's results once its transaction committed, or with its error. */
  CompletableFuture<List<PublishResult>> submit(List<OutgoingEvent> events) {
    CompletableFuture<List<PublishResult>> done = new CompletableFuture<>();
    if (closing || !queue.offer(new Pending(events, done))) {
      done.completeExceptionally(
          closing
              ? new ApiException(
                  503, "shutting_down", "the server is shutting down; retry on another instance")
              : new ApiException(
                  503,
                  "overloaded",
                  "the server is committing as many publish requests as it can; retry after a"
                      + " second"));
      return done;
    }
    drain();
    return done;
  }

  /**
   * Commits what is queued while a transaction may start; also after this thread's own request is
   * done, so nothing is left queued with no commit running to take it.
   */
  private void drain() {
    while (!queue.isEmpty() && running.tryAcquire()) {
      try {
        Pending first = queue.poll();
        if (first != null) {
          commitWith(first, new ArrayList<>());
        }
      } finally {
        running.release();
      }
    }
  }

  /** Requests waiting for a committer, for the gauge. */
  int queued() {
    return queue.size();
  }

  /** Transactions committed (or tried) so far, for the metrics. */
  long transactions() {
    return transactions.get();
  }

  /** Publish requests committed (or failed) so far, for the metrics. */
  long requests() {
    return requests.get();
  }

  /** Commits what is queued now in one transaction (up to {@link #MAX_EVENTS}); for tests. */
  void commitQueued() {
    Pending first = queue.poll();
    if (first != null) {
      commitWith(first, new ArrayList<>());
    }
  }

  private void commitWith(Pending first, List<Pending> batch) {
    batch.clear();
    batch.add(first);
    int events = first.events().size();
    Pending next;
    while ((next = queue.peek()) != null && events + next.events().size() <= MAX_EVENTS) {
      Pending taken = queue.poll();
      if (taken == null) {
        break;
      }
      batch.add(taken);
      events += taken.events().size();
    }
    commit(batch);
  }

  private void commit(List<Pending> batch) {
    requests.addAndGet(batch.size());
    transactions.incrementAndGet();
    try {
      List<List<PublishResult>> results =
          boxline.inTransaction(
              tx -> {
                List<List<PublishResult>> out = new ArrayList<>(batch.size());
                for (Pending p : batch) {
                  out.add(boxline.publisher().publishAll(tx, p.events()));
                }
                return out;
              });
      for (int i = 0; i < batch.size(); i++) {
        batch.get(i).done().complete(results.get(i));
      }
    } catch (Throwable e) {
      if (batch.size() == 1) {
        batch.get(0).done().completeExceptionally(e);
        return;
      }
      // One request of the shared transaction failed it (or the database did): each gets a
      // transaction of its own, so only a failing one fails.
      LOG.log(
          Level.DEBUG,
          "a shared publish transaction of " + batch.size() + " requests failed; one by one",
          e);
      for (Pending p : batch) {
        transactions.incrementAndGet();
        try {
          p.done()
              .complete(
                  boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, p.events())));
        } catch (Throwable alone) {
          p.done().completeExceptionally(alone);
        }
      }
    }
  }

  /**
   * Stops taking requests, commits those queued within {@code timeout}, fails what is left with
   * 503. Safe to call twice.
   */
  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  void close(Duration timeout) {
    closing = true;
    // Commits running now finish (their requests are answered); what waits for one gets 503.
    try {
      if (running.tryAcquire(concurrency, timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        running.release(concurrency);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Pending left;
    while ((left = queue.poll()) != null) {
      left.done()
          .completeExceptionally(
              new ApiException(
                  503, "shutting_down", "the server is shutting down; retry on another instance"));
    }
  }
}
