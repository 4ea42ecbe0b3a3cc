package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The server against what a hostile or careless client sends: unfinished connections, overload,
 * payloads that must come back byte for byte, misspelt fields, forged ack ids, another token's
 * members, and two tenants that use the same subscription name.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerHardeningTest {
  static final String ADMIN = "hardening-admin-token-all";
  static final String A_ADMIN = "hardening-ta-admin-token";
  static final String A_PRODUCER = "hardening-ta-producer-tok";
  static final String A_CONSUMER = "hardening-ta-consumer-tok";
  static final String A_CONSUMER_2 = "hardening-ta-consumer2-tok";
  static final String B_ADMIN = "hardening-tb-admin-token";
  static final String B_CONSUMER = "hardening-tb-consumer-tok";

  String schema;
  ServerProcess server;
  Api api;
  String base;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_hard_");
    Databases.postgres().close();
    String yaml =
        "http: {port: 0, threads: 4, maxStreams: 2, maxBodyBytes: 65536, shutdownTimeout: 5s,"
            + " idleTimeout: 20s}\n"
            + Databases.postgresYaml(schema)
            + "tokens:\n"
            + ServerApiTest.token("all", ADMIN, "admin", "'*'")
            + ServerApiTest.token("ta-admin", A_ADMIN, "admin", "ta")
            + ServerApiTest.token("ta-producer", A_PRODUCER, "producer", "ta")
            + ServerApiTest.token("ta-consumer", A_CONSUMER, "consumer", "ta")
            + ServerApiTest.token("ta-consumer-2", A_CONSUMER_2, "consumer", "ta")
            + ServerApiTest.token("tb-admin", B_ADMIN, "admin", "tb")
            + ServerApiTest.token("tb-consumer", B_CONSUMER, "consumer", "tb")
            + "topics:\n"
            + "  - {name: ta/orders, partitions: 2}\n"
            + "  - {name: tb/orders, partitions: 2}\n";
    server = ServerProcess.startWithConfig(yaml);
    base = server.awaitReady(Duration.ofSeconds(90));
    api = new Api(base, ADMIN);
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  /** Fetches until the member has {@code n} events (bounded). */
  JsonNode fetchUntil(Api as, String subscription, String member, int n) throws Exception {
    String path = "/v1/subscriptions/" + enc(subscription) + "/members/" + member + "/fetch";
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      Api.Reply r = as.post(path, "{\"waitMillis\":500}");
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
      if (r.json().get("events").size() >= n) {
        return r.json();
      }
      assertThat(System.nanoTime()).as(member + " fetches " + n + " events").isLessThan(deadline);
    }
  }

  @Test
  void unfinishedConnectionsDoNotStopTheServerAnswering() throws Exception {
    List<Socket> hostile = new ArrayList<>();
    try {
      for (int i = 0; i < 64; i++) {
        Socket s = new Socket("127.0.0.1", URI.create(base).getPort());
        s.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes());
        s.getOutputStream().flush();
        hostile.add(s);
      }
      for (int i = 0; i < 64; i++) {
        // Bodies that never arrive hold no worker either.
        Socket s = new Socket("127.0.0.1", URI.create(base).getPort());
        s.getOutputStream()
            .write(
                ("POST /v1/topics/"
                        + enc("ta/orders")
                        + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                        + A_PRODUCER
                        + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
                    .getBytes());
        s.getOutputStream().flush();
        hostile.add(s);
      }
      long t0 = System.nanoTime();
      assertThat(api.get("/health/live").status()).isEqualTo(200);
      assertThat(api.get("/health/ready").status()).isEqualTo(200);
      assertThat(
              api.as(A_PRODUCER)
                  .post("/v1/topics/" + enc("ta/orders") + "/events", "{\"type\":\"T\"}")
                  .status())
          .isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    } finally {
      for (Socket s : hostile) {
        s.close();
      }
    }
  }

  @Test
  void anOverloadedServerAnswers503WithRetryAfterAndLivenessStillAnswers() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/idle\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/idle-sub\",\"topics\":[\"ta/idle\"]}");
    // 4 threads and a queue of 32: 400 fetches at once (each a few statements, again every 250 ms
    // while it waits) overflow them.
    List<CompletableFuture<HttpResponse<String>>> polls = fetchesAtOnce("ta/idle-sub", 400, 4000);
    ServerApiTest.await(
        "a poll refused for overload",
        () -> polls.stream().anyMatch(f -> f.isDone() && f.join().statusCode() == 503));
    assertThat(api.get("/health/live").status()).isEqualTo(200);
    HttpResponse<String> refused =
        polls.stream()
            .filter(f -> f.isDone() && f.join().statusCode() == 503)
            .findFirst()
            .get()
            .join();
    assertThat(refused.headers().firstValue("Retry-After")).contains("1");
    assertThat(Api.JSON.readTree(refused.body()).get("error").asText()).isEqualTo("overloaded");
    for (CompletableFuture<HttpResponse<String>> f : polls) {
      assertThat(f.get().statusCode()).isIn(200, 503);
    }
  }

  /**
   * Seven times as many long polls as worker threads wait at once (as many as the threads and their
   * queue take in one burst), and the server goes on answering: a waiting poll holds no thread. A
   * published event wakes a poll at once, not at its end.
   */
  @Test
  void waitingLongPollsHoldNoThread() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/quiet\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/quiet-sub\",\"topics\":[\"ta/quiet\"]}");
    List<CompletableFuture<HttpResponse<String>>> polls = fetchesAtOnce("ta/quiet-sub", 30, 20_000);
    // A poll's first fetch checks its member in; then it waits (20 s) without a thread.
    ServerApiTest.await(
        "30 polls taken by the group",
        () ->
            api.get("/v1/subscriptions/" + enc("ta/quiet-sub") + "/group")
                    .json()
                    .path("members")
                    .size()
                >= 30);
    assertThat(polls).noneMatch(CompletableFuture::isDone);
    long t0 = System.nanoTime();
    assertThat(api.get("/health/ready").status()).isEqualTo(200);
    Api.Reply sent =
        api.post(
            "/v1/topics/" + enc("ta/quiet") + "/events",
            "{\"key\":\"k\",\"type\":\"T\",\"payload\":{\"n\":1}}");
    assertThat(sent.status()).as(sent.toString()).isEqualTo(200);
    CompletableFuture<Object> first =
        CompletableFuture.anyOf(polls.toArray(CompletableFuture[]::new));
    @SuppressWarnings("unchecked")
    HttpResponse<String> woken = (HttpResponse<String>) first.get(10, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .as("health, a publish and the wake-up, with 30 polls waiting on 4 threads")
        .isLessThan(Duration.ofSeconds(10));
    assertThat(woken.statusCode()).isEqualTo(200);
    assertThat(woken.body()).contains("\"key\":\"k\"");
  }

  /** {@code n} fetches of distinct members sent at once, each waiting up to {@code waitMillis}. */
  private List<CompletableFuture<HttpResponse<String>>> fetchesAtOnce(
      String subscription, int n, int waitMillis) {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    List<CompletableFuture<HttpResponse<String>>> polls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      polls.add(
          client
              .sendAsync(
                  HttpRequest.newBuilder(
                          URI.create(
                              base
                                  + "/v1/subscriptions/"
                                  + enc(subscription)
                                  + "/members/m"
                                  + i
                                  + "/fetch"))
                      .header("Authorization", "Bearer " + A_CONSUMER)
                      .POST(
                          HttpRequest.BodyPublishers.ofString(
                              "{\"waitMillis\":" + waitMillis + "}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .thenApply(ApiContract::checked));
    }
    return polls;
  }

  /**
   * A client names the API version it was written for; another major or a newer minor is refused
   * before anything is done, and every answer names the server's version.
   */
  @Test
  void aClientOfAnotherApiVersionIsRefusedWithBothVersionsNamed() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Map<String, String> refused =
        Map.of(
            "2.0", "use a client of the 1.x line or a server of the 2.x line",
            "1.9", "the client needs 1.9: upgrade the server",
            "one", "must be MAJOR.MINOR, such as 1.0");
    for (Map.Entry<String, String> v : refused.entrySet()) {
      HttpResponse<String> r =
          ApiContract.checked(
              client.send(
                  HttpRequest.newBuilder(URI.create(base + "/v1/topics"))
                      .header("Authorization", "Bearer " + ADMIN)
                      .header("Boxline-Api", v.getKey())
                      .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"ta/versioned\"}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString()));
      assertThat(r.statusCode()).as(v.getKey()).isEqualTo(400);
      assertThat(Api.JSON.readTree(r.body()).get("error").asText())
          .isEqualTo("unsupported_version");
      assertThat(r.body()).as(v.getKey()).contains(v.getValue());
      assertThat(r.headers().firstValue("Boxline-Api")).hasValue("1.0");
    }
    assertThat(api.get("/v1/topics/" + Api.enc("ta/versioned")).status())
        .as("nothing was done")
        .isEqualTo(404);
    HttpResponse<String> ok =
        ApiContract.checked(
            client.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/topics"))
                    .header("Authorization", "Bearer " + ADMIN)
                    .header("Boxline-Api", "1.0")
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.headers().firstValue("Boxline-Api")).hasValue("1.0");
    // Refused before its body arrived: the answer says the connection closes, so that no client
    // reuses a connection the server is about to close.
    try (Socket s = new Socket("127.0.0.1", URI.create(base).getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                  + ADMIN
                  + "\r\nBoxline-Api: 2.0\r\nContent-Length: 23\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      s.setSoTimeout(10_000);
      String head =
          new String(s.getInputStream().readNBytes(400), StandardCharsets.US_ASCII).toLowerCase();
      assertThat(head).startsWith("http/1.1 400").contains("connection: close");
    }
  }

  static final String EXACT =
      "{ \"amount\" : 276.50,\n  \"big\": 12345678901234567890.5, \"pi\":"
          + " 0.1000000000000000055511151231257827,\n  \"huge\": 1e400, \"tiny\": 1.5e-400,"
          + " \"d\": 1, \"d\": 2, \"z\": \"\\u00e9\" }";

  @Test
  void aJsonPayloadComesBackByteForByteOnEveryReadPath() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/exact\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/exact-sub\",\"topics\":[\"ta/exact\"]}");
    Api.Reply tail = null;
    Api.Reply published =
        api.as(A_PRODUCER)
            .post(
                "/v1/topics/" + enc("ta/exact") + "/events",
                "{\"type\":\"T\",\"key\":\"k\",\"payload\":" + EXACT + "}");
    assertThat(published.status()).as(published.toString()).isEqualTo(200);
    String events = "/v1/topics/" + enc("ta/exact") + "/partitions/0/events";
    // The sequencer places the event in the log after the publish committed.
    ServerApiTest.await(
        "the event in the log", () -> !api.get(events).json().get("events").isEmpty());
    // The stored bytes, as base64.
    JsonNode raw = api.get(events + "?payload=base64").json().get("events").get(0);
    assertThat(
            new String(
                Base64.getDecoder().decode(raw.get("payloadBase64").asText()),
                StandardCharsets.UTF_8))
        .isEqualTo(EXACT);
    assertThat(raw.get("contentType").asText()).isEqualTo("application/json");
    // Inline: the answer's text holds the payload exactly as stored.
    assertThat(api.get(events).body()).contains(EXACT);
    fetchUntil(api.as(A_CONSUMER), "ta/exact-sub", "w", 1);
    Api.Reply fetchedRaw =
        api.as(A_CONSUMER)
            .post(
                "/v1/subscriptions/" + enc("ta/exact-sub") + "/members/w/fetch",
                "{\"payload\":\"base64\"}");
    assertThat(
            new String(
                Base64.getDecoder()
                    .decode(
                        fetchedRaw
                            .json()
                            .get("events")
                            .get(0)
                            .get("event")
                            .get("payloadBase64")
                            .asText()),
                StandardCharsets.UTF_8))
        .isEqualTo(EXACT);
    Api.Reply fetchedText =
        api.as(A_CONSUMER)
            .post("/v1/subscriptions/" + enc("ta/exact-sub") + "/members/w/fetch", "{}");
    assertThat(fetchedText.body()).contains(EXACT).doesNotContain("Infinity");
    // The SSE tail: one data line per payload line, joined again by the client.
    String stream = tailFirstEvent("ta/exact", A_ADMIN);
    assertThat(stream).contains(EXACT);
  }

  /**
   * Reads the tail from the earliest event until the first event arrives; its data lines joined.
   */
  String tailFirstEvent(String topic, String token) throws Exception {
    java.net.HttpURLConnection c =
        (java.net.HttpURLConnection)
            URI.create(base + "/v1/topics/" + enc(topic) + "/tail?from=earliest")
                .toURL()
                .openConnection();
    c.setRequestProperty("Authorization", "Bearer " + token);
    c.setReadTimeout(20_000);
    try (var in =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
      StringBuilder data = new StringBuilder();
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("data: ")) {
          data.append(data.length() == 0 ? "" : "\n").append(line.substring(6));
        } else if (line.isEmpty() && data.length() > 0) {
          return data.toString();
        }
      }
      return data.toString();
    } finally {
      c.disconnect();
    }
  }

  @Test
  void aPayloadThatCannotGoInlineIsServedAsBase64AndCanBeDeadLettered() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/deep\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/deep-sub\",\"topics\":[\"ta/deep\"]}");
    String deep = "[".repeat(900) + "1" + "]".repeat(900);
    String notJson =
        Base64.getEncoder().encodeToString("{\"broken\": ".getBytes(StandardCharsets.UTF_8));
    Api.Reply published =
        api.as(A_PRODUCER)
            .post(
                "/v1/topics/" + enc("ta/deep") + "/events",
                "{\"events\":[{\"type\":\"T\",\"key\":\"a\",\"payload\":"
                    + deep
                    + "},{\"type\":\"T\",\"key\":\"b\",\"contentType\":\"application/json\",\"payloadBase64\":\""
                    + notJson
                    + "\"},{\"type\":\"T\",\"key\":\"c\",\"payload\":{\"fine\":true}}]}");
    assertThat(published.status()).as(published.toString()).isEqualTo(200);
    Api.Reply page = api.get("/v1/topics/" + enc("ta/deep") + "/partitions/0/events");
    assertThat(page.status()).as(page.toString()).isEqualTo(200);
    JsonNode fetched = fetchUntil(api.as(A_CONSUMER), "ta/deep-sub", "w", 3);
    JsonNode list = fetched.get("events");
    assertThat(list.get(0).get("event").has("payloadBase64")).isTrue();
    assertThat(
            new String(
                Base64.getDecoder().decode(list.get(0).get("event").get("payloadBase64").asText()),
                StandardCharsets.UTF_8))
        .isEqualTo(deep);
    assertThat(list.get(1).get("event").get("payloadBase64").asText()).isEqualTo(notJson);
    assertThat(list.get(2).get("event").get("payload").get("fine").asBoolean()).isTrue();
    String settle =
        "{\"settle\":[{\"ackId\":\""
            + list.get(0).get("ackId").asText()
            + "\",\"outcome\":\"dead\",\"reason\":\"too deep\"},{\"ackId\":\""
            + list.get(1).get("ackId").asText()
            + "\",\"outcome\":\"dead\"},{\"ackId\":\""
            + list.get(2).get("ackId").asText()
            + "\",\"outcome\":\"done\"}]}";
    Api.Reply settled =
        api.as(A_CONSUMER)
            .post("/v1/subscriptions/" + enc("ta/deep-sub") + "/members/w/settle", settle);
    assertThat(settled.status()).as(settled.toString()).isEqualTo(200);
    assertThat(
            api.get("/v1/subscriptions/" + enc("ta/deep-sub") + "/dead-letters")
                .json()
                .get("deadLetters"))
        .hasSize(2);
  }

  @Test
  void everyBodyRefusesUnknownFieldsWithTheNearestName() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/strict\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/strict-sub\",\"topics\":[\"ta/strict\"]}");
    api.as(A_PRODUCER)
        .post("/v1/topics/" + enc("ta/strict") + "/events", "{\"type\":\"T\",\"key\":\"k\"}");
    JsonNode fetched = fetchUntil(api.as(A_CONSUMER), "ta/strict-sub", "w", 1);
    String ackId = fetched.get("events").get(0).get("ackId").asText();
    String members = "/v1/subscriptions/" + enc("ta/strict-sub") + "/members/w/";
    Api.Reply typo =
        api.as(A_CONSUMER)
            .post(
                members + "settle",
                "{\"settle\":[{\"ackId\":\"" + ackId + "\",\"outcme\":\"dead\"}]}");
    assertThat(typo.status()).isEqualTo(400);
    assertThat(typo.json().get("message").asText()).contains("'outcme'").contains("'outcome'");
    Api.Reply noOutcome =
        api.as(A_CONSUMER).post(members + "settle", "{\"settle\":[{\"ackId\":\"" + ackId + "\"}]}");
    assertThat(noOutcome.status()).isEqualTo(400);
    assertThat(noOutcome.json().get("message").asText()).contains("outcome");
    // Nothing was settled by the refused calls: the event is still there to settle.
    assertThat(
            api.get("/v1/subscriptions/" + enc("ta/strict-sub") + "/lag")
                .json()
                .get("lag")
                .asLong())
        .isEqualTo(1);
    Api.Reply maxx = api.as(A_CONSUMER).post(members + "fetch", "{\"maxx\":1}");
    assertThat(maxx.status()).isEqualTo(400);
    assertThat(maxx.json().get("message").asText()).contains("'max'");
    Api.Reply trailing =
        api.as(A_PRODUCER)
            .post("/v1/topics/" + enc("ta/strict") + "/events", "{\"type\":\"T\",\"key\":\"k\"} x");
    assertThat(trailing.status()).isEqualTo(400);
    Api.Reply topic = api.post("/v1/topics", "{\"name\":\"ta/strict2\",\"partitons\":3}");
    assertThat(topic.status()).isEqualTo(400);
    assertThat(topic.json().get("message").asText()).contains("'partitions'");
    Api.Reply duplicate =
        api.as(A_PRODUCER)
            .post(
                "/v1/topics/" + enc("ta/strict") + "/events",
                "{\"type\":\"T\",\"key\":\"a\",\"key\":\"b\"}");
    assertThat(duplicate.status()).isEqualTo(400);
    assertThat(api.get("/v1/topics/" + enc("ta/strict")).json().get("heads").get(0).asLong())
        .isEqualTo(1);
  }

  @Test
  void ackIdsOpenOnlyForTheMemberAndTokenTheyWereGivenTo() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/acks\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/acks-sub\",\"topics\":[\"ta/acks\"]}");
    api.post("/v1/topics", "{\"name\":\"tb/acks\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"tb/acks-sub\",\"topics\":[\"tb/acks\"]}");
    api.as(A_PRODUCER)
        .post("/v1/topics/" + enc("ta/acks") + "/events", "{\"type\":\"T\",\"key\":\"k\"}");
    api.post("/v1/topics/" + enc("tb/acks") + "/events", "{\"type\":\"T\",\"key\":\"k\"}");
    String aAck =
        fetchUntil(api.as(A_CONSUMER), "ta/acks-sub", "w", 1)
            .get("events")
            .get(0)
            .get("ackId")
            .asText();
    String bAck =
        fetchUntil(api.as(B_CONSUMER), "tb/acks-sub", "w", 1)
            .get("events")
            .get(0)
            .get("ackId")
            .asText();
    assertThat(aAck).doesNotContain("ta/").doesNotContain("acks");
    List<String> answers = new ArrayList<>();
    // A's ack id on B's subscription, altered ones, a guess in the engine's own format, and A's
    // ack id from another member and another token of A.
    char[] altered = bAck.toCharArray();
    altered[altered.length / 2] = altered[altered.length / 2] == 'A' ? 'B' : 'A';
    for (String forged : List.of(aAck, new String(altered), "1.0.1.0.1", bAck + "x")) {
      Api.Reply r =
          api.as(B_CONSUMER)
              .post(
                  "/v1/subscriptions/" + enc("tb/acks-sub") + "/members/w/settle",
                  "{\"settle\":[{\"ackId\":\"" + forged + "\",\"outcome\":\"done\"}]}");
      assertThat(r.status()).as(r.toString()).isEqualTo(400);
      assertThat(r.body()).doesNotContain("ta/").doesNotContain("ta-");
      answers.add(r.json().get("message").asText());
    }
    assertThat(answers)
        .as("the same answer whatever a forged ack id points at")
        .containsOnly(answers.get(0));
    Api.Reply otherMember =
        api.as(A_CONSUMER)
            .post(
                "/v1/subscriptions/" + enc("ta/acks-sub") + "/members/v/settle",
                "{\"settle\":[{\"ackId\":\"" + aAck + "\",\"outcome\":\"done\"}]}");
    assertThat(otherMember.status()).isEqualTo(400);
    Api.Reply otherToken =
        api.as(A_CONSUMER_2)
            .post(
                "/v1/subscriptions/" + enc("ta/acks-sub") + "/members/w/settle",
                "{\"settle\":[{\"ackId\":\"" + aAck + "\",\"outcome\":\"done\"}]}");
    assertThat(otherToken.status()).isEqualTo(400);
    assertThat(
            api.get("/v1/subscriptions/" + enc("ta/acks-sub") + "/lag").json().get("lag").asLong())
        .isEqualTo(1);
    Api.Reply own =
        api.as(A_CONSUMER)
            .post(
                "/v1/subscriptions/" + enc("ta/acks-sub") + "/members/w/settle",
                "{\"settle\":[{\"ackId\":\"" + aAck + "\",\"outcome\":\"done\"}]}");
    assertThat(own.status()).as(own.toString()).isEqualTo(200);
    assertThat(
            api.get("/v1/subscriptions/" + enc("ta/acks-sub") + "/lag").json().get("lag").asLong())
        .isZero();
  }

  @Test
  void aMemberIdFromAnotherTokenIsAnotherMember() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/members\",\"partitions\":2}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/members-sub\",\"topics\":[\"ta/members\"]}");
    String members = "/v1/subscriptions/" + enc("ta/members-sub") + "/members/";
    assertThat(api.as(A_CONSUMER).post(members + "worker/fetch", "{}").status()).isEqualTo(200);
    assertThat(api.as(A_CONSUMER_2).post(members + "worker/fetch", "{}").status()).isEqualTo(200);
    JsonNode group = api.get("/v1/subscriptions/" + enc("ta/members-sub") + "/group").json();
    List<String> ids = new ArrayList<>();
    group.get("members").forEach(m -> ids.add(m.get("id").asText()));
    assertThat(ids).containsExactlyInAnyOrder("ta-consumer:worker", "ta-consumer-2:worker");
    // The second token's leave leaves its own member only.
    assertThat(api.as(A_CONSUMER_2).delete(members + "worker").status()).isEqualTo(200);
    JsonNode after = api.get("/v1/subscriptions/" + enc("ta/members-sub") + "/group").json();
    assertThat(after.get("members")).hasSize(1);
    assertThat(after.get("members").get(0).get("id").asText()).isEqualTo("ta-consumer:worker");
  }

  @Test
  void aLeaveEndsTheMembersLongPollAndItStaysOut() throws Exception {
    api.post("/v1/topics", "{\"name\":\"ta/leave\",\"partitions\":2}");
    api.post("/v1/subscriptions", "{\"name\":\"ta/leave-sub\",\"topics\":[\"ta/leave\"]}");
    String members = "/v1/subscriptions/" + enc("ta/leave-sub") + "/members/";
    CompletableFuture<Api.Reply> poll =
        CompletableFuture.supplyAsync(
            () -> api.as(A_CONSUMER).post(members + "m/fetch", "{\"waitMillis\":25000}"));
    String groupPath = "/v1/subscriptions/" + enc("ta/leave-sub") + "/group";
    ServerApiTest.await(
        "the member joined", () -> api.get(groupPath).json().get("members").size() == 1);
    long t0 = System.nanoTime();
    assertThat(api.as(A_CONSUMER).delete(members + "m").status()).isEqualTo(200);
    Api.Reply ended = poll.get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    assertThat(ended.status()).isEqualTo(200);
    assertThat(ended.json().get("events")).isEmpty();
    assertThat(api.get(groupPath).json().get("members")).isEmpty();
  }

  @Test
  void twoTenantsUseTheSameSubscriptionNameWithoutLearningOfEachOther() throws Exception {
    assertThat(
            api.as(A_ADMIN)
                .post("/v1/subscriptions", "{\"name\":\"ta/audit\",\"topics\":[\"ta/orders\"]}")
                .status())
        .isEqualTo(201);
    assertThat(
            api.as(B_ADMIN)
                .post("/v1/subscriptions", "{\"name\":\"tb/audit\",\"topics\":[\"tb/orders\"]}")
                .status())
        .isEqualTo(201);
    // A plain name from a token of some namespaces is refused whatever exists.
    Api.Reply plain =
        api.as(B_ADMIN)
            .post("/v1/subscriptions", "{\"name\":\"audit\",\"topics\":[\"tb/orders\"]}");
    assertThat(plain.status()).isEqualTo(400);
    assertThat(plain.json().get("message").asText()).contains("tb/audit");
    // Probing A's name and a name that exists nowhere get the same answer, A's name aside.
    Api.Reply existing = api.as(B_ADMIN).get("/v1/subscriptions/" + enc("ta/audit"));
    Api.Reply missing = api.as(B_ADMIN).get("/v1/subscriptions/" + enc("ta/nothing"));
    assertThat(existing.status()).isEqualTo(403);
    assertThat(existing.body().replace("ta/audit", "X"))
        .isEqualTo(missing.body().replace("ta/nothing", "X"));
    Api.Reply steal =
        api.as(B_ADMIN)
            .post("/v1/subscriptions", "{\"name\":\"ta/audit\",\"topics\":[\"tb/orders\"]}");
    assertThat(steal.status()).isEqualTo(403);
    assertThat(steal.body()).doesNotContain("ta/orders");
    Api.Reply list = api.as(B_ADMIN).get("/v1/subscriptions");
    assertThat(list.body()).contains("tb/audit").doesNotContain("ta/");
  }

  @Test
  void aPlainNamedSubscriptionMovesIntoItsTenantsNamespaceByRename() throws Exception {
    assertThat(
            api.post("/v1/subscriptions", "{\"name\":\"legacy\",\"topics\":[\"ta/orders\"]}")
                .status())
        .isEqualTo(201);
    String legacy = "/v1/subscriptions/legacy/rename";
    Api.Reply plain = api.as(A_ADMIN).post(legacy, "{\"to\":\"legacy2\"}");
    assertThat(plain.status()).isEqualTo(400);
    Api.Reply foreign = api.as(A_ADMIN).post(legacy, "{\"to\":\"tb/legacy\"}");
    assertThat(foreign.status()).isEqualTo(403);
    Api.Reply fromB = api.as(B_ADMIN).post(legacy, "{\"to\":\"tb/legacy\"}");
    assertThat(fromB.status()).isEqualTo(403);
    Api.Reply moved = api.as(A_ADMIN).post(legacy, "{\"to\":\"ta/legacy\"}");
    assertThat(moved.status()).as(moved.toString()).isEqualTo(200);
    assertThat(moved.json().get("name").asText()).isEqualTo("ta/legacy");
    assertThat(api.get("/v1/subscriptions/legacy").status()).isEqualTo(404);
    assertThat(
            api.as(A_CONSUMER)
                .post("/v1/subscriptions/" + enc("ta/legacy") + "/members/w/fetch", "{}")
                .status())
        .isEqualTo(200);
  }

  /** Sends raw bytes; returns the status line and the body (the server closes the connection). */
  String[] raw(String request) throws Exception {
    try (Socket s = new Socket("127.0.0.1", URI.create(base).getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().flush();
      String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int split = all.indexOf("\r\n\r\n");
      return new String[] {all.substring(0, all.indexOf("\r\n")), all.substring(split + 4)};
    }
  }

  @Test
  void errorsNameNothingInternal() throws Exception {
    for (String path :
        List.of(
            "/v1/topics/%ZZ",
            "/v1/%00",
            "/v1/topics/a%2F..%2Fb",
            "/console/..%2Fopenapi.json",
            "/v1/topics/%C0%AF",
            "/../../etc/passwd")) {
      String[] reply =
          raw(
              "GET "
                  + path
                  + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                  + ADMIN
                  + "\r\nConnection: close\r\n\r\n");
      int status = Integer.parseInt(reply[0].substring(9, 12));
      assertThat(status).as(path + " " + reply[1]).isBetween(400, 499);
      assertThat(reply[1]).as(path).doesNotContain("Exception").doesNotContain("java.");
      assertThat(Api.JSON.readTree(reply[1]).get("status").asInt()).isEqualTo(status);
    }
    try (Socket s = new Socket("127.0.0.1", URI.create(base).getPort())) {
      OutputStream out = s.getOutputStream();
      out.write("GET /v1/topics HTTP/1.1\r\nHost: x\r\nX-Big: ".getBytes());
      out.write("a".repeat(100_000).getBytes());
      out.write("\r\n\r\n".getBytes());
      out.flush();
      InputStream in = s.getInputStream();
      String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(head).startsWith("HTTP/1.1 431");
    }
    // A chunked body past http.maxBodyBytes (no Content-Length to refuse it by) gets 413 too.
    StringBuilder chunked =
        new StringBuilder(
            "POST /v1/topics/"
                + enc("ta/orders")
                + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + A_PRODUCER
                + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    String chunk = "a".repeat(8192);
    for (int i = 0; i < 10; i++) {
      chunked
          .append(Integer.toHexString(chunk.length()))
          .append("\r\n")
          .append(chunk)
          .append("\r\n");
    }
    chunked.append("0\r\n\r\n");
    String[] tooLarge = raw(chunked.toString());
    assertThat(tooLarge[0]).contains(" 413");
    assertThat(Api.JSON.readTree(tooLarge[1]).get("error").asText()).isEqualTo("too_large");
    assertThat(api.get("/health/live").status()).isEqualTo(200);
  }
}
