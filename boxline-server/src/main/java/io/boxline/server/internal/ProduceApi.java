package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Publishing over HTTP (one request, one transaction) and tailing a topic as server-sent events.
 */
final class ProduceApi {
  static final int MAX_EVENTS_PER_REQUEST = 1000;

  /**
   * The longest a tail waits without looking at its topic: it is woken when the topic's log grows
   * (here or, through the database's signal, on another server), so this only bounds a lost signal.
   */
  private static final long LOOK_MILLIS = 60_000;

  private static final long KEEPALIVE_MILLIS = 15_000;

  private final Boxline boxline;
  private final Semaphore streams;
  private final int maxStreams;
  private final GroupCommit commits;
  private final BooleanSupplier running;

  /** What each open tail waits on between two looks at its topic; completing one wakes it. */
  private final Set<CompletableFuture<Void>> waits = ConcurrentHashMap.newKeySet();

  ProduceApi(Boxline boxline, GroupCommit commits, int maxStreams, BooleanSupplier running) {
    this.boxline = boxline;
    this.commits = commits;
    this.streams = new Semaphore(maxStreams);
    this.maxStreams = maxStreams;
    this.running = running;
  }

  void register(Router r) {
    r.add("POST", "/v1/topics/{topic}/events", this::publish);
    r.add("GET", "/v1/topics/{topic}/tail", this::tail);
  }

  private void publish(Call c) {
    TopicName topic = c.topic();
    c.caller.require(Action.PUBLISH, topic);
    if (c.bodyBytes.length == 0) {
      throw ApiException.badRequest(
          "this request needs a JSON body: one event or {\"events\": [...]}");
    }
    ApiRequests.Publish body = RequestBodies.bindPublish(c.bodyBytes, ApiRequests.Publish.class);
    if (body == null) {
      throw ApiException.badRequest(
          "the body must be one event (a JSON object) or {\"events\": [ ... ]}");
    }
    boolean batch = body.isBatch();
    List<ApiRequests.Publish> items = batch ? body.events() : List.of(body);
    if (batch && body.hasEventFields()) {
      throw ApiException.badRequest(
          "a batch is {\"events\": [ ... ]} with nothing beside the list");
    }
    if (items.isEmpty()) {
      throw ApiException.badRequest("the batch holds no events");
    }
    if (items.size() > MAX_EVENTS_PER_REQUEST) {
      throw new ApiException(
          413,
          "too_large",
          "a request holds at most "
              + MAX_EVENTS_PER_REQUEST
              + " events; got "
              + items.size()
              + ": split the batch");
    }
    for (int i = 0; i < items.size(); i++) {
      if (items.get(i) == null) {
        throw ApiException.badRequest("events[" + i + "]: an event must be a JSON object");
      }
      if (batch && items.get(i).isBatch()) {
        throw ApiException.badRequest(
            "events[" + i + "]: an event holds no \"events\"; a batch is one list of events");
      }
    }
    List<byte[]> payloads = Payloads.cut(c.bodyBytes, batch);
    // An unknown topic is refused by the publisher (404) from its topic cache: no query here.
    List<OutgoingEvent> events = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      events.add(event(topic, items.get(i), payloads.get(i), batch ? "events[" + i + "]: " : ""));
    }
    // Committed with other requests' events in a shared transaction; the worker is free meanwhile.
    CompletableFuture<List<PublishResult>> committed = commits.submit(events);
    c.later(committed, next -> published(next, topic, committed));
  }

  private static void published(
      Call c, TopicName topic, CompletableFuture<List<PublishResult>> committed) throws Exception {
    List<PublishResult> results;
    try {
      results = committed.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof io.boxline.NotFoundException) {
        // The library's message names its Java call; an HTTP client creates topics over HTTP.
        throw ApiException.notFound(
            "topic '"
                + topic
                + "' does not exist; create it first: POST /v1/topics with {\"name\": \""
                + topic
                + "\"}");
      }
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw e;
    }
    List<ApiBodies.Published> out = new ArrayList<>();
    for (PublishResult r : results) {
      out.add(new ApiBodies.Published(r.eventId().toString(), r.partition(), r.duplicate()));
    }
    c.json(200, new ApiBodies.PublishAnswer(topic.toString(), out));
  }

  private static OutgoingEvent event(
      TopicName topic, ApiRequests.Publish e, byte[] payload, String at) {
    if (e.type() == null) {
      throw ApiException.badRequest(at + "an event needs \"type\", e.g. \"OrderPlaced\"");
    }
    if (e.payload() != null && e.payloadBase64() != null) {
      throw ApiException.badRequest(at + "give payload (JSON) or payloadBase64 (bytes), not both");
    }
    OutgoingEvent.Builder b = OutgoingEvent.builder(topic);
    try {
      if (e.id() != null) {
        b.id(AdminApi.uuid(e.id()));
      }
      if (e.key() != null) {
        b.key(e.key());
      }
      b.type(e.type());
      if (e.source() != null) {
        b.source(e.source());
      }
      if (e.idempotencyKey() != null) {
        b.idempotencyKey(e.idempotencyKey());
      }
      if (e.deliverAt() != null) {
        try {
          b.deliverAt(Instant.parse(e.deliverAt()));
        } catch (DateTimeParseException ex) {
          throw ApiException.badRequest(
              at
                  + "deliverAt must be an ISO-8601 time, got '"
                  + Problems.quote(e.deliverAt())
                  + "'");
        }
      }
      if (e.payloadBase64() != null) {
        try {
          b.payload(Base64.getDecoder().decode(e.payloadBase64()));
        } catch (IllegalArgumentException ex) {
          throw ApiException.badRequest(at + "payloadBase64 is not base64");
        }
        b.contentType(e.contentType() == null ? "application/octet-stream" : e.contentType());
      } else if (payload != null) {
        // Stored as the sender wrote it: the bytes of the value in the request body.
        String type = e.contentType() == null ? "application/json" : e.contentType();
        if (!Payloads.isJson(type)) {
          throw ApiException.badRequest(
              at
                  + "payload holds JSON, but contentType is '"
                  + Problems.quote(type)
                  + "'; send other content as payloadBase64 with its contentType");
        }
        b.payload(payload);
        b.contentType(type);
      } else if (e.contentType() != null) {
        b.contentType(e.contentType());
      }
      if (e.headers() != null) {
        e.headers()
            .forEach(
                (k, v) -> {
                  if (v == null) {
                    throw ApiException.badRequest(at + "header '" + k + "' must be a string");
                  }
                  b.header(k, v);
                });
      }
      return b.build();
    } catch (io.boxline.ValidationException ex) {
      throw ApiException.badRequest(at + ex.getMessage());
    }
  }

  /**
   * Follows a topic as server-sent events. Each event's SSE id lists the position of every
   * partition read so far ({@code 0:17,3:5}), so a client that reconnects with {@code
   * Last-Event-ID} resumes where it stopped; {@code from} (earliest, latest) sets the start
   * otherwise, and {@code key} / {@code type} filter. No cursor moves.
   */
  private void tail(Call c) throws Exception {
    TopicName topic = c.topic();
    AdminApi.requireReadEvents(c.caller, topic);
    String resume = c.header("Last-Event-ID");
    if (resume == null) {
      resume = c.query("position").orElse(null);
    }
    TailCursor cursor = TailCursor.open(boxline, c, topic, resume, "Last-Event-ID");
    if (!streams.tryAcquire()) {
      c.setHeader("Retry-After", "5");
      throw new ApiException(
          503,
          "too_many_streams",
          "this server already serves http.maxStreams tail streams; retry later or raise it");
    }
    Tail t = new Tail(cursor);
    org.eclipse.jetty.server.Request.addCompletionListener(
        c.request,
        failure -> {
          t.ended = true;
          streams.release();
          CompletableFuture<Void> w = t.woken;
          if (w != null) {
            waits.remove(w);
            w.cancel(false);
          }
        });
    try {
      t.out = c.stream("text/event-stream");
      t.out.write(("retry: 1000\n\n").getBytes(StandardCharsets.UTF_8));
      t.out.flush();
    } catch (IOException closedByClient) {
      return;
    }
    t.lastWrite = System.nanoTime();
    t.look = true;
    pump(c, t);
  }

  /** One open tail stream: where it stands and what it waits on. */
  private static final class Tail {
    final TailCursor cursor;
    OutputStream out;
    long lastWrite;

    /** Whether the next step reads the topic's heads (woken by an append, or the first step). */
    boolean look;

    /** Completes when the topic's log grows (or after {@link #LOOK_MILLIS}); kept across steps. */
    volatile CompletableFuture<Void> woken;

    volatile boolean ended;

    Tail(TailCursor cursor) {
      this.cursor = cursor;
    }
  }

  /**
   * One step of a tail: sends what the topic's log holds past the stream's positions when it was
   * woken by an append, a keep-alive when the stream was quiet for {@link #KEEPALIVE_MILLIS}, then
   * waits (holding no thread) for the next append or keep-alive. A quiet tail reads nothing from
   * the database (but a look every {@link TailCursor#lookEvery}).
   */
  private void pump(Call c, Tail t) throws Exception {
    try {
      while (running.getAsBoolean() && !t.ended) {
        if (t.woken == null) {
          // Taken before the heads are read: an event placed meanwhile ends the wait at once.
          t.woken =
              boxline
                  .remoteConsumers()
                  .awaitAppend(
                      t.cursor.topic,
                      TailCursor.lookEvery(boxline, Duration.ofMillis(LOOK_MILLIS)));
          waits.add(t.woken);
        }
        boolean sent = false;
        if (t.look) {
          t.look = false;
          sent = sendNew(t);
        }
        if (sent) {
          t.out.flush();
          t.lastWrite = System.nanoTime();
          continue;
        }
        long quiet = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t.lastWrite);
        if (quiet >= KEEPALIVE_MILLIS) {
          t.out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
          t.out.flush();
          t.lastWrite = System.nanoTime();
          quiet = 0;
        }
        CompletableFuture<Void> woken = t.woken;
        if (!running.getAsBoolean()) {
          woken.complete(null); // a stop that came meanwhile
        }
        CompletableFuture<Boolean> step =
            woken
                .handle((v, e) -> true)
                .completeOnTimeout(false, KEEPALIVE_MILLIS - quiet, TimeUnit.MILLISECONDS);
        c.later(
            step,
            next -> {
              if (step.getNow(false)) {
                waits.remove(woken);
                t.woken = null;
                t.look = true;
              }
              pump(next, t);
            });
        return;
      }
    } catch (IOException closedByClient) {
      // The client went away: the stream ends.
    } catch (io.boxline.NotFoundException topicDeleted) {
      // The topic was deleted while followed: the stream ends; a reconnect gets 404.
    }
  }

  /** Writes the events past the tail's positions; true when it wrote any. */
  private boolean sendNew(Tail t) throws IOException {
    int sent =
        t.cursor.readNew(
            boxline,
            () -> false,
            (e, position) -> {
              // A payload keeps its line breaks; each line is one data line, as SSE has it.
              String data =
                  Call.JSON
                      .writeValueAsString(Views.event(e, t.cursor.raw))
                      .replace("\r\n", "\n")
                      .replace('\r', '\n')
                      .replace("\n", "\ndata: ");
              t.out.write(
                  ("id: " + position + "\nevent: event\ndata: " + data + "\n\n")
                      .getBytes(StandardCharsets.UTF_8));
            });
    return sent > 0;
  }

  /**
   * Takes one of the {@code http.maxStreams} slots for a WebSocket tail; false when all are taken.
   */
  boolean takeStream() {
    return streams.tryAcquire();
  }

  void releaseStream() {
    streams.release();
  }

  /** Tails open now, of both kinds, for the gauge. */
  int openStreams() {
    return maxStreams - streams.availablePermits();
  }

  /** Wakes every open tail (the server stops): each sees that and ends its stream. */
  void wakeAll() {
    waits.forEach(w -> w.complete(null));
  }
}
