package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.RetryPolicy;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The server as a separate process on PostgreSQL: every endpoint, errors, roles and tenants. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerApiTest {
  static final String ADMIN = "admin-token-of-everything";
  static final String A_ADMIN = "tenant-a-admin-token";
  static final String B_ADMIN = "tenant-b-admin-token";
  static final String A_OPERATOR = "tenant-a-operator-token";
  static final String A_PRODUCER = "tenant-a-producer-token";
  static final String A_CONSUMER = "tenant-a-consumer-token";
  static final String VIEWER = "viewer-token-of-everything";

  String schema;
  ServerProcess server;
  Api api;
  HikariDataSource pool;
  Boxline local;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_srv_");
    Databases.postgres().close();
    String yaml =
        "http: {port: 0, maxBodyBytes: 65536, shutdownTimeout: 5s}\n"
            + Databases.postgresYaml(schema)
            + "tokens:\n"
            + token("all", ADMIN, "admin", "'*'")
            + token("a-admin", A_ADMIN, "admin", "tenant-a")
            + token("b-admin", B_ADMIN, "admin", "tenant-b")
            + token("a-operator", A_OPERATOR, "operator", "tenant-a")
            + token("a-producer", A_PRODUCER, "producer", "tenant-a")
            + token("a-consumer", A_CONSUMER, "consumer", "tenant-a")
            + token("wall", VIEWER, "viewer", "'*'")
            + "topics:\n"
            + "  - {name: tenant-a/orders, partitions: 4}\n"
            + "  - {name: tenant-b/orders, partitions: 4}\n"
            + "  - {name: tenant-a/strict, partitions: 1}\n"
            + "subscriptions:\n"
            + "  - {name: a-strict, topics: [tenant-a/strict],"
            + " retry: {maxAttempts: 2, initialBackoff: 50ms, maxBackoff: 50ms}}\n"
            + "  - {name: a-audit, topics: [tenant-a/orders]}\n"
            + "  - {name: b-audit, topics: [tenant-b/orders]}\n";
    server = ServerProcess.startWithConfig(yaml);
    api = new Api(server.awaitReady(Duration.ofSeconds(90)), ADMIN);
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(Databases.PG_URL);
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(8);
    pool = new HikariDataSource(hc);
    local = Boxline.builder().store(JdbcStore.builder(pool).schema(schema).build()).build().start();
  }

  static String token(String name, String secret, String role, String ns) {
    return "  - {name: "
        + name
        + ", secret: "
        + secret
        + ", role: "
        + role
        + ", namespaces: ["
        + ns
        + "]}\n";
  }

  @AfterAll
  void stop() throws Exception {
    if (local != null) {
      local.close();
    }
    if (pool != null) {
      pool.close();
    }
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  static final String A_ORDERS = "/v1/topics/" + enc("tenant-a/orders");
  static final String B_ORDERS = "/v1/topics/" + enc("tenant-b/orders");

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  /** Every event of a topic, read through the API, by id. */
  Map<String, JsonNode> allEvents(Api as, String topicPath, int partitions) {
    return as.allEvents(topicPath, partitions);
  }

  @Test
  void theDeclaredCatalogIsThereAndEachTenantSeesOnlyItsOwn() {
    JsonNode all = api.get("/v1/topics").json().get("topics");
    assertThat(all.findValuesAsText("name")).contains("tenant-a/orders", "tenant-b/orders");
    JsonNode a = api.as(A_ADMIN).get("/v1/topics").json().get("topics");
    assertThat(a.findValuesAsText("name"))
        .contains("tenant-a/orders")
        .doesNotContain("tenant-b/orders");
    assertThat(
            api.as(A_ADMIN)
                .get("/v1/subscriptions")
                .json()
                .get("subscriptions")
                .findValuesAsText("name"))
        .contains("a-audit")
        .doesNotContain("b-audit");
    assertThat(api.as(A_ADMIN).get("/v1/namespaces").json().get("namespaces").toString())
        .contains("tenant-a")
        .doesNotContain("tenant-b");
    JsonNode topic = api.get(A_ORDERS).json();
    assertThat(topic.get("partitions").asInt()).isEqualTo(4);
    assertThat(topic.get("heads")).hasSize(4);
    assertThat(api.get("/v1/whoami").json().get("role").asText()).isEqualTo("admin");
  }

  @Test
  void publishedEventsAreReadBackByPositionKeyAndId() throws Exception {
    Api.Reply one =
        api.as(A_PRODUCER)
            .post(
                A_ORDERS + "/events",
                "{\"key\":\"k-1\",\"type\":\"OrderPlaced\",\"payload\":{\"n\":1},\"headers\":{\"h\":\"v\"},\"idempotencyKey\":\"once-1\"}");
    assertThat(one.status()).as(one.toString()).isEqualTo(200);
    JsonNode first = one.json().get("results").get(0);
    assertThat(first.get("duplicate").asBoolean()).isFalse();
    Api.Reply again =
        api.as(A_PRODUCER)
            .post(
                A_ORDERS + "/events",
                "{\"key\":\"k-1\",\"type\":\"OrderPlaced\",\"payload\":{\"n\":1},\"idempotencyKey\":\"once-1\"}");
    assertThat(again.json().get("results").get(0).get("duplicate").asBoolean()).isTrue();

    StringBuilder batch = new StringBuilder("{\"events\":[");
    for (int i = 0; i < 50; i++) {
      batch
          .append(i == 0 ? "" : ",")
          .append("{\"key\":\"k-")
          .append(i % 5)
          .append("\",\"type\":\"T\",\"payload\":{\"i\":")
          .append(i)
          .append("}}");
    }
    Api.Reply many = api.as(A_PRODUCER).post(A_ORDERS + "/events", batch.append("]}").toString());
    assertThat(many.status()).as(many.toString()).isEqualTo(200);
    assertThat(many.json().get("results")).hasSize(50);
    Set<String> ids = new HashSet<>(many.json().get("results").findValuesAsText("id"));
    ids.add(first.get("id").asText());
    await("51 events sequenced", () -> allEvents(api, A_ORDERS, 4).keySet().containsAll(ids));

    int p = first.get("partition").asInt();
    JsonNode byKey =
        api.get(A_ORDERS + "/partitions/" + p + "/events?key=k-1").json().get("events");
    assertThat(byKey.findValuesAsText("key")).isNotEmpty().allMatch("k-1"::equals);
    JsonNode byId =
        api.get(A_ORDERS + "/partitions/" + p + "/events?id=" + first.get("id").asText())
            .json()
            .get("events");
    assertThat(byId).hasSize(1);
    JsonNode e = byId.get(0);
    assertThat(e.get("payload").get("n").asInt()).isEqualTo(1);
    assertThat(e.get("headers").get("h").asText()).isEqualTo("v");
    JsonNode at =
        api.get(A_ORDERS + "/partitions/" + p + "/events/" + e.get("sequence").asLong()).json();
    assertThat(at.get("id").asText()).isEqualTo(first.get("id").asText());
    // Per key, the batch's order is the log's order.
    Map<String, JsonNode> events = allEvents(api, A_ORDERS, 4);
    Map<String, List<Integer>> perKey = new LinkedHashMap<>();
    for (JsonNode x : events.values()) {
      if (x.get("type").asText().equals("T")) {
        perKey
            .computeIfAbsent(x.get("key").asText(), k -> new ArrayList<>())
            .add(x.get("payload").get("i").asInt());
      }
    }
    perKey.values().forEach(list -> assertThat(list).isSorted());
    assertThat(api.get(A_ORDERS + "/partitions/" + p + "/events/999999").status()).isEqualTo(404);
  }

  @Test
  void badRequestsGetAJsonErrorThatNamesTheProblem() {
    Api.Reply r = api.as(null).get("/v1/topics");
    assertThat(r.status()).isEqualTo(401);
    assertThat(r.json().get("message").asText()).contains("Authorization: Bearer");
    assertThat(api.as("not-a-token-of-this-server").get("/v1/topics").status()).isEqualTo(401);
    assertThat(api.get("/v1/nothing-here").status()).isEqualTo(404);
    Api.Reply wrongMethod = api.put("/v1/topics", "{}");
    assertThat(wrongMethod.status()).isEqualTo(405);
    assertThat(wrongMethod.json().get("message").asText()).contains("GET or POST");
    Api.Reply notJson = api.post(A_ORDERS + "/events", "{\"key\": ");
    assertThat(notJson.status()).isEqualTo(400);
    assertThat(notJson.json().get("error").asText()).isEqualTo("bad_request");
    Api.Reply unknownField = api.post(A_ORDERS + "/events", "{\"kee\":\"x\"}");
    assertThat(unknownField.status()).isEqualTo(400);
    assertThat(unknownField.json().get("message").asText()).contains("unknown field 'kee'");
    Api.Reply badHeader =
        api.post(
            A_ORDERS + "/events",
            "{\"events\":[{\"key\":\"x\",\"type\":\"T\"},{\"type\":\"T\",\"headers\":{\"a\":1}}]}");
    assertThat(badHeader.status()).isEqualTo(400);
    assertThat(badHeader.json().get("message").asText())
        .isEqualTo("events[1].headers: \"a\" must be a string");
    // The server answers 413 from the Content-Length and closes without reading the body: a client
    // still sending may see the connection reset before it reads the answer (a TCP race, not a
    // refusal), so the request is made again, at most three times.
    Api.Reply huge = null;
    for (int attempt = 0; huge == null; attempt++) {
      try {
        huge = api.post(A_ORDERS + "/events", "{\"payload\":\"" + "x".repeat(70_000) + "\"}");
      } catch (java.io.UncheckedIOException e) {
        if (attempt == 2) {
          throw e;
        }
      }
    }
    assertThat(huge.status()).isEqualTo(413);
    assertThat(huge.json().get("message").asText()).contains("maxBodyBytes");
    StringBuilder tooMany = new StringBuilder("{\"events\":[");
    for (int i = 0; i < 1001; i++) {
      tooMany.append(i == 0 ? "" : ",").append("{}");
    }
    assertThat(api.post(A_ORDERS + "/events", tooMany.append("]}").toString()).status())
        .isEqualTo(413);
    assertThat(api.get(A_ORDERS + "/partitions/9/events").status()).isEqualTo(400);
    assertThat(api.get(A_ORDERS + "/partitions/0/events?limit=0").status()).isEqualTo(400);
    assertThat(api.get("/v1/topics/" + enc("no-namespace") + "/partitions/0/events").status())
        .isEqualTo(400);
    assertThat(api.get("/v1/topics/" + enc("tenant-a/missing")).status()).isEqualTo(404);
    Api.Reply missing =
        api.post("/v1/topics/" + enc("tenant-a/missing") + "/events", "{\"type\":\"T\"}");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.json().get("message").asText())
        .isEqualTo(
            "topic 'tenant-a/missing' does not exist; create it first: POST /v1/topics with"
                + " {\"name\": \"tenant-a/missing\"}");
    assertThat(api.post("/v1/topics", "{\"name\":\"tenant-a/x\",\"partitions\":\"many\"}").status())
        .isEqualTo(400);
    // Nothing of the refused requests was written.
    assertThat(allEvents(api, A_ORDERS, 4).values())
        .noneMatch(e -> e.path("key").asText().equals("x"));
  }

  @Test
  void rolesLimitWhatATokenMayDo() {
    assertThat(api.as(A_PRODUCER).get("/v1/topics").status()).isEqualTo(403);
    assertThat(api.as(A_CONSUMER).post(A_ORDERS + "/events", "{}").status()).isEqualTo(403);
    assertThat(api.as(A_CONSUMER).get(A_ORDERS + "/partitions/0/events").status()).isEqualTo(200);
    assertThat(api.as(A_OPERATOR).get("/v1/subscriptions/a-audit/lag").status()).isEqualTo(200);
    assertThat(
            api.as(A_OPERATOR)
                .post("/v1/subscriptions/a-audit/dead-letters/redrive", "{\"dryRun\":true}")
                .status())
        .isEqualTo(200);
    Api.Reply del = api.as(A_OPERATOR).delete("/v1/subscriptions/a-audit");
    assertThat(del.status()).isEqualTo(403);
    assertThat(del.json().get("message").asText()).contains("role operator");
    assertThat(api.as(A_ADMIN).put("/v1/group-policy", "{}").status()).isEqualTo(403);
    assertThat(api.as(A_ADMIN).get("/v1/outbox").status()).isEqualTo(403);
    // A token for every namespace may read and set what is cluster-wide.
    assertThat(api.get("/v1/outbox").json().has("events")).isTrue();
    assertThat(api.put("/v1/group-policy", "{\"slack\":0.1}").json().get("slack").asDouble())
        .isEqualTo(0.1);
  }

  @Test
  void aPoisonedKeyIsDeadLetteredFoundRedrivenAndDelivered() throws Exception {
    api.post("/v1/topics", "{\"name\":\"tenant-a/payments\",\"partitions\":2}");
    assertThat(
            api.post("/v1/subscriptions", "{\"name\":\"a-pay\",\"topics\":[\"tenant-a/payments\"]}")
                .status())
        .isEqualTo(201);
    String topic = "/v1/topics/" + enc("tenant-a/payments");
    java.util.Set<String> healed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicBoolean poisoned =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (Consumer consumer =
        local
            .consumer("a-pay")
            .retryPolicy(
                RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                    .inPlaceAttempts(1)
                    .maxAttempts(2))
            .handler(
                e -> {
                  if (e.key().equals("poison") && poisoned.get()) {
                    throw new IllegalStateException("cannot handle poison");
                  }
                  if (e.key().equals("poison")) {
                    healed.add(e.id().toString());
                  }
                  handled.add(e.key());
                })
            .start()) {
      api.post(
          topic + "/events",
          "{\"events\":[{\"key\":\"poison\",\"type\":\"Pay\"},{\"key\":\"fine\",\"type\":\"Pay\"}]}");
      await(
          "a dead letter",
          () ->
              api.get("/v1/subscriptions/a-pay/failures").json().get("deadLetters").asLong() == 1);
      JsonNode dead =
          api.get("/v1/subscriptions/a-pay/dead-letters?key=poison").json().get("deadLetters");
      assertThat(dead).hasSize(1);
      assertThat(dead.get(0).get("lastError").asText()).contains("cannot handle poison");
      assertThat(api.get("/v1/subscriptions/a-pay/dead-letters?key=fine").json().get("deadLetters"))
          .isEmpty();
      assertThat(api.get("/v1/failures").json().get("failures").toString()).contains("a-pay");

      JsonNode group = api.get("/v1/subscriptions/a-pay/group").json();
      assertThat(group.get("members").findValuesAsText("id")).hasSize(1);
      assertThat(group.get("partitions")).hasSize(2);
      assertThat(api.get("/v1/subscriptions/a-pay/lag").json().get("partitions")).hasSize(2);
      assertThat(api.get("/v1/subscriptions/a-pay/retries").status()).isEqualTo(200);
      Api.Reply busy = api.post("/v1/subscriptions/a-pay/rewind", "{\"to\":\"earliest\"}");
      assertThat(busy.status()).as(busy.toString()).isEqualTo(409);

      JsonNode dry =
          api.post(
                  "/v1/subscriptions/a-pay/dead-letters/redrive",
                  "{\"key\":\"poison\",\"dryRun\":true}")
              .json();
      assertThat(dry.get("affected").asInt()).isEqualTo(1);
      assertThat(api.get("/v1/subscriptions/a-pay/failures").json().get("deadLetters").asLong())
          .isEqualTo(1);
      poisoned.set(false);
      JsonNode done =
          api.post("/v1/subscriptions/a-pay/dead-letters/redrive", "{\"key\":\"poison\"}").json();
      assertThat(done.get("affected").asInt()).isEqualTo(1);
      await("the redriven event handled", () -> healed.size() == 1);
      assertThat(api.get("/v1/subscriptions/a-pay/failures").json().get("deadLetters").asLong())
          .isZero();
      assertThat(api.post("/v1/subscriptions/a-pay/dead-letters/discard", "{\"bogus\":1}").status())
          .isEqualTo(400);
    }
    await(
        "the member left",
        () -> api.get("/v1/subscriptions/a-pay/group").json().get("members").isEmpty());
    Api.Reply rewound = api.post("/v1/subscriptions/a-pay/rewind", "{\"to\":\"earliest\"}");
    assertThat(rewound.status()).as(rewound.toString()).isEqualTo(200);
    assertThat(api.get("/v1/subscriptions/a-pay/lag").json().get("lag").asLong()).isEqualTo(2);
  }

  @Test
  void topicsSubscriptionsAndNamespacesAreCreatedChangedAndDeleted() {
    assertThat(api.post("/v1/namespaces", "{\"name\":\"tenant-a/tmp\"}").status()).isEqualTo(201);
    assertThat(
            api.post(
                    "/v1/topics",
                    "{\"name\":\"tenant-a/tmp/t\",\"partitions\":3,\"sequencing\":\"in-transaction\"}")
                .json()
                .get("sequencing")
                .asText())
        .isEqualTo("in-transaction");
    assertThat(api.post("/v1/topics", "{\"name\":\"tenant-a/tmp/t\",\"partitions\":5}").status())
        .isEqualTo(400);
    assertThat(
            api.post(
                    "/v1/subscriptions",
                    "{\"name\":\"tmp-sub\",\"topics\":[\"tenant-a/tmp/t\"],\"start\":\"latest\"}")
                .status())
        .isEqualTo(201);
    String t = "/v1/topics/" + enc("tenant-a/tmp/t");
    JsonNode retention =
        api.put(t + "/retention", "{\"maxAge\":\"2d\",\"maxEventsPerPartition\":1000}").json();
    assertThat(retention.get("retention").get("maxAge").asText()).isEqualTo("2d");
    assertThat(api.put(t + "/retention", "{\"maxAge\":\"often\"}").status()).isEqualTo(400);
    assertThat(
            api.put("/v1/subscriptions/tmp-sub/group-policy", "{\"maxMembers\":3,\"slack\":0.2}")
                .json()
                .get("maxMembers")
                .asInt())
        .isEqualTo(3);
    assertThat(api.get("/v1/subscriptions/tmp-sub/group-policy").json().get("slack").asDouble())
        .isEqualTo(0.2);
    assertThat(
            api.delete("/v1/subscriptions/tmp-sub/group-policy").json().get("maxMembers").asInt())
        .isZero();
    assertThat(api.get("/v1/subscriptions/tmp-sub").json().get("start").asText())
        .contains("latest");
    Api.Reply inUse = api.delete(t);
    assertThat(inUse.status()).isEqualTo(400);
    assertThat(inUse.json().get("message").asText()).contains("tmp-sub");
    assertThat(api.delete("/v1/namespaces/" + enc("tenant-a/tmp")).status()).isEqualTo(400);
    assertThat(api.delete("/v1/subscriptions/tmp-sub").json().get("deleted").asBoolean()).isTrue();
    assertThat(api.delete("/v1/subscriptions/tmp-sub").json().get("deleted").asBoolean()).isFalse();
    assertThat(api.delete(t).json().get("deleted").asBoolean()).isTrue();
    assertThat(
            api.delete("/v1/namespaces/" + enc("tenant-a/tmp")).json().get("deleted").asBoolean())
        .isTrue();
    assertThat(api.get("/v1/subscriptions/tmp-sub").status()).isEqualTo(404);
  }

  @Test
  void healthAndTheApiDescriptionNeedNoToken() {
    assertThat(api.as(null).get("/health/live").status()).isEqualTo(200);
    assertThat(api.as(null).get("/health/ready").json().get("status").asText()).isEqualTo("UP");
    assertThat(api.as(null).get("/openapi.json").json().get("openapi").asText()).startsWith("3.");
  }

  /**
   * The metrics name every tenant's topics and subscriptions: by default only a token for every
   * namespace whose role may read gets them.
   */
  @Test
  void metricsNeedAReadingTokenOfEveryNamespaceByDefault() {
    Api.Reply anonymous = api.as(null).get("/metrics");
    assertThat(anonymous.status()).as(anonymous.toString()).isEqualTo(401);
    assertThat(anonymous.body()).doesNotContain("boxline_");
    Api.Reply scoped = api.as(A_ADMIN).get("/metrics");
    assertThat(scoped.status()).as(scoped.toString()).isEqualTo(403);
    assertThat(scoped.json().get("message").asText()).contains("token for \"*\"");
    assertThat(scoped.body()).doesNotContain("boxline_");
    Api.Reply producer = api.as(A_PRODUCER).get("/metrics");
    assertThat(producer.status()).as(producer.toString()).isEqualTo(403);
    for (String reader : List.of(VIEWER, ADMIN)) {
      Api.Reply metrics = api.as(reader).get("/metrics");
      assertThat(metrics.status()).as(metrics.toString()).isEqualTo(200);
      assertThat(metrics.body()).contains("boxline_");
    }
  }

  @Test
  void aTailStreamsEventsAndResumesFromItsLastId() throws Exception {
    api.post("/v1/topics", "{\"name\":\"tenant-a/stream\",\"partitions\":3}");
    String topic = "/v1/topics/" + enc("tenant-a/stream");
    api.post(
        topic + "/events",
        "{\"events\":[{\"key\":\"a\",\"type\":\"T\",\"payload\":1},{\"key\":\"b\",\"type\":\"T\",\"payload\":2},{\"key\":\"c\",\"type\":\"T\",\"payload\":3}]}");
    List<String[]> firstThree = readTail(topic + "/tail?from=earliest", null, 3);
    assertThat(firstThree).extracting(e -> e[1]).containsExactlyInAnyOrder("1", "2", "3");
    String lastId = firstThree.get(2)[0];
    assertThat(lastId).matches("\\d+:\\d+(,\\d+:\\d+)*");
    api.post(
        topic + "/events",
        "{\"events\":[{\"key\":\"a\",\"type\":\"T\",\"payload\":4},{\"key\":\"b\",\"type\":\"T\",\"payload\":5}]}");
    List<String[]> resumed = readTail(topic + "/tail", lastId, 2);
    assertThat(resumed).extracting(e -> e[1]).containsExactlyInAnyOrder("4", "5");
    assertThat(readTailStatus(B_ORDERS + "/tail", A_CONSUMER)).isEqualTo(403);
  }

  /** Clients outside Java: Python's standard library publishes and tails, curl publishes. */
  @Test
  void pythonAndCurlClientsPublishAndTailInOrderPerKey() throws Exception {
    api.post("/v1/topics", "{\"name\":\"tenant-a/polyglot\",\"partitions\":4}");
    Path script = Path.of("clients/boxline_client.py").toAbsolutePath();
    assertThat(script).exists();
    assertThat(
            run(
                "python3",
                script.toString(),
                "publish",
                api.base,
                A_PRODUCER,
                "tenant-a/polyglot",
                "500"))
        .contains("published 500");
    assertThat(
            run(
                "python3",
                script.toString(),
                "tail",
                api.base,
                A_CONSUMER,
                "tenant-a/polyglot",
                "500"))
        .contains("tailed 500 events over 10 keys in order");
    String curl =
        run(
            "curl",
            "-sS",
            "-X",
            "POST",
            "-H",
            "Authorization: Bearer " + A_PRODUCER,
            "-H",
            "Content-Type: application/json",
            "--data",
            "{\"key\":\"from-curl\",\"type\":\"Curl\",\"payload\":{\"ok\":true}}",
            api.base + "/v1/topics/" + enc("tenant-a/polyglot") + "/events");
    assertThat(Api.JSON.readTree(curl).get("results").get(0).get("duplicate").asBoolean())
        .isFalse();
  }

  private static String run(String... command) throws Exception {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (java.io.IOException e) {
      throw new AssertionError(
          command[0] + " is needed for this test: apt-get install -y " + command[0], e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", command) + ":\n" + out).isZero();
    return out;
  }

  /**
   * Two members of one group, each a Python program fetching and settling over HTTP; one is killed
   * with SIGKILL mid-way. Every event is handled (one dead-lettered, one retried first), each
   * member saw each key in order, and the duplicates stay within what was in flight.
   */
  @Test
  void anHttpGroupOfTwoPythonMembersLosesNothingWhenOneIsKilled() throws Exception {
    api.post("/v1/topics", "{\"name\":\"tenant-a/work\",\"partitions\":4}");
    api.post("/v1/subscriptions", "{\"name\":\"a-work\",\"topics\":[\"tenant-a/work\"]}");
    Api.Reply policy =
        api.put(
            "/v1/subscriptions/a-work/group-policy",
            "{\"minCheckInInterval\":\"200ms\",\"deadlineMultiplier\":3,\"releaseGrace\":\"1s\"}");
    assertThat(policy.status()).as(policy.toString()).isEqualTo(200);
    StringBuilder batch = new StringBuilder("{\"events\":[");
    for (int i = 0; i < 400; i++) {
      String extra = i == 7 ? ",\"fail\":true" : i == 13 ? ",\"dead\":true" : "";
      batch
          .append(i == 0 ? "" : ",")
          .append("{\"key\":\"k-")
          .append(i % 10)
          .append("\",\"type\":\"Work\",\"payload\":{\"i\":")
          .append(i)
          .append(extra)
          .append("}}");
    }
    assertThat(
            api.as(A_PRODUCER)
                .post(
                    "/v1/topics/" + enc("tenant-a/work") + "/events", batch.append("]}").toString())
                .status())
        .isEqualTo(200);
    Path script = Path.of("clients/boxline_client.py").toAbsolutePath();
    Path out1 = Files.createTempFile("member-1", ".txt");
    Path out2 = Files.createTempFile("member-2", ".txt");
    Process m1 =
        new ProcessBuilder(
                "python3",
                script.toString(),
                "consume",
                api.base,
                A_CONSUMER,
                "a-work",
                "m1",
                out1.toString(),
                "30")
            .redirectErrorStream(true)
            .start();
    Process m2 =
        new ProcessBuilder(
                "python3",
                script.toString(),
                "consume",
                api.base,
                A_CONSUMER,
                "a-work",
                "m2",
                out2.toString(),
                "4")
            .redirectErrorStream(true)
            .start();
    try {
      await("100 events handled", () -> lines(out1).size() + lines(out2).size() >= 100);
      m1.destroyForcibly(); // SIGKILL
      assertThat(m1.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(m2.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).as("m2 finished").isTrue();
      String m2Output = new String(m2.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(m2.exitValue()).as(m2Output).isZero();
    } finally {
      m1.destroyForcibly();
      m2.destroyForcibly();
    }
    Map<String, JsonNode> events = allEvents(api, "/v1/topics/" + enc("tenant-a/work"), 4);
    Set<String> expected = new HashSet<>();
    String deadId = null;
    for (JsonNode e : events.values()) {
      if (e.get("payload").has("dead")) {
        deadId = e.get("id").asText();
      } else {
        expected.add(e.get("id").asText());
      }
    }
    List<String[]> all = new ArrayList<>();
    for (Path out : List.of(out1, out2)) {
      List<String[]> fields = new ArrayList<>();
      for (String line : lines(out)) {
        fields.add(line.split(" "));
      }
      assertNewEventsInOrderPerKey(fields);
      all.addAll(fields);
    }
    Set<String> handled = new HashSet<>();
    all.forEach(f -> handled.add(f[2]));
    assertThat(handled).isEqualTo(expected);
    assertThat(all.size() - handled.size()).as("duplicates").isLessThanOrEqualTo(100);
    JsonNode dead = api.get("/v1/subscriptions/a-work/dead-letters").json().get("deadLetters");
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).get("event").get("id").asText()).isEqualTo(deadId);
    assertThat(dead.get(0).get("lastError").asText()).isEqualTo("poison");
    assertThat(api.get("/v1/subscriptions/a-work/lag").json().get("lag").asLong()).isZero();
  }

  /**
   * What one member handled ({@code key i id} lines): each key's events appear for the first time
   * in publish order; a line that goes back is a repeat of one handled before (a batch delivered
   * again after its settle was lost), never a new event out of order.
   */
  static void assertNewEventsInOrderPerKey(List<String[]> handled) {
    Map<String, Integer> highest = new java.util.HashMap<>();
    Set<String> seen = new HashSet<>();
    for (String[] f : handled) {
      int i = Integer.parseInt(f[1]);
      Integer top = highest.get(f[0]);
      if (top == null || i > top) {
        highest.put(f[0], i);
      } else {
        assertThat(seen)
            .as(f[0] + " " + i + " after " + top + " is not a repeat")
            .contains(f[0] + " " + i);
      }
      seen.add(f[0] + " " + i);
    }
  }

  private static List<String> lines(Path p) {
    try {
      return Files.readAllLines(p).stream().filter(l -> !l.isBlank()).toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * An HTTP member's retries count against the subscription's retry policy from the config file:
   * its second failed attempt is dead-lettered with its reason, and the metrics count it as they
   * count a Java consumer's.
   */
  @Test
  void anHttpMembersRetriesFollowTheSubscriptionsPolicy() throws Exception {
    api.post(
        "/v1/topics/" + enc("tenant-a/strict") + "/events",
        "{\"events\":[{\"key\":\"k\",\"type\":\"T\"}]}");
    String members = "/v1/subscriptions/a-strict/members/";
    List<Integer> attempts = new java.util.ArrayList<>();
    await(
        "a dead letter after two attempts",
        () -> {
          JsonNode got =
              api.as(A_CONSUMER).post(members + "m1/fetch", "{\"waitMillis\":200}").json();
          for (JsonNode e : got.get("events")) {
            attempts.add(e.get("attempt").asInt());
            Api.Reply settled =
                api.as(A_CONSUMER)
                    .post(
                        members + "m1/settle",
                        "{\"settle\":[{\"ackId\":\""
                            + e.get("ackId").asText()
                            + "\",\"outcome\":\"retry\",\"reason\":\"still broken\"}]}");
            assertThat(settled.status()).as(settled.toString()).isEqualTo(200);
          }
          return api.get("/v1/subscriptions/a-strict/failures").json().get("deadLetters").asLong()
              == 1;
        });
    assertThat(attempts).containsExactly(1, 2);
    JsonNode dead =
        api.get("/v1/subscriptions/a-strict/dead-letters").json().get("deadLetters").get(0);
    assertThat(dead.get("attempts").asInt()).isEqualTo(2);
    assertThat(dead.get("lastError").asText()).isEqualTo("still broken");
    assertThat(
            api.get("/metrics")
                .body()
                .lines()
                .filter(l -> l.contains("dead_lettered") && l.contains("subscription=\"a-strict\""))
                .toList())
        .singleElement()
        .satisfies(l -> assertThat(l).endsWith(" 1.0"));
  }

  /** A member that lost its partitions gets 409 when it settles what it fetched before. */
  @Test
  void aMemberThatLostItsPartitionIsFencedOnSettle() {
    String members = "/v1/subscriptions/a-fenced/members/";
    JsonNode first = subscribeAndFetch("fenced", "{\"waitMillis\":500}", 2);
    String ackId = first.get("events").get(0).get("ackId").asText();
    assertThat(api.as(A_CONSUMER).delete(members + "m1").status()).isEqualTo(200);
    JsonNode second = api.as(A_CONSUMER).post(members + "m2/fetch", "{\"waitMillis\":2000}").json();
    assertThat(second.get("events")).hasSize(2);
    Api.Reply late =
        api.as(A_CONSUMER)
            .post(
                members + "m1/settle",
                "{\"settle\":[{\"ackId\":\"" + ackId + "\",\"outcome\":\"done\"}]}");
    assertThat(late.status()).as(late.toString()).isEqualTo(409);
    assertThat(late.json().get("message").asText()).contains("fetch again");
    assertThat(late.json().get("settled").asInt()).isZero();
    assertThat(late.json().get("refused").toString())
        .isEqualTo("[{\"topic\":\"tenant-a/fenced\",\"partition\":0}]");
    Api.Reply hole =
        api.as(A_CONSUMER)
            .post(
                members + "m2/settle",
                "{\"settle\":[{\"ackId\":\""
                    + second.get("events").get(1).get("ackId").asText()
                    + "\",\"outcome\":\"done\"}]}");
    assertThat(hole.status()).isEqualTo(400);
    assertThat(hole.json().get("message").asText()).contains("not settled");
    StringBuilder both = new StringBuilder("{\"settle\":[");
    second
        .get("events")
        .forEach(
            e ->
                both.append(both.length() > 12 ? "," : "")
                    .append("{\"ackId\":\"")
                    .append(e.get("ackId").asText())
                    .append("\",\"outcome\":\"done\"}"));
    assertThat(
            api.as(A_CONSUMER)
                .post(members + "m2/settle", both.append("]}").toString())
                .json()
                .get("settled")
                .asInt())
        .isEqualTo(2);
    assertThat(api.get("/v1/subscriptions/a-fenced/lag").json().get("lag").asLong()).isZero();
    assertThat(api.as(A_CONSUMER).post(members + "bad%20id/fetch", "{}").status()).isEqualTo(400);
    assertThat(api.as(A_PRODUCER).post(members + "m3/fetch", "{}").status()).isEqualTo(403);
  }

  /**
   * A fetch that carries the last batch's settlements settles them first, then fetches: one round
   * trip per batch. A refused settlement answers as a settle does, and fetches nothing.
   */
  @Test
  void aFetchSettlesTheLastBatchBeforeItFetches() {
    String fetch = "/v1/subscriptions/a-cycle/members/m1/fetch";
    JsonNode first = subscribeAndFetch("cycle", "{\"max\":1,\"waitMillis\":500}", 1);
    assertThat(first.has("settled")).as("a fetch without settle says nothing of it").isFalse();
    JsonNode second =
        api.as(A_CONSUMER).post(fetch, "{\"max\":1,\"settle\":[" + done(first) + "]}").json();
    assertThat(second.get("settled").asInt()).isEqualTo(1);
    assertThat(second.get("events")).hasSize(1);
    assertThat(second.at("/events/0/event/key").asText()).isEqualTo("b");
    Api.Reply refused =
        api.as(A_CONSUMER)
            .post(
                fetch,
                "{\"settle\":[{\"ackId\":\"made-up\",\"outcome\":\"done\"}],\"waitMillis\":0}");
    assertThat(refused.status()).as(refused.toString()).isEqualTo(400);
    assertThat(refused.json().get("message").asText()).contains("settle[0]: ackId");
    assertThat(refused.json().has("events")).as("nothing fetched").isFalse();
    // What the refused request did not settle is still there.
    JsonNode again = api.as(A_CONSUMER).post(fetch, "{\"max\":1}").json();
    assertThat(again.at("/events/0/event/key").asText()).isEqualTo("b");
    JsonNode last = api.as(A_CONSUMER).post(fetch, "{\"settle\":[" + done(again) + "]}").json();
    assertThat(last.get("settled").asInt()).isEqualTo(1);
    assertThat(last.get("events")).isEmpty();
    assertThat(api.get("/v1/subscriptions/a-cycle/lag").json().get("lag").asLong()).isZero();
  }

  /**
   * Makes topic tenant-a/{name} (one partition) with events keyed a and b and subscription
   * a-{name}; returns the first fetch of member m1 that gives at least {@code n} events.
   */
  private JsonNode subscribeAndFetch(String name, String fetchBody, int n) {
    api.post("/v1/topics", "{\"name\":\"tenant-a/" + name + "\",\"partitions\":1}");
    api.post(
        "/v1/subscriptions",
        "{\"name\":\"a-" + name + "\",\"topics\":[\"tenant-a/" + name + "\"]}");
    api.post(
        "/v1/topics/" + enc("tenant-a/" + name) + "/events",
        "{\"events\":[{\"key\":\"a\",\"type\":\"T\"},{\"key\":\"b\",\"type\":\"T\"}]}");
    String fetch = "/v1/subscriptions/a-" + name + "/members/m1/fetch";
    JsonNode got = null;
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (got == null || got.get("events").size() < n) {
      assertThat(System.nanoTime()).as("m1 fetches " + n + " events").isLessThan(deadline);
      got = api.as(A_CONSUMER).post(fetch, fetchBody).json();
    }
    return got;
  }

  /** The settlement of a batch's only event as done. */
  private static String done(JsonNode batch) {
    return "{\"ackId\":\"" + batch.at("/events/0/ackId").asText() + "\",\"outcome\":\"done\"}";
  }

  /**
   * Members waiting in long polls are checked in by the server's renewals, one write for their
   * group: they stay in the group past several deadlines while their polls fetch no more than at
   * their start (a member that joined before the others checks in once more, with them there).
   */
  @Test
  void waitingMembersAreRenewedByTheServerInsteadOfFetching() throws Exception {
    api.post("/v1/topics", "{\"name\":\"tenant-a/quiet\",\"partitions\":2}");
    api.post("/v1/subscriptions", "{\"name\":\"a-quiet\",\"topics\":[\"tenant-a/quiet\"]}");
    local
        .admin()
        .setGroupPolicy(
            "a-quiet",
            io.boxline.GroupPolicy.DEFAULT
                .withCheckInRate(100)
                .withMinCheckInInterval(Duration.ofSeconds(1)));
    double fetchesBefore = api.metric("boxline_http_member_fetches_total");
    double renewedBefore = api.metric("boxline_http_members_renewed_total");
    List<java.util.concurrent.CompletableFuture<Api.Reply>> polls = new ArrayList<>();
    for (String m : List.of("m1", "m2", "m3")) {
      polls.add(
          java.util.concurrent.CompletableFuture.supplyAsync(
              () ->
                  api.as(A_CONSUMER)
                      .post(
                          "/v1/subscriptions/a-quiet/members/" + m + "/fetch",
                          "{\"waitMillis\":6000}")));
    }
    for (var poll : polls) {
      Api.Reply r = poll.get(30, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
      assertThat(r.json().get("events")).isEmpty();
    }
    double fetches = api.metric("boxline_http_member_fetches_total") - fetchesBefore;
    double renewed = api.metric("boxline_http_members_renewed_total") - renewedBefore;
    // Checking in by fetching, each would fetch about every second: 18 in all.
    assertThat(fetches).as("fetches of three 6-s polls with a 1-s check-in").isLessThanOrEqualTo(8);
    assertThat(renewed).as("check-ins made by renewals").isGreaterThanOrEqualTo(6);
    // The deadline is three intervals: all three are in the group after six seconds.
    assertThat(api.get("/v1/subscriptions/a-quiet/group").json().get("members"))
        .extracting(m -> m.get("id").asText())
        .containsExactlyInAnyOrder("a-consumer:m1", "a-consumer:m2", "a-consumer:m3");
  }

  /**
   * Members' requests look their subscription up once every few seconds, not per request; a
   * subscription deleted through this server is gone for its members at once, and one created again
   * under the same name is the new one.
   */
  @Test
  void aSubscriptionDeletedHereIsGoneForItsMembersAtOnce() {
    api.post("/v1/topics", "{\"name\":\"tenant-a/deleted\",\"partitions\":1}");
    api.post("/v1/subscriptions", "{\"name\":\"a-deleted\",\"topics\":[\"tenant-a/deleted\"]}");
    String fetch = "/v1/subscriptions/a-deleted/members/m1/fetch";
    assertThat(api.as(A_CONSUMER).post(fetch, "{}").status()).isEqualTo(200);
    assertThat(
            api.delete("/v1/subscriptions/a-deleted?force=true").json().get("deleted").asBoolean())
        .isTrue();
    // A token of some namespaces gets the same answer whether a subscription exists or not.
    Api.Reply gone = api.as(A_CONSUMER).post(fetch, "{}");
    assertThat(gone.status()).as(gone.toString()).isEqualTo(403);
    assertThat(gone.json().get("message").asText()).contains("'a-deleted'", "does not exist");
    api.post(
        "/v1/topics/tenant-a%2Fdeleted/events", "{\"key\":\"k\",\"type\":\"t\",\"payload\":1}");
    api.post(
        "/v1/subscriptions",
        "{\"name\":\"a-deleted\",\"topics\":[\"tenant-a/deleted\"],\"start\":\"earliest\"}");
    Api.Reply got = api.as(A_CONSUMER).post(fetch, "{\"waitMillis\":20000}");
    assertThat(got.json().get("events")).as("the new subscription's event").hasSize(1);
  }

  /** Reads {@code n} events from a tail stream: [id, payload]. */
  private List<String[]> readTail(String path, String lastEventId, int n) throws Exception {
    HttpURLConnection c = (HttpURLConnection) URI.create(api.base + path).toURL().openConnection();
    c.setRequestProperty("Authorization", "Bearer " + A_CONSUMER);
    if (lastEventId != null) {
      c.setRequestProperty("Last-Event-ID", lastEventId);
    }
    c.setReadTimeout(30_000);
    List<String[]> out = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(c.getContentType()).isEqualTo("text/event-stream");
      String id = null;
      String line;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (out.size() < n && (line = in.readLine()) != null) {
        assertThat(System.nanoTime())
            .as("read " + n + " events within 30 s, got " + out.size())
            .isLessThan(deadline);
        if (line.startsWith("id: ")) {
          id = line.substring(4);
        } else if (line.startsWith("data: ")) {
          out.add(new String[] {id, Api.JSON.readTree(line.substring(6)).get("payload").asText()});
        }
      }
    } finally {
      c.disconnect();
    }
    return out;
  }

  private int readTailStatus(String path, String token) throws Exception {
    HttpURLConnection c = (HttpURLConnection) URI.create(api.base + path).toURL().openConnection();
    c.setRequestProperty("Authorization", "Bearer " + token);
    try {
      return c.getResponseCode();
    } finally {
      c.disconnect();
    }
  }

  /**
   * Every endpoint that takes a token, called by tenant A's admin on tenant B's things: 403 on each
   * (lists answer 200 without B's items, checked above). The table must name every route the
   * server's API description lists, so a new endpoint cannot skip this check.
   */
  @Test
  void aTokenOfTenantAGets403OnEverythingOfTenantB() {
    String bSub = "/v1/subscriptions/b-audit";
    Map<String, String[]> calls = new LinkedHashMap<>();
    calls.put("POST /v1/namespaces", new String[] {"/v1/namespaces", "{\"name\":\"tenant-b/x\"}"});
    calls.put("DELETE /v1/namespaces/{namespace}", new String[] {"/v1/namespaces/tenant-b", null});
    calls.put(
        "POST /v1/topics",
        new String[] {"/v1/topics", "{\"name\":\"tenant-b/x\",\"partitions\":1}"});
    calls.put("GET /v1/topics/{topic}", new String[] {B_ORDERS, null});
    calls.put("DELETE /v1/topics/{topic}", new String[] {B_ORDERS + "?force=true", null});
    calls.put(
        "PUT /v1/topics/{topic}/retention",
        new String[] {B_ORDERS + "/retention", "{\"maxAge\":\"1d\"}"});
    calls.put(
        "GET /v1/topics/{topic}/partitions/{partition}/events",
        new String[] {B_ORDERS + "/partitions/0/events", null});
    calls.put(
        "GET /v1/topics/{topic}/partitions/{partition}/events/{sequence}",
        new String[] {B_ORDERS + "/partitions/0/events/1", null});
    calls.put(
        "POST /v1/topics/{topic}/events",
        new String[] {B_ORDERS + "/events", "{\"key\":\"x\",\"type\":\"T\"}"});
    calls.put("GET /v1/topics/{topic}/tail", new String[] {B_ORDERS + "/tail", null});
    calls.put(
        "POST /v1/subscriptions",
        new String[] {
          "/v1/subscriptions", "{\"name\":\"steal\",\"topics\":[\"tenant-b/orders\"]}"
        });
    calls.put("GET /v1/subscriptions/{subscription}", new String[] {bSub, null});
    calls.put("DELETE /v1/subscriptions/{subscription}", new String[] {bSub + "?force=true", null});
    for (String tail :
        List.of(
            "lag",
            "group",
            "group-policy",
            "failures",
            "retries",
            "dead-letters",
            "dead-letters/reasons")) {
      calls.put(
          "GET /v1/subscriptions/{subscription}/" + tail, new String[] {bSub + "/" + tail, null});
    }
    calls.put(
        "PUT /v1/subscriptions/{subscription}/group-policy",
        new String[] {bSub + "/group-policy", "{}"});
    calls.put(
        "DELETE /v1/subscriptions/{subscription}/group-policy",
        new String[] {bSub + "/group-policy", null});
    calls.put(
        "POST /v1/subscriptions/{subscription}/rewind",
        new String[] {bSub + "/rewind", "{\"to\":\"latest\"}"});
    calls.put(
        "POST /v1/subscriptions/{subscription}/rename",
        new String[] {bSub + "/rename", "{\"to\":\"tenant-a/taken\"}"});
    calls.put(
        "POST /v1/subscriptions/{subscription}/dead-letters/redrive",
        new String[] {bSub + "/dead-letters/redrive", "{}"});
    calls.put(
        "POST /v1/subscriptions/{subscription}/dead-letters/discard",
        new String[] {bSub + "/dead-letters/discard", "{}"});
    calls.put(
        "POST /v1/subscriptions/{subscription}/members/{member}/fetch",
        new String[] {bSub + "/members/m/fetch", "{}"});
    calls.put(
        "POST /v1/subscriptions/{subscription}/members/{member}/settle",
        new String[] {bSub + "/members/m/settle", "{\"settle\":[]}"});
    calls.put(
        "DELETE /v1/subscriptions/{subscription}/members/{member}",
        new String[] {bSub + "/members/m", null});
    calls.put(
        "GET /v1/ws/topics/{topic}/tail",
        new String[] {B_ORDERS.replace("/v1/", "/v1/ws/") + "/tail", null});
    calls.put(
        "GET /v1/ws/subscriptions/{subscription}/members/{member}",
        new String[] {bSub.replace("/v1/", "/v1/ws/") + "/members/m", null});
    calls.put("GET /v1/outbox", new String[] {"/v1/outbox", null});
    calls.put("PUT /v1/group-policy", new String[] {"/v1/group-policy", "{}"});
    Set<String> listsAndSelf =
        Set.of(
            "GET /v1/whoami",
            "GET /v1/namespaces",
            "GET /v1/topics",
            "GET /v1/subscriptions",
            "GET /v1/failures",
            "GET /v1/overview");

    Set<String> described = api.as(null).describedRoutes();
    described.removeIf(r -> !r.contains(" /v1/"));
    Set<String> covered = new HashSet<>(calls.keySet());
    covered.addAll(listsAndSelf);
    assertThat(covered).isEqualTo(described);

    Api a = api.as(A_ADMIN);
    for (Map.Entry<String, String[]> call : calls.entrySet()) {
      String method = call.getKey().substring(0, call.getKey().indexOf(' '));
      Api.Reply r = a.call(method, call.getValue()[0], call.getValue()[1]);
      assertThat(r.status()).as(call.getKey() + " -> " + r).isEqualTo(403);
      assertThat(r.json().get("error").asText()).isEqualTo("forbidden");
    }
    // The lists show tenant A's part only.
    JsonNode overview = a.get("/v1/overview").json();
    assertThat(overview.get("topics").findValuesAsText("name"))
        .noneMatch(n -> n.startsWith("tenant-b/"));
    assertThat(overview.get("subscriptions").findValuesAsText("name")).doesNotContain("b-audit");
    assertThat(overview.has("outbox")).isFalse();
    // Nothing of tenant B changed.
    assertThat(api.get(B_ORDERS).status()).isEqualTo(200);
    assertThat(api.get(bSub).status()).isEqualTo(200);
    assertThat(api.get("/v1/subscriptions/steal").status()).isEqualTo(404);
  }

  /**
   * A member whose connection closes in a long poll (its process killed) stops being checked in: it
   * leaves the group at its deadline (3 × 2 s), not when its 30-s wait would have ended.
   */
  @Test
  void aMemberWhoseConnectionClosesInALongPollLeavesAtItsDeadline() throws Exception {
    assertThat(
            api.post("/v1/subscriptions", "{\"name\":\"a-gone\",\"topics\":[\"tenant-a/orders\"]}")
                .status())
        .isEqualTo(201);
    URI base = URI.create(api.base);
    String body = "{\"waitMillis\":30000}";
    long closedAt;
    try (java.net.Socket s = new java.net.Socket(base.getHost(), base.getPort())) {
      s.getOutputStream()
          .write(
              ("POST /v1/subscriptions/a-gone/members/doomed/fetch HTTP/1.1\r\n"
                      + "Host: x\r\nAuthorization: Bearer "
                      + A_CONSUMER
                      + "\r\nContent-Type: application/json\r\nContent-Length: "
                      + body.length()
                      + "\r\n\r\n"
                      + body)
                  .getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().flush();
      await(
          "the member in the group",
          () ->
              api.get("/v1/subscriptions/a-gone/group")
                  .json()
                  .get("members")
                  .findValuesAsText("id")
                  .contains("a-consumer:doomed"));
      closedAt = System.nanoTime();
    }
    await(
        "the member gone",
        () -> api.get("/v1/subscriptions/a-gone/group").json().get("members").isEmpty());
    double seconds = (System.nanoTime() - closedAt) / 1e9;
    assertThat(seconds).as("left after its deadline, not after waitMillis").isLessThan(15);
    assertThat(api.delete("/v1/subscriptions/a-gone?force=true").status()).isEqualTo(200);
  }
}
