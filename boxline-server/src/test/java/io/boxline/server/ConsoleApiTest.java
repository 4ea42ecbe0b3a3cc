package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.TopicName;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the console reads besides the admin API everyone uses: the overview, dead letters by reason,
 * browsing by time, the viewer role, and the console's files with their security headers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleApiTest {
  static final String ADMIN = "console-api-admin";
  static final String VIEWER = "console-api-viewer";
  static final String A_VIEWER = "console-api-a-viewer";
  static final String PAGING_VIEWER = "console-api-paging-viewer";
  static final TopicName ORDERS = TopicName.parse("tenant-a/orders");

  String schema;
  BoxlineServer server;
  Api api;

  @BeforeAll
  void start() {
    schema = Databases.uniqueName("bx_capi_");
    Databases.postgres();
    server =
        BoxlineServer.start(
            ServerConfig.parse(
                "http: {port: 0}\n"
                    + Databases.postgresYaml(schema)
                    + "tokens:\n"
                    + "  - {name: all, secret: "
                    + ADMIN
                    + ", role: admin, namespaces: ['*']}\n"
                    + "  - {name: wall, secret: "
                    + VIEWER
                    + ", role: viewer, namespaces: ['*']}\n"
                    + "  - {name: a-wall, secret: "
                    + A_VIEWER
                    + ", role: viewer, namespaces: [tenant-a]}\n"
                    + "  - {name: paging-wall, secret: "
                    + PAGING_VIEWER
                    + ", role: viewer, namespaces: [paging]}\n"
                    + "topics:\n"
                    + "  - {name: tenant-a/orders, partitions: 2}\n"
                    + "  - {name: tenant-b/orders, partitions: 2}\n"
                    + "subscriptions:\n"
                    + "  - {name: a-billing, topics: [tenant-a/orders]}\n"
                    + "  - {name: b-billing, topics: [tenant-b/orders]}\n",
                "test",
                Map.of()));
    api = new Api(server.baseUrl(), ADMIN);
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  private void publish(String key, int n) {
    var b = server.boxline();
    b.inTransaction(
        tx ->
            b.publisher()
                .publish(
                    tx,
                    OutgoingEvent.builder(ORDERS)
                        .type("order")
                        .key(key)
                        .payload(("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8))
                        .contentType("application/json")
                        .build()));
  }

  @Test
  void theOverviewCountsWhatAdminCountsForTheTokensNamespaces() throws Exception {
    for (int i = 0; i < 5; i++) {
      publish("k" + i, i);
    }
    var admin = server.boxline().admin();
    ServerApiTest.await("five events sequenced", () -> admin.topicState(ORDERS).events() == 5);
    JsonNode o = api.get("/v1/overview").json();
    assertThat(o.get("topics").findValuesAsText("name"))
        .contains("tenant-a/orders", "tenant-b/orders");
    assertThat(o.get("outbox").get("events").asLong()).isGreaterThanOrEqualTo(0);
    JsonNode a = null;
    for (JsonNode s : o.get("subscriptions")) {
      if (s.get("name").asText().equals("a-billing")) {
        a = s;
      }
    }
    assertThat(a).isNotNull();
    long lag = admin.lag("a-billing").stream().mapToLong(PartitionLag::backlog).sum();
    assertThat(a.get("lag").asLong()).isEqualTo(lag).isEqualTo(5);
    assertThat(a.get("handled").asLong()).isZero();
    assertThat(a.get("members").asInt()).isZero();
    assertThat(a.get("health").get("status").asText()).isEqualTo("critical");
    assertThat(a.get("health").get("reasons").get(0).asText())
        .isEqualTo("5 events wait and no member consumes them");
    // A JSON payload is sent parsed, or on request as the stored bytes.
    String events = "/v1/topics/" + enc("tenant-a/orders") + "/partitions/";
    int p = api.get(events + "0/events?limit=1").json().get("events").isEmpty() ? 1 : 0;
    JsonNode parsed = api.get(events + p + "/events?limit=1").json().get("events").get(0);
    assertThat(parsed.get("payload").has("n")).isTrue();
    JsonNode raw = api.get(events + p + "/events/1?payload=base64").json();
    assertThat(raw.has("payload")).isFalse();
    assertThat(new String(java.util.Base64.getDecoder().decode(raw.get("payloadBase64").asText())))
        .isEqualTo("{\"n\":" + parsed.get("payload").get("n").asInt() + "}");
    // A viewer of one namespace sees its part only, and no cluster-wide outbox.
    JsonNode scoped = api.as(A_VIEWER).get("/v1/overview").json();
    assertThat(scoped.get("topics").findValuesAsText("name"))
        .contains("tenant-a/orders")
        .allMatch(n -> n.startsWith("tenant-a/"));
    assertThat(scoped.get("subscriptions").findValuesAsText("name"))
        .contains("a-billing")
        .doesNotContain("b-billing");
    assertThat(scoped.has("outbox")).isFalse();
  }

  @Test
  void topicsSubscriptionsAndTheOverviewPageByNameOnTheServer() {
    for (String t : new String[] {"paging/e", "paging/a", "paging/d", "paging/b", "paging/c"}) {
      assertThat(api.post("/v1/topics", "{\"name\":\"" + t + "\",\"partitions\":1}").status())
          .isEqualTo(201);
    }
    for (String[] s : new String[][] {{"paging/s-a", "paging/a"}, {"paging/s-d", "paging/d"}}) {
      assertThat(
              api.post(
                      "/v1/subscriptions",
                      "{\"name\":\"" + s[0] + "\",\"topics\":[\"" + s[1] + "\"]}")
                  .status())
          .isEqualTo(201);
    }
    Api viewer = api.as(PAGING_VIEWER);
    java.util.List<String> names = new java.util.ArrayList<>();
    java.util.List<String> cursors = new java.util.ArrayList<>();
    String after = "";
    do {
      JsonNode page = viewer.get("/v1/topics?limit=2" + after).json();
      assertThat(page.get("topics").size()).isBetween(1, 2);
      page.get("topics").forEach(t -> names.add(t.get("name").asText()));
      cursors.add(page.get("next").asText(null));
      after = page.get("next").isNull() ? null : "&after=" + enc(page.get("next").asText());
    } while (after != null);
    assertThat(names).containsExactly("paging/a", "paging/b", "paging/c", "paging/d", "paging/e");
    assertThat(cursors).containsExactly("paging/b", "paging/d", null);

    JsonNode subs = viewer.get("/v1/subscriptions?limit=1").json();
    assertThat(subs.get("subscriptions").get(0).get("name").asText()).isEqualTo("paging/s-a");
    assertThat(subs.get("next").asText()).isEqualTo("paging/s-a");
    JsonNode last = viewer.get("/v1/subscriptions?limit=1&after=paging%2Fs-a").json();
    assertThat(last.get("subscriptions").get(0).get("name").asText()).isEqualTo("paging/s-d");
    assertThat(last.get("next").isNull()).isTrue();

    // The overview's page holds its topics and their subscriptions only; totals count all.
    JsonNode second = viewer.get("/v1/overview?limit=2&after=paging%2Fb").json();
    assertThat(second.get("topics").findValuesAsText("name"))
        .containsExactly("paging/c", "paging/d");
    assertThat(second.get("subscriptions").findValuesAsText("name")).containsExactly("paging/s-d");
    assertThat(second.get("totals").get("topics").asInt()).isEqualTo(5);
    assertThat(second.get("totals").get("subscriptions").asInt()).isEqualTo(2);
    assertThat(second.get("next").asText()).isEqualTo("paging/d");

    assertThat(viewer.get("/v1/topics?limit=0").status()).isEqualTo(400);
    assertThat(viewer.get("/v1/topics?limit=1001").status()).isEqualTo(400);
  }

  @Test
  void aViewerReadsEverythingAndChangesNothing() {
    Api viewer = api.as(VIEWER);
    assertThat(viewer.get("/v1/whoami").json().get("role").asText()).isEqualTo("viewer");
    assertThat(viewer.get("/v1/subscriptions/a-billing/dead-letters").status()).isEqualTo(200);
    assertThat(viewer.get("/v1/subscriptions/a-billing/dead-letters/reasons").status())
        .isEqualTo(200);
    Api.Reply forged = viewer.post("/v1/subscriptions/a-billing/dead-letters/redrive", "{}");
    assertThat(forged.status()).isEqualTo(403);
    assertThat(forged.json().get("message").asText())
        .isEqualTo("token 'wall' has role viewer, which may not redrive or discard dead letters");
    assertThat(viewer.post("/v1/topics", "{\"name\":\"tenant-a/x\"}").status()).isEqualTo(403);
    assertThat(
            viewer
                .post("/v1/topics/" + enc("tenant-a/orders") + "/events", "{\"type\":\"t\"}")
                .status())
        .isEqualTo(403);
    assertThat(server.boxline().admin().topic(TopicName.parse("tenant-a/x"))).isEmpty();
  }

  @Test
  void deadLettersAreGroupedByReasonOverHttp() throws Exception {
    var b = server.boxline();
    b.admin().createTopic(TopicName.parse("tenant-a/reasons"), 1);
    b.admin()
        .createSubscription(
            io.boxline.SubscriptionSpec.of("a-reasons", TopicName.parse("tenant-a/reasons")));
    try (var consumer =
        b.consumer("a-reasons")
            .retryPolicy(
                io.boxline.RetryPolicy.exponential(Duration.ofMillis(5), Duration.ofMillis(5))
                    .inPlaceAttempts(1)
                    .maxAttempts(1))
            .handler(
                e -> {
                  throw new IllegalArgumentException(e.type().equals("a") ? "bad a" : "bad b");
                })
            .start()) {
      b.inTransaction(
          tx -> {
            for (String t : new String[] {"a", "a", "b"}) {
              b.publisher()
                  .publish(
                      tx,
                      OutgoingEvent.builder(TopicName.parse("tenant-a/reasons"))
                          .type(t)
                          .payload(new byte[] {1})
                          .build());
            }
            return null;
          });
      ServerApiTest.await(
          "three dead letters", () -> b.admin().failures("a-reasons").deadLetters() == 3);
    }
    JsonNode r = api.get("/v1/subscriptions/a-reasons/dead-letters/reasons").json();
    assertThat(r.get("reasons")).hasSize(2);
    assertThat(r.get("reasons").get(0).get("reason").asText())
        .isEqualTo("java.lang.IllegalArgumentException: bad a");
    assertThat(r.get("reasons").get(0).get("count").asLong()).isEqualTo(2);
    // The reason selects its group for a redrive's dry run.
    JsonNode dry =
        api.post(
                "/v1/subscriptions/a-reasons/dead-letters/redrive",
                "{\"error\":\"java.lang.IllegalArgumentException: bad a\",\"dryRun\":true}")
            .json();
    assertThat(dry.get("affected").asInt()).isEqualTo(2);
    assertThat(dry.get("more").asBoolean()).isFalse();
    assertThat(api.get("/v1/subscriptions/a-reasons/dead-letters/reasons?limit=0").status())
        .isEqualTo(400);
    // A bulk action past its limit says that more remain; the same request again goes on.
    JsonNode partly =
        api.post(
                "/v1/subscriptions/a-reasons/dead-letters/redrive",
                "{\"error\":\"java.lang.IllegalArgumentException: bad a\",\"dryRun\":true,"
                    + "\"limit\":1}")
            .json();
    assertThat(partly.get("affected").asInt()).isEqualTo(1);
    assertThat(partly.get("limit").asInt()).isEqualTo(1);
    assertThat(partly.get("more").asBoolean()).isTrue();
    JsonNode first =
        api.post("/v1/subscriptions/a-reasons/dead-letters/discard", "{\"limit\":2}").json();
    assertThat(first.get("affected").asInt()).isEqualTo(2);
    assertThat(first.get("more").asBoolean()).isTrue();
    JsonNode rest =
        api.post("/v1/subscriptions/a-reasons/dead-letters/discard", "{\"limit\":2}").json();
    assertThat(rest.get("affected").asInt()).isEqualTo(1);
    assertThat(rest.get("more").asBoolean()).isFalse();
  }

  @Test
  void eventsAreFoundByTime() throws Exception {
    var b = server.boxline();
    TopicName t = TopicName.parse("tenant-a/timeline");
    b.admin().createTopic(t, 1);
    Instant[] middle = new Instant[1];
    for (int i = 0; i < 40; i++) {
      if (i == 25) {
        Thread.sleep(5); // two creation times apart, so that a time falls between events
        middle[0] = Instant.now();
        Thread.sleep(5);
      }
      final int n = i;
      b.inTransaction(
          tx ->
              b.publisher()
                  .publish(
                      tx,
                      OutgoingEvent.builder(t)
                          .type("tick")
                          .payload(new byte[] {(byte) n})
                          .build()));
    }
    ServerApiTest.await("forty events", () -> b.admin().topicState(t).events() == 40);
    String path = "/v1/topics/" + enc(t.toString()) + "/partitions/0/events";
    JsonNode page = api.get(path + "?limit=3&at=" + middle[0]).json();
    assertThat(page.get("events").get(0).get("sequence").asLong()).isEqualTo(26);
    assertThat(
            api.get(path + "?at=2000-01-01T00:00:00Z&limit=1")
                .json()
                .get("events")
                .get(0)
                .get("sequence")
                .asLong())
        .isEqualTo(1);
    assertThat(api.get(path + "?at=2999-01-01T00:00:00Z").json().get("events")).isEmpty();
    assertThat(api.get(path + "?at=yesterday").status()).isEqualTo(400);
    assertThat(api.get(path + "?payload=xml").status()).isEqualTo(400);
    assertThat(api.get(path + "?at=2000-01-01T00:00:00Z&after=3").json().get("message").asText())
        .isEqualTo("give after (a sequence) or at (a time), not both");
  }

  @Test
  void theConsoleIsServedWithItsSecurityHeaders() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> root =
        ApiContract.checked(
            http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/")).build(),
                HttpResponse.BodyHandlers.ofString()));
    assertThat(root.statusCode()).isEqualTo(302);
    assertThat(root.headers().firstValue("Location")).contains("/console/");
    HttpResponse<String> page =
        ApiContract.checked(
            http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/console/")).build(),
                HttpResponse.BodyHandlers.ofString()));
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type")).contains("text/html; charset=utf-8");
    assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
        .contains("script-src 'self'")
        .contains("frame-ancestors 'none'");
    assertThat(page.body()).contains("<script type=\"module\" src=\"app.js\">");
    String etag = page.headers().firstValue("ETag").orElseThrow();
    HttpResponse<String> again =
        ApiContract.checked(
            http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/console/"))
                    .header("If-None-Match", etag)
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
    assertThat(again.statusCode()).isEqualTo(304);
    for (String file : new String[] {"app.js", "app.css", "overview.js", "logo.svg"}) {
      assertThat(
              ApiContract.checked(
                      http.send(
                          HttpRequest.newBuilder(URI.create(server.baseUrl() + "/console/" + file))
                              .build(),
                          HttpResponse.BodyHandlers.ofString()))
                  .statusCode())
          .as(file)
          .isEqualTo(200);
    }
    for (String bad : new String[] {"..%2Fopenapi.json", "missing.js", "App.JS", "x.class"}) {
      assertThat(
              ApiContract.checked(
                      http.send(
                          HttpRequest.newBuilder(URI.create(server.baseUrl() + "/console/" + bad))
                              .build(),
                          HttpResponse.BodyHandlers.ofString()))
                  .statusCode())
          .as(bad)
          .isEqualTo(404);
    }
  }

  @Test
  void theConsoleCanBeTurnedOff() {
    try (BoxlineServer off =
        BoxlineServer.start(
            ServerConfig.parse(
                "http: {port: 0, console: false}\nauth: {disabled: true}\n"
                    + "database: {url: 'jdbc:h2:mem:console-off;DB_CLOSE_DELAY=-1'}\n",
                "test",
                Map.of()))) {
      Api anyone = new Api(off.baseUrl(), null);
      assertThat(anyone.get("/console/").status()).isEqualTo(404);
      assertThat(anyone.get("/v1/overview").status()).isEqualTo(200);
    }
  }
}
