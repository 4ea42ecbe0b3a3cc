package io.boxline.server.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Boxline;
import io.boxline.RemoteConsumers;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.StatusCode;
import org.eclipse.jetty.websocket.server.ServerWebSocketContainer;

/**
 * The WebSocket endpoints: a topic's tail ({@code GET /v1/ws/topics/{topic}/tail}) and a group
 * member on one socket ({@code GET /v1/ws/subscriptions/{subscription}/members/{member}}). The
 * upgrade request goes through the router like any other (503 while stopping, the same tokens and
 * scopes, JSON errors before the upgrade); after it, each socket's work runs on the HTTP workers
 * one step at a time, and no thread is held while a socket waits for events.
 */
final class WebSocketApi {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.http");

  /** The subprotocol the server accepts when offered (browsers need one accepted). */
  static final String PROTOCOL = "boxline.v1";

  /** A subprotocol {@code bearer.<token>} carries the token for clients that cannot set headers. */
  static final String BEARER = "bearer.";

  private static final long IDLE_MILLIS = 5_000;
  private static final long PING_MILLIS = 15_000;

  private final Boxline boxline;
  private final Auth auth;
  private final ProduceApi produce;
  private final Executor workers;
  private final BooleanSupplier running;
  private final ServerWebSocketContainer container;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  WebSocketApi(
      Server jetty,
      Boxline boxline,
      Auth auth,
      ProduceApi produce,
      Executor workers,
      BooleanSupplier running,
      int maxMessageBytes,
      Duration idleTimeout) {
    this.boxline = boxline;
    this.auth = auth;
    this.produce = produce;
    this.workers = workers;
    this.running = running;
    this.container = ServerWebSocketContainer.ensure(jetty);
    container.setMaxTextMessageSize(maxMessageBytes);
    container.setMaxBinaryMessageSize(1024);
    container.setIdleTimeout(idleTimeout);
  }

  void register(Router r) {
    // Open routes: the token may also come as a subprotocol, so these authenticate themselves.
    r.addOpen("GET", "/v1/ws/topics/{topic}/tail", this::tail);
    r.addOpen("GET", "/v1/ws/subscriptions/{subscription}/members/{member}", this::member);
  }

  /** Open sockets, for the gauge, tests and the log. */
  int open() {
    return open.size();
  }

  /**
   * The server stops: every socket gets a close frame 1001 (a tail first gets its resume position),
   * and members leave their groups; returns once they are closed or the time is up.
   */
  void closeAll(Duration timeout) {
    List<CompletableFuture<Void>> closed = new java.util.ArrayList<>();
    for (Socket s : open) {
      closed.add(s.closed);
      s.stop();
    }
    try {
      CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new))
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.log(Level.WARNING, open.size() + " WebSockets still open at the stop; closing them");
    }
  }

  private Auth.Caller caller(Call c) {
    String header = c.header("Authorization");
    if (header == null) {
      for (String p : offered(c)) {
        if (p.startsWith(BEARER)) {
          header = "Bearer " + p.substring(BEARER.length());
        }
      }
    }
    return auth.authenticate(header);
  }

  private static List<String> offered(Call c) {
    return c.request.getHeaders().getCSV(HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL, false);
  }

  private static void requireUpgrade(Call c) {
    String upgrade = c.header("Upgrade");
    if (upgrade == null || !upgrade.equalsIgnoreCase("websocket")) {
      c.setHeader("Upgrade", "websocket");
      throw new ApiException(
          426,
          "upgrade_required",
          "this endpoint is a WebSocket: connect with a WebSocket client (ws:// or wss://)");
    }
  }

  private void upgrade(Call c, Socket socket) {
    boolean accept = offered(c).contains(PROTOCOL);
    boolean upgraded =
        c.upgrade(
            container,
            (req, resp, cb) -> {
              if (accept) {
                resp.setAcceptedSubProtocol(PROTOCOL);
              }
              return socket;
            });
    if (!upgraded) {
      throw ApiException.badRequest(
          "the WebSocket handshake is incomplete: send Upgrade, Connection, Sec-WebSocket-Key and"
              + " Sec-WebSocket-Version 13");
    }
  }

  // ---- tail ----

  /**
   * Checks everything before the upgrade, so a refusal is an ordinary HTTP error; the token's scope
   * before whether it is an upgrade at all, so a plain request of another tenant gets 403.
   */
  private void tail(Call c) {
    Auth.Caller caller = caller(c);
    TopicName topic = c.topic();
    AdminApi.requireReadEvents(caller, topic);
    requireUpgrade(c);
    Tail tail =
        new Tail(TailCursor.open(boxline, c, topic, c.query("position").orElse(null), "position"));
    if (!produce.takeStream()) {
      c.setHeader("Retry-After", "5");
      throw new ApiException(
          503,
          "too_many_streams",
          "this server already serves http.maxStreams tail streams; retry later or raise it");
    }
    try {
      upgrade(c, tail);
    } catch (RuntimeException e) {
      produce.releaseStream();
      throw e;
    }
  }

  public final class Tail extends Socket {
    final TailCursor cursor;
    volatile String position;
    volatile CompletableFuture<Void> waitingOn;
    long lastSent = System.nanoTime();

    Tail(TailCursor cursor) {
      this.cursor = cursor;
      this.position = cursor.position();
    }

    @Override
    void opened() {
      submit(this::pump);
    }

    /** Completes when the topic's log grows; kept across the quiet steps that only ping. */
    private volatile CompletableFuture<Void> appended;

    /** Whether the next step reads the topic (the first, or woken by an append). */
    private volatile boolean look = true;

    /**
     * One step: reads what is new when woken by an append (or first), then waits without a thread
     * for the next append, pinging the client every {@link #IDLE_MILLIS} meanwhile. A quiet tail
     * reads nothing from the database, but a look every {@link #IDLE_MILLIS} when the store does
     * not tell this server of other processes' appends (an hour when it does).
     */
    private void pump() {
      if (ending()) {
        return;
      }
      if (appended == null) {
        // Taken before the heads are read: an event placed meanwhile ends the wait at once.
        appended =
            boxline
                .remoteConsumers()
                .awaitAppend(
                    cursor.topic, TailCursor.lookEvery(boxline, Duration.ofMillis(IDLE_MILLIS)));
      }
      CompletableFuture<Void> woken = appended;
      if (look) {
        look = false;
        java.util.concurrent.atomic.AtomicReference<CompletableFuture<Void>> lastSend =
            new java.util.concurrent.atomic.AtomicReference<>();
        try {
          cursor.readNew(
              boxline,
              this::ending,
              (e, at) -> {
                position = at;
                lastSend.set(send(new WsEvent("event", at, Views.event(e, cursor.raw))));
              });
          position = cursor.position();
        } catch (io.boxline.NotFoundException deleted) {
          close(StatusCode.NORMAL, "the topic was deleted");
          return;
        } catch (IOException | RuntimeException e) {
          LOG.log(Level.WARNING, "a WebSocket tail of " + cursor.topic + " failed; closing it", e);
          close(StatusCode.SERVER_ERROR, "the server failed; reconnect with your last position");
          return;
        }
        if (lastSend.get() != null) {
          // The next look once the client took these: a slow client is not buried in frames.
          woken.cancel(false);
          appended = null;
          look = true;
          lastSent = System.nanoTime();
          lastSend.get().whenComplete((v, e) -> submit(this::pump));
          return;
        }
      }
      ping();
      waitingOn = woken;
      if (ending()) {
        woken.complete(null);
      }
      woken
          .handle((v, e) -> true)
          .completeOnTimeout(false, IDLE_MILLIS, TimeUnit.MILLISECONDS)
          .thenAccept(
              grew -> {
                if (grew) {
                  appended = null;
                  look = true;
                }
                submit(this::pump);
              });
    }

    private void ping() {
      if (System.nanoTime() - lastSent > TimeUnit.MILLISECONDS.toNanos(PING_MILLIS)) {
        Session s = session;
        if (s != null && s.isOpen()) {
          s.sendPing(ByteBuffer.allocate(0), Callback.NOOP);
        }
        lastSent = System.nanoTime();
      }
    }

    @Override
    void stopping() {
      CompletableFuture<Void> w = waitingOn;
      if (w != null) {
        w.complete(null);
      }
      String at = position;
      send(new WsEnd("end", "the server is stopping", at))
          .whenComplete(
              (v, e) ->
                  close(
                      StatusCode.SHUTDOWN,
                      at.length() <= 100 ? "server stopping; position=" + at : "server stopping"));
    }

    @Override
    void ended() {
      CompletableFuture<Void> w = waitingOn;
      if (w != null) {
        w.complete(null);
      }
      produce.releaseStream();
    }

    @Override
    void received(String text) {
      send(error(null, ApiException.badRequest("a tail takes no messages; it only sends")));
    }
  }

  // ---- group member ----

  private void member(Call c) {
    Auth.Caller caller = caller(c);
    caller.require(Action.CONSUME);
    SubscriptionInfo s =
        AdminApi.visibleSubscription(boxline.admin(), caller, c.param("subscription"));
    String member = MemberWire.memberId(caller, c.param("member"));
    requireUpgrade(c);
    upgrade(c, new Member(caller, s, member));
  }

  /**
   * A group member over one socket. A {@code fetch} stays pending until events come (the server
   * fetches for it, which checks it in, whenever events may have come and at least once per
   * check-in interval); the batch is pushed, and the next {@code fetch} asks for more. A closed
   * socket makes the member leave at once.
   */
  public final class Member extends Socket {
    final Auth.Caller caller;
    final SubscriptionInfo subscription;
    final String member;
    boolean wanting;
    boolean waiting;
    boolean left;
    double weight = 1.0;
    int max = 100;
    boolean raw;
    JsonNode fetchId;
    long lastSent = System.nanoTime();
    volatile CompletableFuture<Void> waitingOn;

    Member(Auth.Caller caller, SubscriptionInfo subscription, String member) {
      this.caller = caller;
      this.subscription = subscription;
      this.member = member;
    }

    @Override
    void received(String text) {
      submit(() -> handle(text));
    }

    private void handle(String text) {
      JsonNode id = null;
      try {
        JsonNode tree = RequestBodies.tree(text.getBytes(StandardCharsets.UTF_8));
        id = tree.get("id"); // echoed even when the rest of the message is refused
        if (left) {
          throw ApiException.badRequest("this member left; open a new socket to join again");
        }
        ApiRequests.WsMessage message = RequestBodies.bind(tree, ApiRequests.WsMessage.class);
        if (message instanceof ApiRequests.WsFetch f) {
          weight = f.weight() == null ? 1.0 : f.weight();
          max = f.max() == null ? 100 : f.max();
          raw = Payloads.base64(f.payload());
          fetchId = id;
          wanting = true;
          if (!waiting) {
            fetchStep(false);
          }
        } else if (message instanceof ApiRequests.WsSettle m) {
          List<RemoteConsumers.Settlement> settlements =
              MemberWire.settlements(m.settle(), caller.ackKey(), subscription.name(), member);
          int n =
              Call.valid(() -> boxline.remoteConsumers().settle(subscription, member, settlements));
          send(new WsSettled("settled", idOf(id), n));
        } else {
          leave();
          send(new WsLeft("left", idOf(id)))
              .whenComplete((v, e) -> close(StatusCode.NORMAL, "left"));
        }
      } catch (Throwable e) {
        send(error(id, e));
      }
    }

    /**
     * Fetches for the pending fetch; pushes a batch, or waits without a thread and comes back.
     *
     * @param afterWait whether a wait came before: the subscription is looked up again by name (it
     *     may have been deleted meanwhile); a fetch the client just asked for uses the one the
     *     socket opened with
     */
    private void fetchStep(boolean afterWait) {
      if (left || !wanting || ending()) {
        return;
      }
      RemoteConsumers members = boxline.remoteConsumers();
      String name = subscription.name();
      CompletableFuture<Void> woken;
      RemoteConsumers.Batch batch;
      try {
        woken =
            members.awaitAppend(
                subscription.topics(), Duration.ofMillis(ConsumeApi.MAX_WAIT_MILLIS));
        batch =
            Call.valid(
                () ->
                    afterWait
                        ? members.fetch(name, member, weight, max)
                        : members.fetch(subscription, member, weight, max));
      } catch (RuntimeException e) {
        wanting = false;
        send(error(fetchId, e));
        return;
      }
      if (!batch.deliveries().isEmpty()) {
        woken.cancel(false);
        wanting = false;
        lastSent = System.nanoTime();
        send(
            new WsBatch(
                "batch",
                idOf(fetchId),
                MemberWire.batch(caller.ackKey(), name, member, batch, raw)));
        return;
      }
      if (System.nanoTime() - lastSent > TimeUnit.MILLISECONDS.toNanos(PING_MILLIS)) {
        Session s = session;
        if (s != null && s.isOpen()) {
          s.sendPing(ByteBuffer.allocate(0), Callback.NOOP);
        }
        lastSent = System.nanoTime();
      }
      // Fetch again when events may have come, or when the member is due to check in.
      woken.completeOnTimeout(null, batch.checkInWithin().toMillis(), TimeUnit.MILLISECONDS);
      waiting = true;
      waitingOn = woken;
      if (ending()) {
        woken.complete(null);
      }
      woken.whenComplete(
          (v, e) ->
              submit(
                  () -> {
                    waiting = false;
                    fetchStep(true);
                  }));
    }

    private void leave() {
      if (left) {
        return;
      }
      left = true;
      wanting = false;
      Call.valid(
          () -> {
            boxline.remoteConsumers().leave(subscription.name(), member);
            return null;
          });
    }

    @Override
    void stopping() {
      wake();
      close(StatusCode.SHUTDOWN, "server stopping");
    }

    private void wake() {
      CompletableFuture<Void> w = waitingOn;
      if (w != null) {
        w.complete(null);
      }
    }

    @Override
    void ended() {
      wake();
      // A closed socket (the client went away, or the server stops): the member leaves at once,
      // after whatever it was doing, so its partitions go to the others now.
      submit(
          () -> {
            try {
              leave();
            } catch (RuntimeException e) {
              LOG.log(Level.DEBUG, "a WebSocket member of " + subscription.name() + " left", e);
            }
          });
    }

    @Override
    CompletableFuture<Void> endedWork() {
      CompletableFuture<Void> done = new CompletableFuture<>();
      submit(() -> done.complete(null));
      return done;
    }
  }

  // ---- the socket ----

  /**
   * One open socket: its steps run on the HTTP workers one after another (never two at once), in
   * the order they were submitted.
   */
  public abstract class Socket implements Session.Listener.AutoDemanding {
    volatile Session session;
    private volatile boolean stopping;
    private volatile boolean over;

    /** Completes once the socket is closed and its member (if any) has left. */
    final CompletableFuture<Void> closed = new CompletableFuture<>();

    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean draining;

    void opened() {}

    abstract void received(String text);

    /** The server stops: say goodbye and close with 1001. */
    abstract void stopping();

    /** The socket closed, for whatever reason. */
    void ended() {}

    /** What must finish after the close before the socket counts as closed. */
    CompletableFuture<Void> endedWork() {
      return CompletableFuture.completedFuture(null);
    }

    boolean ending() {
      return over || stopping || !running.getAsBoolean();
    }

    @Override
    public void onWebSocketOpen(Session session) {
      this.session = session;
      open.add(this);
      if (!running.getAsBoolean()) {
        stop();
        return;
      }
      opened();
    }

    @Override
    public void onWebSocketText(String text) {
      received(text);
    }

    @Override
    public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
      callback.succeed();
      send(error(null, ApiException.badRequest("send JSON text messages, not binary ones")));
    }

    @Override
    public void onWebSocketError(Throwable cause) {
      LOG.log(Level.DEBUG, "a WebSocket failed", cause);
      finish();
    }

    @Override
    public void onWebSocketClose(int statusCode, String reason) {
      finish();
    }

    private void finish() {
      synchronized (this) {
        if (over) {
          return;
        }
        over = true;
      }
      try {
        ended();
      } finally {
        endedWork()
            .whenComplete(
                (v, e) -> {
                  open.remove(this);
                  closed.complete(null);
                });
      }
    }

    void stop() {
      stopping = true;
      stopping();
    }

    void close(int code, String reason) {
      Session s = session;
      if (s != null && s.isOpen()) {
        // A close reason holds at most 123 bytes.
        String r = reason.length() > 120 ? reason.substring(0, 120) : reason;
        s.close(code, r, Callback.NOOP);
      }
    }

    CompletableFuture<Void> send(Object value) {
      CompletableFuture<Void> sent = new CompletableFuture<>();
      Session s = session;
      if (s == null || !s.isOpen()) {
        sent.completeExceptionally(new java.io.IOException("the socket is closed"));
        return sent;
      }
      String text;
      try {
        text = Call.JSON.writeValueAsString(value);
      } catch (Exception e) {
        sent.completeExceptionally(e);
        return sent;
      }
      s.sendText(text, Callback.from(() -> sent.complete(null), sent::completeExceptionally));
      return sent;
    }

    void submit(Runnable step) {
      synchronized (queue) {
        queue.add(step);
        if (draining) {
          return;
        }
        draining = true;
      }
      dispatch();
    }

    private void dispatch() {
      try {
        workers.execute(this::drain);
      } catch (RejectedExecutionException full) {
        if (running.getAsBoolean()) {
          // Every worker is busy: try again shortly.
          CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(this::dispatch);
        } else {
          drain(); // the workers are stopping: finish here
        }
      }
    }

    private void drain() {
      while (true) {
        Runnable step;
        synchronized (queue) {
          step = queue.poll();
          if (step == null) {
            draining = false;
            return;
          }
        }
        try {
          step.run();
        } catch (Throwable e) {
          LOG.log(Level.WARNING, "a WebSocket step failed", e);
        }
      }
    }
  }

  /** An error message, with the same codes and fields as the HTTP API's problems. */
  private static WsError error(JsonNode id, Throwable e) {
    ApiException api = Router.translate(e);
    if (api.status >= 500 && api.status != 503) {
      String correlation = UUID.randomUUID().toString().substring(0, 13);
      LOG.log(Level.ERROR, "a WebSocket message failed [correlationId=" + correlation + "]", e);
      api =
          new ApiException(
              500,
              "internal",
              "the server failed; its log has the details under correlation id " + correlation);
    }
    Problems.Refusal r = api.refusal;
    return new WsError(
        "error",
        idOf(id),
        new Problems.Problem(
            api.status,
            api.code,
            api.getMessage(),
            null,
            r == null ? null : r.settled(),
            r == null ? null : r.refused()));
  }

  /** The client's {@code id} of the message an answer is for, or null when it gave none. */
  private static JsonNode idOf(JsonNode id) {
    return id == null || id.isNull() ? null : id;
  }

  // The messages the server sends on a WebSocket; "id" echoes the client's, when it gave one.

  record WsEvent(String type, String position, ApiBodies.Event event) {}

  record WsEnd(String type, String reason, String position) {}

  record WsSettled(
      String type, @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode id, int settled) {}

  record WsLeft(String type, @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode id) {}

  record WsError(
      String type,
      @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode id,
      @JsonUnwrapped Problems.Problem problem) {}

  /** A batch sent to a WebSocket member: a fetch's answer with the message's type and id. */
  record WsBatch(
      String type,
      @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode id,
      @JsonUnwrapped ApiBodies.MemberBatch batch) {}
}
