package io.boxline.nats.internal;

import io.boxline.Event;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.SinkException;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/** Publishes batches to JetStream over a lazily (re)opened connection and classifies outcomes. */
public final class JetStreamDelivery {
  private static final System.Logger LOG = System.getLogger(JetStreamDelivery.class.getName());

  /** JetStream: message size exceeds the stream's maximum (JSStreamMessageExceedsMaximumErr). */
  private static final int MESSAGE_TOO_LARGE = 10054;

  private final Options options;
  private final Function<Event, String> subject;
  private final CloudEventsMapping mapping;
  private final Duration ackTimeout;
  private final String expectedStream;
  private final AtomicLong duplicates = new AtomicLong();
  private Connection connection; // guarded by this
  private JetStream jetStream; // guarded by this
  private volatile boolean closed;

  public JetStreamDelivery(
      Options options,
      Function<Event, String> subject,
      CloudEventsMapping mapping,
      Duration ackTimeout,
      String expectedStream) {
    this.options = options;
    this.subject = subject;
    this.mapping = mapping;
    this.ackTimeout = ackTimeout;
    this.expectedStream = expectedStream;
  }

  public void send(List<Event> events) {
    if (closed) {
      throw SinkException.retryable(events, "the NATS sink is closed", null);
    }
    JetStream js;
    try {
      js = jetStream();
    } catch (IOException | RuntimeException e) {
      throw SinkException.retryable(events, "cannot connect to NATS: " + describe(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw SinkException.retryable(events, "interrupted while connecting to NATS", e);
    }
    SinkException.Builder failures = SinkException.builder();
    List<CompletableFuture<PublishAck>> futures = new ArrayList<>(events.size());
    int stopAt = events.size();
    String stopReason = null;
    for (int i = 0; i < events.size(); i++) {
      Event e = events.get(i);
      String subj;
      try {
        subj = subject.apply(e);
        if (subj == null || subj.isBlank()) {
          throw new IllegalArgumentException("the subject function returned no subject");
        }
      } catch (RuntimeException ex) {
        futures.add(null);
        failures.permanent(e, "cannot map the event to a subject: " + ex).cause(ex);
        continue;
      }
      try {
        futures.add(js.publishAsync(subj, headers(e), body(e), publishOptions(e)));
      } catch (IllegalArgumentException ex) {
        // invalid subject or header, or larger than the server's max_payload
        futures.add(null);
        failures.permanent(e, describe(ex)).cause(ex);
      } catch (RuntimeException ex) {
        stopAt = i;
        stopReason = "cannot publish: " + describe(ex);
        failures.cause(ex);
        break;
      }
    }
    long deadline = System.nanoTime() + ackTimeout.toNanos();
    for (int i = 0; i < futures.size() && i < stopAt; i++) {
      CompletableFuture<PublishAck> f = futures.get(i);
      if (f == null) {
        continue;
      }
      try {
        PublishAck ack = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (ack.isDuplicate()) {
          duplicates.incrementAndGet();
        }
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        stopAt = i;
        stopReason = "interrupted while waiting for acknowledgements";
      } catch (TimeoutException ex) {
        stopAt = i;
        stopReason = "no acknowledgement within " + ackTimeout;
        failures.cause(ex);
      } catch (CancellationException ex) {
        stopAt = i;
        stopReason = "publish cancelled (connection lost)";
        failures.cause(ex);
      } catch (ExecutionException ex) {
        Throwable cause = ex.getCause() == null ? ex : ex.getCause();
        if (apiErrorCode(cause) == MESSAGE_TOO_LARGE) {
          failures.permanent(events.get(i), describe(cause)).cause(cause);
        } else {
          stopAt = i;
          stopReason = describe(cause);
          failures.cause(cause);
        }
      }
    }
    if (stopAt < events.size()) {
      for (int i = stopAt; i < futures.size(); i++) {
        if (futures.get(i) != null) {
          futures.get(i).cancel(false);
        }
      }
      dropConnectionIfBroken();
      failures.retryable(events.get(stopAt), stopReason);
      failures.retryable(
          events.subList(stopAt + 1, events.size()),
          "published again after an earlier message of the batch failed (" + stopReason + ")");
    }
    if (!failures.isEmpty()) {
      throw failures.build();
    }
  }

  /** The JetStream API error code somewhere in the cause chain (the client wraps it), or -1. */
  private static int apiErrorCode(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof JetStreamApiException) {
        return ((JetStreamApiException) c).getApiErrorCode();
      }
    }
    return -1;
  }

  private Headers headers(Event e) {
    Headers h = new Headers();
    if (mapping.mode() == CloudEventsMapping.Mode.STRUCTURED) {
      h.put("content-type", CloudEventsMapping.JSON_CONTENT_TYPE);
    } else {
      mapping.binaryAttributes(e).forEach((name, value) -> h.put("ce-" + name, value));
      if (e.contentType() != null) {
        h.put("content-type", e.contentType());
      }
    }
    return h;
  }

  private byte[] body(Event e) {
    if (mapping.mode() == CloudEventsMapping.Mode.STRUCTURED) {
      return mapping.toJson(e);
    }
    return e.payload() == null ? new byte[0] : e.payload();
  }

  private PublishOptions publishOptions(Event e) {
    PublishOptions.Builder b = PublishOptions.builder().messageId(e.id().toString());
    if (expectedStream != null) {
      b.expectedStream(expectedStream);
    }
    return b.build();
  }

  private synchronized JetStream jetStream() throws IOException, InterruptedException {
    if (closed) {
      throw new IOException("the NATS sink is closed");
    }
    if (connection == null || connection.getStatus() != Connection.Status.CONNECTED) {
      if (connection != null) {
        LOG.log(Level.INFO, "nats sink: reconnecting (status {0})", connection.getStatus());
        closeQuietly(connection);
      }
      connection = null;
      Connection c = Nats.connect(options);
      jetStream = c.jetStream();
      connection = c;
    }
    return jetStream;
  }

  /** After a failure: a connection that is no longer connected is replaced at the next send. */
  private synchronized void dropConnectionIfBroken() {
    if (connection != null && connection.getStatus() != Connection.Status.CONNECTED) {
      closeQuietly(connection);
      connection = null;
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // already broken
    }
  }

  private static String describe(Throwable t) {
    String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    return m.length() > 1000 ? m.substring(0, 1000) : m;
  }

  public long duplicates() {
    return duplicates.get();
  }

  public void close() {
    Connection c;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      c = connection;
      connection = null;
    }
    if (c != null) {
      closeQuietly(c);
    }
  }
}
