package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The server as people run it: its log lines (JSON or text, one format for every library), the
 * access log, gzip answers and HTTP/2 cleartext, on a server in its own JVM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerOperationsTest {
  static final String TOKEN = "operations-test-admin-token";
  static final String TOPIC = "/v1/topics/" + enc("app/orders");
  static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  String schema;

  /** The server with the default text logs, gzip (on by default) and h2c. */
  ServerProcess text;

  String base;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_ops_");
    // The database is its own "read replica" under another URL: the store checks that the replica
    // shows the primary's schema, reads the log there, and counts it on /metrics.
    text =
        ServerProcess.startWithConfig(
            config(schema, "http: {port: 0, h2c: true}\n")
                .replace(
                    ", user: postgres, schema: ",
                    ", user: postgres, replicas: [{url: '"
                        + Databases.PG_URL
                        + (Databases.PG_URL.contains("?") ? "&" : "?")
                        + "ApplicationName=boxline-replica', user: postgres}], schema: "));
    base = text.awaitReady(Duration.ofSeconds(90));
  }

  @AfterAll
  void stop() throws Exception {
    if (text != null) {
      text.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  static String config(String schema, String extra) {
    return extra
        + "database: {url: '"
        + Databases.PG_URL
        + "', user: postgres, schema: "
        + schema
        + "}\n"
        + "tokens:\n  - {name: ops, secret: "
        + TOKEN
        + ", role: admin, namespaces: ['*']}\n"
        + "topics:\n  - {name: app/orders, partitions: 1}\n";
  }

  static HttpRequest.Builder request(String url) {
    return HttpRequest.newBuilder(URI.create(url))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + TOKEN);
  }

  static HttpResponse<byte[]> send(HttpRequest r) throws Exception {
    return ApiContract.checked(CLIENT.send(r, HttpResponse.BodyHandlers.ofByteArray()));
  }

  static HttpRequest publish(String base, String requestId, int n) {
    HttpRequest.Builder b =
        request(base + TOPIC + "/events")
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"key\":\"k\",\"type\":\"T\",\"payload\":{\"n\":" + n + "}}"));
    if (requestId != null) {
      b.header("X-Request-Id", requestId);
    }
    return b.build();
  }

  /** The first output line that satisfies {@code test}, waiting for it at most 30 s. */
  static String awaitLine(ServerProcess p, String what, java.util.function.Predicate<String> test)
      throws InterruptedException {
    String[] found = new String[1];
    ServerApiTest.await(
        what + " in the server's output",
        () -> {
          for (String line : p.output) {
            if (test.test(line)) {
              found[0] = line;
              return true;
            }
          }
          return false;
        });
    return found[0];
  }

  /** Lines the server prints on standard output for people, not log records. */
  static boolean statusLine(String line) {
    return line.startsWith("ready: ")
        || line.startsWith("stopping: ")
        || line.matches("stopped in \\d+\\.\\d s");
  }

  /**
   * {@code log.format: json}: every log line (Boxline's, Jetty's, the pool's) is one JSON object;
   * each request has an access line with the route pattern, the status, the token's name and the
   * request id the client sent, which the answer echoes; a stop leaves no stack trace.
   */
  @Test
  void jsonLogsAreOneObjectPerLineWithAnAccessLinePerRequest() throws Exception {
    String jsonSchema = Databases.uniqueName("bx_ops_");
    try (ServerProcess p =
        ServerProcess.startWithConfig(
            config(jsonSchema, "http: {port: 0}\nlog: {format: json}\n"))) {
      String url = p.awaitReady(Duration.ofSeconds(90));
      HttpResponse<byte[]> sent = send(publish(url, "req-42.test", 1));
      assertThat(sent.statusCode()).isEqualTo(200);
      assertThat(sent.headers().firstValue("X-Request-Id")).hasValue("req-42.test");
      HttpResponse<byte[]> generated = send(publish(url, "not a sane id " + "x".repeat(80), 2));
      String id = generated.headers().firstValue("X-Request-Id").orElseThrow();
      assertThat(id).matches("[0-9a-f]{16}");
      HttpResponse<byte[]> missing =
          send(request(url + "/v1/topics/" + enc("app/nothing")).GET().build());
      assertThat(missing.statusCode()).isEqualTo(404);

      JsonNode access =
          Api.JSON.readTree(
              awaitLine(p, "the access line of req-42.test", l -> l.contains("\"req-42.test\"")));
      assertThat(access.get("logger_name").asText()).isEqualTo("io.boxline.server.access");
      assertThat(access.get("level").asText()).isEqualTo("INFO");
      assertThat(access.get("requestId").asText()).isEqualTo("req-42.test");
      assertThat(access.get("method").asText()).isEqualTo("POST");
      assertThat(access.get("route").asText()).isEqualTo("/v1/topics/{topic}/events");
      assertThat(access.get("status").asInt()).isEqualTo(200);
      assertThat(access.get("token").asText()).isEqualTo("ops");
      assertThat(access.get("durationMs").isNumber()).as(access.toString()).isTrue();
      assertThat(access.get("bytes").asLong()).isPositive();
      assertThat(access.get("message").asText()).isEqualTo("POST /v1/topics/{topic}/events 200");
      JsonNode other =
          Api.JSON.readTree(awaitLine(p, "the access line of " + id, l -> l.contains(id)));
      assertThat(other.get("requestId").asText()).isEqualTo(id);
      JsonNode notFound =
          Api.JSON.readTree(
              awaitLine(
                  p,
                  "the access line of the 404",
                  l -> l.contains("\"status\":404") && l.contains("\"GET\"")));
      assertThat(notFound.get("route").asText()).isEqualTo("/v1/topics/{topic}");

      // Without http.h2c (the default) an HTTP/2 client is answered in HTTP/1.1.
      HttpResponse<String> h2 =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_2)
              .build()
              .send(
                  request(url + "/health/live").GET().build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(h2.statusCode()).isEqualTo(200);
      assertThat(h2.version()).isEqualTo(HttpClient.Version.HTTP_1_1);

      p.process.toHandle().destroy();
      p.awaitExit(Duration.ofSeconds(60));
      List<String> records = new ArrayList<>();
      for (String line : p.output) {
        if (!statusLine(line)) {
          records.add(line);
        }
      }
      assertThat(records).as("log records").hasSizeGreaterThan(5);
      List<String> loggers = new ArrayList<>();
      for (String line : records) {
        JsonNode record;
        try {
          record = Api.JSON.readTree(line);
        } catch (IOException e) {
          throw new AssertionError("not a JSON log line: " + line + "\n" + p.log(), e);
        }
        assertThat(record.isObject()).as(line).isTrue();
        assertThat(record.has("@timestamp") && record.has("level") && record.has("message"))
            .as(line)
            .isTrue();
        assertThat(record.has("stack_trace")).as("no stack trace: " + line).isFalse();
        loggers.add(record.get("logger_name").asText());
      }
      assertThat(loggers)
          .as("Boxline's System.Logger, Jetty and the pool in the same format")
          .contains("io.boxline.server")
          .anyMatch(l -> l.startsWith("org.eclipse.jetty"))
          .anyMatch(l -> l.startsWith("com.zaxxer.hikari"));
    } finally {
      Databases.dropPostgresSchema(jsonSchema);
    }
  }

  /** The default text format: a line per record, key=value, the access line's fields after. */
  @Test
  void textLogsAreReadableLines() throws Exception {
    HttpResponse<byte[]> sent = send(publish(base, "text-req-7", 1));
    assertThat(sent.statusCode()).isEqualTo(200);
    String line = awaitLine(text, "the access line", l -> l.contains("\"text-req-7\""));
    assertThat(line)
        .matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}[+-]\\d{4} level=INFO"
                + " logger=io\\.boxline\\.server\\.access msg=\"POST /v1/topics/\\{topic}/events"
                + " 200\" requestId=\"text-req-7\" token=\"ops\" method=\"POST\""
                + " route=\"/v1/topics/\\{topic}/events\" status=\"200\" durationMs=\"[0-9.]+\""
                + " bytes=\"\\d+\" client=\"127\\.0\\.0\\.1\"");
    assertThat(text.output)
        .anyMatch(
            l ->
                l.contains(
                    "level=INFO logger=io.boxline.server msg=\"Boxline server listening on"));
  }

  /**
   * With {@code Accept-Encoding: gzip} a large answer comes gzipped and decompresses to the plain
   * one (which keeps its Content-Length); small answers are sent as they are.
   */
  @Test
  void largeAnswersAreGzippedForClientsThatAcceptIt() throws Exception {
    HttpResponse<byte[]> plain = send(request(base + "/openapi.json").GET().build());
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.headers().firstValue("Content-Encoding")).isEmpty();
    assertThat(plain.headers().firstValueAsLong("Content-Length"))
        .hasValue((long) plain.body().length);
    assertThat(plain.body().length).isGreaterThan(4096);

    HttpResponse<byte[]> zipped =
        send(request(base + "/openapi.json").header("Accept-Encoding", "gzip").GET().build());
    assertThat(zipped.statusCode()).isEqualTo(200);
    assertThat(zipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
    assertThat(zipped.body().length).isLessThan(plain.body().length / 2);
    assertThat(gunzip(zipped.body())).isEqualTo(plain.body());

    // A JSON answer of the API, and the console's script.
    for (int i = 0; i < 30; i++) {
      assertThat(send(publish(base, null, i)).statusCode()).isEqualTo(200);
    }
    String events = base + TOPIC + "/partitions/0/events?limit=30";
    HttpResponse<byte[]> list = send(request(events).GET().build());
    HttpResponse<byte[]> listZipped =
        send(request(events).header("Accept-Encoding", "gzip").GET().build());
    assertThat(listZipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
    assertThat(Api.JSON.readTree(gunzip(listZipped.body())))
        .isEqualTo(Api.JSON.readTree(list.body()));

    HttpResponse<byte[]> small =
        send(request(base + "/health/live").header("Accept-Encoding", "gzip").GET().build());
    assertThat(small.headers().firstValue("Content-Encoding")).isEmpty();
    assertThat(new String(small.body(), StandardCharsets.UTF_8)).contains("UP");
  }

  static byte[] gunzip(byte[] body) throws IOException {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
      return in.readAllBytes();
    }
  }

  /**
   * A tail stream is never compressed, even when the client accepts gzip: each event arrives while
   * the stream stays open.
   */
  @Test
  void tailStreamsAreNotCompressedAndDeliverEachEventAtOnce() throws Exception {
    HttpResponse<Stream<String>> tail =
        CLIENT.send(
            request(base + TOPIC + "/tail?from=latest")
                .header("Accept-Encoding", "gzip")
                .timeout(Duration.ofSeconds(60))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofLines());
    try (Stream<String> lines = tail.body()) {
      assertThat(tail.statusCode()).isEqualTo(200);
      assertThat(tail.headers().firstValue("Content-Type")).hasValue("text/event-stream");
      assertThat(tail.headers().firstValue("Content-Encoding")).isEmpty();
      Iterator<String> it = lines.iterator();
      for (int n = 1000; n < 1003; n++) {
        assertThat(send(publish(base, null, n)).statusCode()).isEqualTo(200);
        String expected = "\"n\":" + n;
        CompletableFuture<String> data =
            CompletableFuture.supplyAsync(
                () -> {
                  while (it.hasNext()) {
                    String line = it.next();
                    if (line.startsWith("data: ") && line.contains(expected)) {
                      return line;
                    }
                  }
                  return null;
                });
        assertThat(data.get(20, TimeUnit.SECONDS)).as("event " + n).isNotNull();
      }
    }
  }

  /** {@code database.replicas}: a tail from the start reads the log on the replica. */
  @Test
  void aTailReadsTheLogOnTheReadReplica() throws Exception {
    for (int n = 2000; n < 2003; n++) {
      assertThat(send(publish(base, null, n)).statusCode()).isEqualTo(200);
    }
    HttpResponse<Stream<String>> tail =
        CLIENT.send(
            request(base + TOPIC + "/tail?from=earliest")
                .timeout(Duration.ofSeconds(60))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofLines());
    try (Stream<String> lines = tail.body()) {
      Iterator<String> it = lines.iterator();
      CompletableFuture<Boolean> seen =
          CompletableFuture.supplyAsync(
              () -> {
                while (it.hasNext()) {
                  if (it.next().contains("\"n\":2002")) {
                    return true;
                  }
                }
                return false;
              });
      assertThat(seen.get(20, TimeUnit.SECONDS)).isTrue();
    }
    String metrics =
        new String(send(request(base + "/metrics").GET().build()).body(), StandardCharsets.UTF_8);
    assertThat(HandlerProgramTest.metric(metrics, "boxline_log_reads_total{source=\"replica\"}"))
        .as("log reads the replica answered")
        .isPositive();
    assertThat(text.log()).doesNotContain("is not a copy of the primary");
  }

  /** {@code http.h2c: true}: HTTP/2 by upgrade (the JDK's client) and by prior knowledge (curl). */
  @Test
  void h2cServesHttp2ByUpgradeAndPriorKnowledge() throws Exception {
    HttpClient h2 =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_2)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    HttpResponse<String> first =
        ApiContract.checked(
            h2.send(
                request(base + "/health/live").GET().build(),
                HttpResponse.BodyHandlers.ofString()));
    assertThat(first.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(first.body()).contains("UP");
    HttpResponse<String> sent =
        ApiContract.checked(
            h2.send(publish(base, "h2-req", 5), HttpResponse.BodyHandlers.ofString()));
    assertThat(sent.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(sent.statusCode()).as(sent.body()).isEqualTo(200);
    assertThat(sent.headers().firstValue("X-Request-Id")).hasValue("h2-req");

    Process curl =
        new ProcessBuilder(
                "curl",
                "-s",
                "--http2-prior-knowledge",
                "-o",
                "/dev/null",
                "-w",
                "%{http_version} %{http_code}",
                base + "/health/live")
            .redirectErrorStream(true)
            .start();
    assertThat(curl.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("2 200");
  }

  /**
   * {@code log.level: warn} keeps only what needs attention, {@code log.access: false} drops the
   * access line; {@code log.levels} sets one logger (and those under it) apart.
   */
  @Test
  void levelsAndTheAccessSwitchShapeWhatIsLogged() throws Exception {
    String quietSchema = Databases.uniqueName("bx_ops_");
    try (ServerProcess p =
        ServerProcess.startWithConfig(
            config(
                quietSchema,
                "http: {port: 0}\n"
                    + "log: {level: warn, access: false, levels: {io.boxline.server: info}}\n"))) {
      String url = p.awaitReady(Duration.ofSeconds(90));
      assertThat(send(publish(url, "quiet-req", 1)).statusCode()).isEqualTo(200);
      assertThat(send(publish(url, "quiet-req-2", 2)).statusCode()).isEqualTo(200);
      // Read after the stop, when every line the two requests could cause has been written.
      p.process.toHandle().destroy();
      p.awaitExit(Duration.ofSeconds(60));
      assertThat(p.log())
          .as("io.boxline.server at INFO through log.levels")
          .contains("level=INFO logger=io.boxline.server msg=\"Boxline server listening on")
          .contains("level=INFO logger=io.boxline.server msg=\"Boxline server stopped in")
          .as("no access line")
          .doesNotContain("quiet-req")
          .doesNotContain("logger=io.boxline.server.access")
          .as("the rest at WARN: no INFO line of Jetty, the pool or the engine")
          .doesNotContain("level=INFO logger=org.eclipse.jetty")
          .doesNotContain("level=INFO logger=com.zaxxer")
          .doesNotContain("level=INFO logger=io.boxline.internal");
    } finally {
      Databases.dropPostgresSchema(quietSchema);
    }
  }
}
