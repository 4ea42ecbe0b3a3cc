package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A subscription's {@code handler}: the server runs a Python program as two members of the group,
 * on a server in its own JVM. The program crashes once, hangs once and answers outside the protocol
 * once; every event is still handled in key order, the failures retry and dead-letter as the
 * subscription's retry policy says, the restarts show in the API and {@code /metrics}, and a
 * SIGTERM ends the server and every process it started.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HandlerProgramTest {
  static final String TOKEN = "handler-test-admin-token";
  static final ObjectMapper JSON = new ObjectMapper();
  static final int KEYS = 6;
  static final int PER_KEY = 8;

  String schema;
  ServerProcess server;
  String base;
  Path dir;
  Path handled;
  Path pids;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_exec_");
    dir = Files.createTempDirectory("boxline-handler");
    handled = dir.resolve("handled.log");
    pids = dir.resolve("pids");
    Files.writeString(
        dir.resolve("handle.py"),
        String.join(
            "\n",
            "import sys, json, os, time",
            "with open(os.environ['PIDS'], 'a') as f:",
            "    f.write('%d\\n' % os.getpid())",
            "print('handler up as %d' % os.getpid(), file=sys.stderr, flush=True)",
            "def first(e):", // true the first time this event comes, across processes
            "    marker = os.path.join('markers', e['id'])",
            "    if os.path.exists(marker):",
            "        return False",
            "    open(marker, 'w').close()",
            "    return True",
            "for line in sys.stdin:",
            "    e = json.loads(line)",
            "    do = json.loads(e['payload'])['do']",
            "    if do == 'crash' and first(e):",
            "        sys.exit(3)",
            "    if do == 'hang' and first(e):",
            "        time.sleep(3600)",
            "    if do == 'wrong' and first(e):",
            "        print('okay', flush=True)",
            "        continue",
            "    if do == 'dead':",
            "        print('dead refused by the program', flush=True)",
            "        continue",
            "    if do == 'retry':",
            "        print('retry still failing', flush=True)",
            "        continue",
            "    with open(os.environ['HANDLED'], 'a') as f:",
            "        f.write('%s %s\\n' % (e['key'], json.loads(e['payload'])['n']))",
            "    print('ok', flush=True)",
            ""));
    Files.createDirectories(dir.resolve("markers"));
    String yaml =
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + "database: {url: '"
            + Databases.PG_URL
            + "', user: postgres, schema: "
            + schema
            + "}\n"
            + "tokens:\n  - {name: ops, secret: "
            + TOKEN
            + ", role: admin, namespaces: ['*']}\n"
            + "topics:\n  - {name: app/jobs, partitions: 4}\n"
            + "subscriptions:\n"
            + "  - name: jobs-python\n"
            + "    topics: [app/jobs]\n"
            + "    retry: {maxAttempts: 3, initialBackoff: 100ms, maxBackoff: 200ms, jitter: 0}\n"
            + "    handler:\n"
            + "      exec: python3 handle.py\n"
            + "      directory: '"
            + dir
            + "'\n"
            + "      environment: {HANDLED: '"
            + handled
            + "', PIDS: '"
            + pids
            + "'}\n"
            + "      processes: 2\n"
            + "      replyTimeout: 2s\n"
            + "      restartBackoff: 100ms\n"
            + "      maxRestartBackoff: 400ms\n"
            + "      stopTimeout: 1s\n";
    server = ServerProcess.startWithConfig(yaml);
    base = server.awaitReady(Duration.ofSeconds(90));
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(java.net.URI.create(base + path))
        .timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + TOKEN);
  }

  JsonNode get(String path) throws Exception {
    HttpResponse<byte[]> r = ServerOperationsTest.send(request(path).GET().build());
    assertThat(r.statusCode()).as(path).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  void publish(String key, String payload) throws Exception {
    HttpResponse<byte[]> r =
        ServerOperationsTest.send(
            request("/v1/topics/" + enc("app/jobs") + "/events")
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"key\":\"" + key + "\",\"type\":\"job\",\"payload\":" + payload + "}"))
                .build());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  @Test
  void theServersProgramHandlesEveryEventThroughCrashesHangsAndWrongAnswersThenStopsWithIt()
      throws Exception {
    for (int n = 1; n <= PER_KEY; n++) {
      for (int k = 0; k < KEYS; k++) {
        String what =
            n == 3 && k == 0
                ? "crash"
                : n == 4 && k == 1 ? "hang" : n == 5 && k == 2 ? "wrong" : "ok";
        publish("k" + k, "{\"do\":\"" + what + "\",\"n\":" + n + "}");
      }
    }
    publish("bad", "{\"do\":\"dead\",\"n\":1}");
    publish("never", "{\"do\":\"retry\",\"n\":1}");

    await(
        "every job handled and both failures dead-lettered",
        () -> {
          try {
            return firstOccurrences().values().stream().mapToInt(List::size).sum() == KEYS * PER_KEY
                && get("/v1/subscriptions/jobs-python/failures").get("deadLetters").asLong() == 2;
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    // Per key, in order: the crash, the hang and the wrong answer held their keys back.
    for (Map.Entry<String, List<Integer>> e : firstOccurrences().entrySet()) {
      assertThat(e.getValue()).as("key " + e.getKey()).isSorted().hasSize(PER_KEY);
    }
    JsonNode deadLetters = get("/v1/subscriptions/jobs-python/dead-letters");
    assertThat(deadLetters.toString()).contains("refused by the program").contains("still failing");

    JsonNode handler = get("/v1/subscriptions/jobs-python").get("handler");
    assertThat(handler.get("command").asText()).isEqualTo("python3 handle.py");
    assertThat(handler.get("processes")).hasSize(2);
    long crashes = 0;
    long invalid = 0;
    long starts = 0;
    long partitions = 0;
    for (JsonNode p : handler.get("processes")) {
      crashes += p.get("crashes").asLong();
      invalid += p.get("invalid").asLong();
      starts += p.get("starts").asLong();
      partitions += p.get("partitions").asLong();
    }
    assertThat(crashes).as("the crash, the hang and the wrong answer").isEqualTo(3);
    assertThat(invalid).isEqualTo(1);
    assertThat(starts).as("two processes, each crash restarted").isEqualTo(5);
    assertThat(partitions).isEqualTo(4);
    assertThat(handler.toString()).contains("the program answered 'okay'");
    assertThat(server.log())
        .contains("no answer within the reply timeout of PT2S")
        .contains("exited with status 3 without answering");

    String metrics =
        new String(
            ServerOperationsTest.send(request("/metrics").GET().build()).body(),
            StandardCharsets.UTF_8);
    assertThat(metric(metrics, "boxline_handler_crashes_total{subscription=\"jobs-python\"}"))
        .isEqualTo(3);
    assertThat(metric(metrics, "boxline_handler_starts_total{subscription=\"jobs-python\"}"))
        .isEqualTo(5);
    assertThat(
            metric(
                metrics,
                "boxline_handler_answers_total{answer=\"dead\",subscription=\"jobs-python\"}"))
        .isEqualTo(1);
    assertThat(
            metric(
                metrics,
                "boxline_handler_answers_total{answer=\"ok\",subscription=\"jobs-python\"}"))
        .isGreaterThanOrEqualTo(KEYS * PER_KEY);
    assertThat(server.log()).contains("handler jobs-python#").contains(": handler up as ");

    // SIGTERM: the server stops within its bounds, and no process it started outlives it.
    List<Long> started = new ArrayList<>();
    for (String line : Files.readAllLines(pids)) {
      started.add(Long.parseLong(line.strip()));
    }
    assertThat(started).hasSize(5);
    long t0 = System.nanoTime();
    server.terminate();
    server.awaitExit(Duration.ofSeconds(30));
    assertThat((System.nanoTime() - t0) / 1_000_000_000.0).isLessThan(20);
    for (long pid : started) {
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
          .as(
              () ->
                  "process "
                      + pid
                      + " "
                      + ProcessHandle.of(pid)
                          .map(h -> h.info() + " parent " + h.parent())
                          .orElse("")
                      + "; the server's output:\n"
                      + server.log())
          .isFalse();
    }
  }

  /** Each key's payload numbers in the order first handled (a repeat after a crash counts once). */
  Map<String, List<Integer>> firstOccurrences() throws java.io.IOException {
    Map<String, List<Integer>> out = new HashMap<>();
    if (!Files.exists(handled)) {
      return out;
    }
    for (String line : Files.readAllLines(handled)) {
      String[] kv = line.split(" ");
      List<Integer> seen = out.computeIfAbsent(kv[0], k -> new ArrayList<>());
      int n = Integer.parseInt(kv[1]);
      if (!seen.contains(n)) {
        seen.add(n);
      }
    }
    return out;
  }

  /** Waits at most 60 s for {@code condition}, checking every 50 ms. */
  static void await(String what, java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  static double metric(String text, String series) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
    assertThat(m.find()).as(series + " in /metrics").isTrue();
    return Double.parseDouble(m.group(1));
  }
}
