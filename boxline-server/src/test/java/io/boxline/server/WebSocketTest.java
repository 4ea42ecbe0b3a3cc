package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The WebSocket endpoints on a real server and PostgreSQL: tails, group members on one socket,
 * tokens and tenants, a stop, and a Python client.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebSocketTest {
  static final String ADMIN = "ws-admin-token-of-everything";
  static final String A_CONSUMER = "ws-tenant-a-consumer";
  static final String A_PRODUCER = "ws-tenant-a-producer";
  static final String B_ADMIN = "ws-tenant-b-admin";
  static final Duration WAIT = Duration.ofSeconds(30);
  static final HttpClient CLIENT = HttpClient.newHttpClient();

  String schema;
  String yaml;
  BoxlineServer server;
  Api api;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_ws_");
    Databases.postgres().close();
    yaml =
        "http: {port: 0, shutdownTimeout: 10s, maxStreams: 3}\n"
            + Databases.postgresYaml(schema)
            + "tokens:\n"
            + ServerApiTest.token("all", ADMIN, "admin", "'*'")
            + ServerApiTest.token("a-consumer", A_CONSUMER, "consumer", "tenant-a")
            + ServerApiTest.token("a-producer", A_PRODUCER, "producer", "tenant-a")
            + ServerApiTest.token("b-admin", B_ADMIN, "admin", "tenant-b")
            + "topics:\n"
            + "  - {name: tenant-a/orders, partitions: 2}\n"
            + "  - {name: tenant-a/strict, partitions: 1}\n"
            + "  - {name: tenant-a/fenced, partitions: 1}\n"
            + "  - {name: tenant-a/stop, partitions: 1}\n"
            + "  - {name: tenant-a/py, partitions: 2}\n"
            + "  - {name: tenant-b/orders, partitions: 2}\n"
            + "subscriptions:\n"
            + "  - {name: a-strict, topics: [tenant-a/strict],"
            + " retry: {maxAttempts: 2, initialBackoff: 50ms, maxBackoff: 50ms}}\n"
            + "  - {name: a-fenced, topics: [tenant-a/fenced]}\n"
            + "  - {name: a-stop, topics: [tenant-a/stop]}\n"
            + "  - {name: a-py, topics: [tenant-a/py]}\n"
            + "  - {name: b-audit, topics: [tenant-b/orders]}\n";
    server = BoxlineServer.start(ServerConfig.parse(yaml, "test", Map.of()));
    api = new Api(server.baseUrl(), ADMIN);
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  String ws(String path) {
    return server.baseUrl().replaceFirst("^http", "ws") + path;
  }

  static String tailPath(String topic, String query) {
    return "/v1/ws/topics/" + enc(topic) + "/tail" + (query.isEmpty() ? "" : "?" + query);
  }

  static String memberPath(String subscription, String member) {
    return "/v1/ws/subscriptions/" + subscription + "/members/" + member;
  }

  void publish(String topic, String... keyTypePayload) {
    StringBuilder b = new StringBuilder("{\"events\":[");
    for (int i = 0; i < keyTypePayload.length; i += 3) {
      b.append(i == 0 ? "" : ",")
          .append("{\"key\":\"")
          .append(keyTypePayload[i])
          .append("\",\"type\":\"")
          .append(keyTypePayload[i + 1])
          .append("\",\"payload\":")
          .append(keyTypePayload[i + 2])
          .append("}");
    }
    Api.Reply r =
        api.as(A_PRODUCER).post("/v1/topics/" + enc(topic) + "/events", b.append("]}").toString());
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  /** A client socket that keeps every text message it gets, and how it was closed. */
  static final class Socket implements WebSocket.Listener {
    final LinkedBlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
    final CompletableFuture<String> closed = new CompletableFuture<>();
    private final StringBuilder partial = new StringBuilder();
    WebSocket ws;

    static Socket open(String uri, String token) {
      return open(uri, token, false);
    }

    /** With {@code asProtocol} the token goes as a subprotocol, as a browser sends it. */
    static Socket open(String uri, String token, boolean asProtocol) {
      Socket s = new Socket();
      WebSocket.Builder b = CLIENT.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10));
      if (token != null && asProtocol) {
        b.subprotocols("boxline.v1", "bearer." + token);
      } else if (token != null) {
        b.header("Authorization", "Bearer " + token);
      }
      s.ws = b.buildAsync(URI.create(uri), s).join();
      return s;
    }

    /** The HTTP status a refused upgrade got. */
    static int refused(String uri, String token, boolean asProtocol) {
      try {
        Socket s = open(uri, token, asProtocol);
        s.ws.abort();
        return 101;
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(WebSocketHandshakeException.class);
        return ((WebSocketHandshakeException) e.getCause()).getResponse().statusCode();
      }
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        try {
          messages.add(Api.JSON.readTree(partial.toString()));
        } catch (Exception e) {
          throw new AssertionError("not JSON: " + partial, e);
        }
        partial.setLength(0);
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      closed.complete(statusCode + " " + reason);
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      closed.complete("error " + error);
    }

    void send(String json) {
      ws.sendText(json, true).join();
    }

    /** The next message; fails after the bounded wait. */
    JsonNode next() throws InterruptedException {
      JsonNode m = messages.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(m).as("a message within " + WAIT).isNotNull();
      return m;
    }

    /** The next message of this type (others, such as events before it, are skipped). */
    JsonNode next(String type) throws InterruptedException {
      while (true) {
        JsonNode m = next();
        if (m.path("type").asText().equals(type)) {
          return m;
        }
      }
    }

    List<JsonNode> events(int n) throws InterruptedException {
      List<JsonNode> out = new ArrayList<>();
      while (out.size() < n) {
        JsonNode m = next();
        assertThat(m.path("type").asText()).as(m.toString()).isEqualTo("event");
        out.add(m);
      }
      return out;
    }

    void close() {
      ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
    }

    String awaitClosed() throws Exception {
      return closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  static List<String> payloads(List<JsonNode> events) {
    return events.stream().map(e -> e.get("event").get("payload").toString()).toList();
  }

  @Test
  void aTailGetsPublishedEventsResumesFromItsPositionAndFilters() throws Exception {
    Socket tail = Socket.open(ws(tailPath("tenant-a/orders", "")), A_CONSUMER);
    publish("tenant-a/orders", "k1", "A", "1", "k2", "B", "2", "k3", "A", "3");
    List<JsonNode> first = tail.events(3);
    assertThat(payloads(first)).containsExactlyInAnyOrder("1", "2", "3");
    String position = first.get(2).get("position").asText();
    assertThat(position).matches("\\d+:\\d+(,\\d+:\\d+)*");
    tail.close();
    assertThat(tail.awaitClosed()).startsWith("1000");

    publish("tenant-a/orders", "k1", "A", "4", "k2", "B", "5");
    // Resumed where it stopped: only what came after.
    Socket resumed =
        Socket.open(ws(tailPath("tenant-a/orders", "position=" + enc(position))), A_CONSUMER);
    assertThat(payloads(resumed.events(2))).containsExactlyInAnyOrder("4", "5");
    resumed.close();

    // Filters: type B only, then key k1 only; a marker published last ends each read.
    Socket byType =
        Socket.open(ws(tailPath("tenant-a/orders", "from=earliest&type=B")), A_CONSUMER);
    Socket byKey = Socket.open(ws(tailPath("tenant-a/orders", "from=earliest&key=k1")), A_CONSUMER);
    assertThat(payloads(byType.events(2))).containsExactlyInAnyOrder("2", "5");
    assertThat(payloads(byKey.events(2))).containsExactlyInAnyOrder("1", "4");
    publish("tenant-a/orders", "k9", "A", "6", "k1", "B", "7");
    assertThat(payloads(byType.events(1))).containsExactly("7");
    assertThat(payloads(byKey.events(1))).containsExactly("7");
    JsonNode event = byType.messages.isEmpty() ? null : byType.messages.peek();
    assertThat(event).as("nothing else for the type filter").isNull();
    byType.close();
    byKey.close();
  }

  @Test
  void tokensAndTenantsAreCheckedBeforeTheUpgrade() throws Exception {
    String bTail = ws(tailPath("tenant-b/orders", ""));
    String bMember = ws(memberPath("b-audit", "m1"));
    assertThat(Socket.refused(bTail, A_CONSUMER, false)).isEqualTo(403);
    assertThat(Socket.refused(bTail, A_CONSUMER, true)).isEqualTo(403);
    assertThat(Socket.refused(bMember, A_CONSUMER, false)).isEqualTo(403);
    assertThat(Socket.refused(ws(tailPath("tenant-a/orders", "")), B_ADMIN, true)).isEqualTo(403);
    assertThat(Socket.refused(ws(memberPath("a-strict", "m1")), B_ADMIN, false)).isEqualTo(403);
    assertThat(Socket.refused(bTail, null, false)).isEqualTo(401);
    assertThat(Socket.refused(bTail, "not-a-token", true)).isEqualTo(401);
    assertThat(Socket.refused(ws(memberPath("a-strict", "m1")), A_PRODUCER, false)).isEqualTo(403);
    assertThat(Socket.refused(ws(tailPath("tenant-a/none", "")), A_CONSUMER, false)).isEqualTo(404);
    assertThat(Socket.refused(ws(memberPath("a-strict", "bad%20id")), A_CONSUMER, false))
        .isEqualTo(400);
    // The token as a subprotocol: accepted, and the socket speaks boxline.v1.
    Socket b = Socket.open(bTail, B_ADMIN, true);
    assertThat(b.ws.getSubprotocol()).isEqualTo("boxline.v1");
    b.close();
    // A plain GET is told to upgrade.
    Api.Reply plain = api.get("/v1/ws/topics/" + enc("tenant-a/orders") + "/tail");
    assertThat(plain.status()).as(plain.toString()).isEqualTo(426);
    assertThat(plain.json().get("error").asText()).isEqualTo("upgrade_required");
  }

  /** WebSocket tails count against http.maxStreams: one more is refused before the upgrade. */
  @Test
  void aTailBeyondMaxStreamsGets503() throws Exception {
    String uri = ws(tailPath("tenant-a/orders", ""));
    List<Socket> open = new ArrayList<>();
    int status = 101;
    while (status == 101) {
      assertThat(open).as("http.maxStreams is 3").hasSizeLessThanOrEqualTo(3);
      try {
        open.add(Socket.open(uri, A_CONSUMER));
      } catch (CompletionException e) {
        status = ((WebSocketHandshakeException) e.getCause()).getResponse().statusCode();
      }
    }
    assertThat(status).isEqualTo(503);
    assertThat(open).isNotEmpty();
    // Every stream is taken, and the gauges say so.
    assertThat(api.metric("boxline_http_streams_open")).isEqualTo(3);
    assertThat(api.metric("boxline_http_websockets_open")).isGreaterThanOrEqualTo(open.size());
    open.remove(0).close();
    await(
        "a free stream after a close",
        () -> {
          int s = Socket.refused(uri, A_CONSUMER, false);
          assertThat(s).isIn(101, 503);
          return s == 101;
        });
    open.forEach(Socket::close);
  }

  @Test
  void aMemberFetchesSettlesRetriesAndDeadLettersOverOneSocket() throws Exception {
    publish("tenant-a/strict", "ok", "T", "1", "bad", "T", "2");
    await("both events in the log", () -> heads("tenant-a/strict") == 2);
    Socket m = Socket.open(ws(memberPath("a-strict", "m1")), A_CONSUMER);
    // Bad messages get errors with the HTTP codes; the socket stays usable.
    m.send("not json");
    assertThat(m.next().get("error").asText()).isEqualTo("bad_request");
    m.send("{\"op\":\"dance\",\"id\":7}");
    JsonNode unknown = m.next();
    assertThat(unknown.get("type").asText()).isEqualTo("error");
    assertThat(unknown.get("status").asInt()).isEqualTo(400);
    assertThat(unknown.get("id").asInt()).isEqualTo(7);
    m.send("{\"op\":\"settle\",\"settle\":[{\"ackId\":\"forged\",\"outcome\":\"done\"}]}");
    assertThat(m.next().get("message").asText()).contains("ackId is not one that fetch gave");

    List<Integer> badAttempts = new ArrayList<>();
    int settledOk = 0;
    m.send("{\"op\":\"fetch\",\"max\":10,\"id\":\"f1\"}");
    while (badAttempts.size() < 2) {
      JsonNode batch = m.next("batch");
      assertThat(batch.get("checkInWithinMillis").asLong()).isPositive();
      assertThat(batch.get("partitions").toString()).contains("tenant-a/strict");
      StringBuilder settle = new StringBuilder("{\"op\":\"settle\",\"id\":\"s\",\"settle\":[");
      for (JsonNode d : batch.get("events")) {
        boolean bad = d.get("event").get("key").asText().equals("bad");
        if (bad) {
          badAttempts.add(d.get("attempt").asInt());
        } else {
          settledOk++;
        }
        settle
            .append(settle.charAt(settle.length() - 1) == '[' ? "" : ",")
            .append("{\"ackId\":\"")
            .append(d.get("ackId").asText())
            .append(
                bad
                    ? "\",\"outcome\":\"retry\",\"reason\":\"still broken\"}"
                    : "\",\"outcome\":\"done\"}");
      }
      m.send(settle.append("]}").toString());
      JsonNode settled = m.next("settled");
      assertThat(settled.get("settled").asInt()).isEqualTo(batch.get("events").size());
      if (badAttempts.size() < 2) {
        m.send("{\"op\":\"fetch\",\"max\":10}");
      }
    }
    assertThat(settledOk).isEqualTo(1);
    assertThat(badAttempts).containsExactly(1, 2);
    await(
        "the dead letter",
        () ->
            api.get("/v1/subscriptions/a-strict/failures").json().get("deadLetters").asLong() == 1);
    JsonNode dead =
        api.get("/v1/subscriptions/a-strict/dead-letters").json().get("deadLetters").get(0);
    assertThat(dead.get("lastError").asText()).isEqualTo("still broken");
    m.send("{\"op\":\"leave\",\"id\":\"bye\"}");
    assertThat(m.next("left").get("id").asText()).isEqualTo("bye");
    assertThat(m.awaitClosed()).startsWith("1000");
    assertThat(members("a-strict")).isEmpty();
  }

  @Test
  void socketMembersAreFencedAndAClosedSocketLeavesAtOnce() throws Exception {
    publish("tenant-a/fenced", "a", "T", "1", "b", "T", "2");
    await("both events in the log", () -> heads("tenant-a/fenced") == 2);
    Socket m1 = Socket.open(ws(memberPath("a-fenced", "m1")), A_CONSUMER);
    m1.send("{\"op\":\"fetch\"}");
    JsonNode first = m1.next("batch");
    assertThat(first.get("events")).hasSize(2);
    String ackId = first.get("events").get(0).get("ackId").asText();
    assertThat(members("a-fenced")).containsExactly("a-consumer:m1");

    // m1 is made to leave (over HTTP, same token) while its socket stays open; m2 takes over.
    assertThat(api.as(A_CONSUMER).delete("/v1/subscriptions/a-fenced/members/m1").status())
        .isEqualTo(200);
    Socket m2 = Socket.open(ws(memberPath("a-fenced", "m2")), A_CONSUMER);
    m2.send("{\"op\":\"fetch\"}");
    JsonNode second = m2.next("batch");
    assertThat(second.get("events")).hasSize(2);
    m1.send("{\"op\":\"settle\",\"settle\":[{\"ackId\":\"" + ackId + "\",\"outcome\":\"done\"}]}");
    JsonNode fenced = m1.next("error");
    assertThat(fenced.get("status").asInt()).isEqualTo(409);
    assertThat(fenced.get("error").asText()).isEqualTo("conflict");
    assertThat(fenced.get("settled").asInt()).isZero();
    assertThat(fenced.get("refused").toString())
        .isEqualTo("[{\"topic\":\"tenant-a/fenced\",\"partition\":0}]");
    m1.close();
    StringBuilder both = new StringBuilder("{\"op\":\"settle\",\"settle\":[");
    for (JsonNode d : second.get("events")) {
      both.append(both.charAt(both.length() - 1) == '[' ? "" : ",")
          .append("{\"ackId\":\"")
          .append(d.get("ackId").asText())
          .append("\",\"outcome\":\"done\"}");
    }
    m2.send(both.append("]}").toString());
    assertThat(m2.next("settled").get("settled").asInt()).isEqualTo(2);

    // m3 waits with a pending fetch while m2 holds the partition; m2's socket closes (no leave
    // message): m2 leaves at once and m3 is pushed the next event.
    Socket m3 = Socket.open(ws(memberPath("a-fenced", "m3")), A_CONSUMER);
    m3.send("{\"op\":\"fetch\"}");
    await("m3 in the group", () -> members("a-fenced").contains("a-consumer:m3"));
    publish("tenant-a/fenced", "c", "T", "3");
    m2.ws.abort(); // the client is killed: no close handshake
    await("m2 gone from the group", () -> !members("a-fenced").contains("a-consumer:m2"));
    JsonNode third = m3.next("batch");
    assertThat(third.get("events")).hasSize(1);
    assertThat(third.get("events").get(0).get("event").get("payload").toString()).isEqualTo("3");
    assertThat(third.get("partitions").toString())
        .isEqualTo("[{\"topic\":\"tenant-a/fenced\",\"partition\":0}]");
    m3.close();
    await("m3 gone from the group", () -> members("a-fenced").isEmpty());
  }

  @Test
  void aStopSendsEverySocketACloseFrameWithTheTailsPosition() throws Exception {
    try (BoxlineServer second = BoxlineServer.start(ServerConfig.parse(yaml, "test", Map.of()))) {
      String base = second.baseUrl().replaceFirst("^http", "ws");
      Socket tail = Socket.open(base + tailPath("tenant-a/stop", "from=earliest"), A_CONSUMER);
      Socket member = Socket.open(base + memberPath("a-stop", "m1"), A_CONSUMER);
      member.send("{\"op\":\"fetch\"}");
      await("the member in the group", () -> members("a-stop").contains("a-consumer:m1"));
      publish("tenant-a/stop", "k", "T", "1");
      String position = tail.events(1).get(0).get("position").asText();
      member.next("batch");
      CompletableFuture<Void> stopped = CompletableFuture.runAsync(second::close);
      JsonNode end = tail.next("end");
      assertThat(end.get("position").asText()).isEqualTo(position);
      assertThat(tail.awaitClosed()).isEqualTo("1001 server stopping; position=" + position);
      assertThat(member.awaitClosed()).isEqualTo("1001 server stopping");
      stopped.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(members("a-stop")).isEmpty();
    }
  }

  /** A client outside Java: Python's websockets tails and consumes. */
  @Test
  void aPythonClientTailsAndConsumes() throws Exception {
    Process check = new ProcessBuilder("/usr/bin/python3", "-c", "import websockets").start();
    assertThat(check.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(check.exitValue())
        .as(
            "this test runs a Python WebSocket client with /usr/bin/python3 and its websockets"
                + " module: apt-get install -y python3-websockets")
        .isZero();
    publish("tenant-a/py", "k1", "A", "1", "k2", "A", "2", "k1", "A", "3", "k2", "A", "4");
    await("four events in the log", () -> heads("tenant-a/py") == 4);
    Path script = Path.of("src/test/python/ws_client.py").toAbsolutePath();
    String base = server.baseUrl().replaceFirst("^http", "ws");
    String tailed = run(script.toString(), "tail", base, A_CONSUMER, "tenant-a/py", "4");
    assertThat(tailed).contains("tailed 4 events");
    assertThat(tailed.lines().filter(l -> l.startsWith("event ")).toList())
        .hasSize(4)
        .anySatisfy(l -> assertThat(l).contains("k1 1"))
        .anySatisfy(l -> assertThat(l).contains("k2 4"));
    String consumed = run(script.toString(), "consume", base, A_CONSUMER, "a-py", "4");
    assertThat(consumed).contains("consumed 4 events");
    assertThat(api.get("/v1/subscriptions/a-py/lag").json().get("lag").asLong()).isZero();
    assertThat(members("a-py")).isEmpty();
  }

  private static String run(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("/usr/bin/python3"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", command) + ":\n" + out).isZero();
    return out;
  }

  long heads(String topic) {
    long n = 0;
    for (JsonNode h : api.get("/v1/topics/" + enc(topic)).json().get("heads")) {
      n += h.asLong();
    }
    return n;
  }

  List<String> members(String subscription) {
    List<String> out = new ArrayList<>();
    api.get("/v1/subscriptions/" + subscription + "/group")
        .json()
        .get("members")
        .forEach(m -> out.add(m.get("id").asText()));
    return out;
  }
}
