package io.boxline.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.GroupState;
import io.boxline.HandlerDecision;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code boxline} command over a Boxline server: the real server runs in a child JVM on
 * PostgreSQL (it sequences what is published), the real launcher runs with {@code BOXLINE_SERVER}
 * and {@code BOXLINE_TOKEN}, and the test JVM plays an application on the same schema where a test
 * needs a Java consumer (members, retries, dead letters).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliServerTest {
  private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ADMIN = "cli-admin-token-of-every-namespace";
  private static final String ELSEWHERE = "cli-admin-token-of-elsewhere-only";

  private String schema;
  private Path home;
  private Process server;
  private final List<String> serverOutput = new CopyOnWriteArrayList<>();
  private String serverUrl;
  private HikariDataSource pool;
  private Boxline app;
  private Map<String, String> env;
  private Cli cli;

  @BeforeAll
  void start() throws Exception {
    schema = "bxclisrv_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    home = Files.createTempDirectory("boxline-cli-server-home");
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "")) {
      c.isValid(1);
    } catch (SQLException e) {
      fail(
          "PostgreSQL must run on 127.0.0.1:5432 with trust auth for these tests; start it with"
              + " 'pg_ctlcluster --skip-systemctl-redirect 15 main start' ("
              + e.getMessage()
              + ")");
    }
    Path config = home.resolve("server.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "http: {port: 0, shutdownTimeout: 5s}",
            "database: {url: '" + PG_URL + "', user: postgres, schema: " + schema + "}",
            "tokens:",
            "  - {name: cli-admin, secret: " + ADMIN + ", role: admin, namespaces: ['*']}",
            "  - {name: elsewhere-admin, secret: "
                + ELSEWHERE
                + ", role: admin, namespaces: [elsewhere]}",
            ""));
    serverUrl = startServer(config);

    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(PG_URL);
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(6);
    pool = new HikariDataSource(hc);
    // The server sequences; this application only runs consumers.
    app =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
            .migrate(false)
            .sequencer(false)
            .instanceId("cli-server-test-app")
            .build()
            .start();

    env = new HashMap<>();
    env.put("BOXLINE_SERVER", serverUrl);
    env.put("BOXLINE_TOKEN", ADMIN);
    env.put("BOXLINE_URL", ""); // blank counts as unset, whatever the test JVM's environment has
    env.put("BOXLINE_CONFIG_DIR", home.toString());
    cli = new Cli(env);
  }

  /** Starts {@code BoxlineServer} with the config; its base URL once it printed "ready". */
  private String startServer(Path config) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-cp");
    cmd.add(Files.readString(Path.of(System.getProperty("boxline.server.classpath.file"))).strip());
    cmd.add("io.boxline.server.BoxlineServer");
    cmd.add("--config");
    cmd.add(config.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("BOXLINE_ADMIN_TOKEN");
    pb.environment().remove("BOXLINE_CONFIG");
    server = pb.start();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  serverOutput.add(line);
                  if (line.startsWith("ready: ")) {
                    ready.complete(line.substring(7).strip());
                  }
                }
              } catch (IOException e) {
                // the server ended
              }
              ready.completeExceptionally(
                  new IllegalStateException(
                      "the server exited before it was ready:\n"
                          + String.join("\n", serverOutput)));
            },
            "server-output");
    reader.setDaemon(true);
    reader.start();
    try {
      return ready.get(120, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError(
          "the server was not ready within 120 s:\n" + String.join("\n", serverOutput));
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (app != null) {
      app.close();
    }
    if (pool != null) {
      pool.close();
    }
    if (server != null) {
      server.destroy(); // SIGTERM: the server drains and stops
      if (!server.waitFor(60, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor(30, TimeUnit.SECONDS);
      }
    }
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "");
        Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  private static void await(Duration max, String what, BooleanSupplier done) {
    long end = System.nanoTime() + max.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("timed out after " + max + " waiting for " + what);
      }
      try {
        Thread.sleep(20); // polling a condition with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted");
      }
    }
  }

  private Cli with(String name, String value) {
    Map<String, String> e = new HashMap<>(env);
    e.put(name, value);
    return new Cli(e);
  }

  private static Cli.Result ok(Cli c, String... args) {
    Cli.Result r = c.run(args);
    assertThat(r.exit()).as("exit of boxline %s; err: %s", List.of(args), r.err()).isZero();
    return r;
  }

  private Cli.Result ok(String... args) {
    return ok(cli, args);
  }

  private JsonNode json(String... args) throws IOException {
    return JSON.readTree(ok(args).out());
  }

  /**
   * A failed run: its exit code, and one line on standard error that starts as every error does.
   */
  private static Cli.Result fails(Cli c, int exit, String... args) {
    Cli.Result r = c.run(args);
    assertThat(r.exit())
        .as("exit of boxline %s; out: %s err: %s", List.of(args), r.out(), r.err())
        .isEqualTo(exit);
    assertThat(r.err().lines()).as("one line: %s", r.err()).hasSize(1);
    assertThat(r.err()).startsWith("boxline: error: ");
    return r;
  }

  private long sequenced(String topic) {
    return app.admin().topicState(TopicName.parse(topic)).heads().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  private List<Event> stored(String topic, int partitions) {
    List<Event> all = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      all.addAll(app.admin().events(EventQuery.of(TopicName.parse(topic), p).limit(1000)));
    }
    return all;
  }

  /**
   * A payload given as text goes through the server as its bytes: JSON is stored as {@code
   * application/json}, byte for byte (spacing and {@code 12.50} included), other text as UTF-8
   * text, and {@code tail} shows the stored bytes.
   */
  @Test
  @Timeout(300)
  void aJsonPayloadIsStoredAsJsonByteForByteOverTheServer() throws Exception {
    String topic = "acme/srvct/prices";
    ok("create", "namespace", "acme/srvct");
    ok("create", "topic", topic, "--partitions", "1");
    PublishedContentTypes.check(cli, topic, () -> stored(topic, 1));
    JsonNode tailed =
        JSON.readTree(ok("tail", topic, "--from", "earliest", "--key", "a", "-o", "json").out());
    assertThat(tailed.get("payload").asText()).isEqualTo(PublishedContentTypes.PRICED);
    assertThat(tailed.get("contentType").asText()).isEqualTo("application/json");
  }

  @Test
  @Timeout(600)
  void inspectsPublishesRedrivesAndTailsOverTheServer() throws Exception {
    String topic = "acme/srv/orders";
    ok("create", "namespace", "acme/srv");
    assertThat(ok("create", "topic", topic, "--partitions", "4").out())
        .contains("topic " + topic + ", 4 partitions, SEQUENCER");
    assertThat(
            ok("create", "subscription", "billing", "--topic", topic, "--start", "earliest").out())
        .contains("subscription billing on [" + topic + "]");
    assertThat(app.admin().subscription("billing")).as("created through the server").isPresent();

    // Publish: one event from flags, then JSON lines with a duplicate, one request per batch.
    Cli.Result one =
        ok("publish", topic, "--key", "k1", "--type", "Placed", "--payload", "{\"n\": 1}");
    assertThat(one.out().strip()).matches("acme/srv/orders/[0-3]  [0-9a-f-]{36}");
    Cli.Result many =
        cli.input(
            "{\"key\":\"k2\",\"type\":\"Placed\",\"payload\":{\"n\":2},\"idempotencyKey\":\"i-2\"}\n"
                + "{\"key\":\"k2\",\"type\":\"Placed\",\"payload\":{\"n\":2},\"idempotencyKey\":\"i-2\"}\n"
                + "{\"key\":\"k3\",\"type\":\"Shipped\",\"payload\":\"plain text\","
                + "\"headers\":{\"tenant\":\"acme\"}}\n",
            "publish",
            topic,
            "--stdin",
            "--batch",
            "2");
    assertThat(many.exit()).as(many.err()).isZero();
    assertThat(many.outLines()).hasSize(4);
    assertThat(many.outLines().get(1)).endsWith("duplicate");
    assertThat(many.out()).contains("published 3 event(s), 1 duplicate(s)");
    await(Duration.ofSeconds(60), "3 events sequenced by the server", () -> sequenced(topic) == 3);
    Event k1 =
        stored(topic, 4).stream().filter(e -> "k1".equals(e.key())).findFirst().orElseThrow();
    assertThat(new String(k1.payload(), StandardCharsets.UTF_8))
        .as("the bytes as given, spacing included")
        .isEqualTo("{\"n\": 1}");
    assertThat(k1.contentType())
        .as("a JSON payload is stored as JSON")
        .isEqualTo("application/json");
    assertThat(k1.id().toString()).isEqualTo(one.out().strip().split("  ")[1]);

    // The catalog.
    JsonNode orders = null;
    for (JsonNode t : json("topics", "-o", "json")) {
      if (t.get("topic").asText().equals(topic)) {
        orders = t;
      }
    }
    assertThat(orders).as("the topic is listed").isNotNull();
    assertThat(orders.get("partitions").asInt()).isEqualTo(4);
    assertThat(orders.get("sequencing").asText()).isEqualTo("SEQUENCER");
    assertThat(orders.get("retention").asText()).isEqualTo("forever");
    long events = 0;
    for (JsonNode h : orders.get("lastSequences")) {
      events += h.asLong();
    }
    assertThat(events).isEqualTo(3);
    Cli.Result topics = ok("topics");
    assertThat(topics.outLines().get(0)).startsWith("TOPIC").contains("PARTITIONS", "RETENTION");
    assertThat(topics.out()).contains(topic);
    assertThat(ok("subscriptions").out()).contains("billing", topic, "earliest");

    // Lag, per partition and for every subscription.
    Cli.Result lag = ok("lag", "billing");
    assertThat(lag.outLines()).hasSize(1 + 4 + 1);
    assertThat(lag.outLines().get(0)).contains("HEAD", "CURSOR", "LAG", "AGE", "OWNER", "EPOCH");
    assertThat(lag.out()).contains("total lag 3 events, 0 member(s)");
    long lagSum = 0;
    for (JsonNode p : json("lag", "billing", "-o", "json").get("partitions")) {
      lagSum += p.get("lag").asLong();
      assertThat(p.get("cursor").asLong()).isZero();
    }
    assertThat(lagSum).isEqualTo(3);
    assertThat(ok("lag").out()).containsPattern("billing\\s+3\\s");

    // Status: what the server offers; blocked tasks need the database.
    JsonNode status = json("status", "-o", "json");
    assertThat(status.get("topics").asInt()).isEqualTo(app.admin().topics().size());
    assertThat(status.get("blockedTasks").isNull()).isTrue();
    assertThat(status.get("outbox").get("events").asLong()).isZero();
    JsonNode billing = null;
    for (JsonNode s : status.get("subscriptions")) {
      if (s.get("name").asText().equals("billing")) {
        billing = s;
      }
    }
    assertThat(billing).as("billing is in the status").isNotNull();
    assertThat(billing.get("backlog").asLong()).isEqualTo(3);
    assertThat(ok("status").outLines().get(0))
        .contains("subscriptions; outbox: 0 events waiting for the sequencer")
        .endsWith("blocked tasks: not shown (needs a database connection)");

    // Members: a Java consumer stuck in its handler, with its host, process and call in flight.
    CountDownLatch release = new CountDownLatch(1);
    Consumer stuck =
        app.consumer("billing")
            .id("app-worker")
            .handler(
                e -> {
                  try {
                    release.await();
                  } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                  }
                })
            .start();
    try {
      await(
          Duration.ofSeconds(60),
          "the member reports a handler call in progress",
          () -> {
            List<GroupState.Member> m = app.admin().group("billing").members();
            return m.size() == 1 && !m.get(0).inFlight().isEmpty();
          });
      Cli.Result members = ok("members", "billing");
      assertThat(members.outLines().get(0)).contains("HOST", "PROCESS", "IN FLIGHT");
      assertThat(members.out())
          .contains("app-worker", ProcessHandle.current().pid() + "@", "call(s), oldest " + topic);
      JsonNode member = json("members", "billing", "-o", "json").get("members").get(0);
      assertThat(member.get("id").asText()).isEqualTo("app-worker");
      assertThat(member.get("host").asText()).isNotBlank();
      assertThat(member.get("process").asText()).startsWith(ProcessHandle.current().pid() + "@");
      assertThat(member.get("inFlight").get(0).get("topic").asText()).isEqualTo(topic);
      // 409 from the server: refused, exit 4.
      Cli.Result busy = fails(cli, 4, "rewind", "billing", "--to", "earliest", "--yes");
      assertThat(busy.err()).contains("app-worker");
    } finally {
      release.countDown();
      stuck.close();
    }
    assertThat(ok("rewind", "billing", "--to", "latest", "--yes").out())
        .contains("rewound billing to latest: 0 event(s) to handle");

    // Retries and dead letters of a subscription whose handler fails.
    ok("create", "subscription", "failing", "--topic", topic, "--start", "earliest");
    Consumer failing =
        app.consumer("failing")
            .id("failing-worker")
            .handler(
                e -> {
                  if ("k1".equals(e.key())) {
                    throw HandlerDecision.deadLetter("poison k1");
                  }
                  if ("k2".equals(e.key())) {
                    throw HandlerDecision.retryIn(Duration.ofHours(1), "not yet");
                  }
                })
            .start();
    try {
      await(
          Duration.ofSeconds(60),
          "one retry and one dead letter",
          () -> {
            var f = app.admin().failures("failing");
            return f.retrying() == 1 && f.deadLetters() == 1;
          });
    } finally {
      failing.close();
    }
    Cli.Result retries = ok("retries", "failing");
    assertThat(retries.outLines()).hasSize(2);
    assertThat(retries.outLines().get(1)).contains(topic + "/", "k2", "Placed", "not yet");
    JsonNode retry = json("retries", "failing", "-o", "json").get(0);
    assertThat(retry.get("event").get("key").asText()).isEqualTo("k2");
    assertThat(retry.get("event").get("payload").asText()).isEqualTo("{\"n\":2}");
    assertThat(retry.get("behindItsKey").asBoolean()).isFalse();
    assertThat(retry.get("attempts").asInt()).isEqualTo(1);

    Cli.Result dead = ok("dead-letters", "list", "failing");
    assertThat(dead.outLines()).hasSize(2);
    assertThat(dead.outLines().get(1)).contains("k1", "Placed", "poison k1");
    JsonNode letter = json("dead-letters", "list", "failing", "--type", "Placed", "-o", "json");
    assertThat(letter).hasSize(1);
    // The stored bytes, as every read over the server asks for them (payload=base64).
    assertThat(letter.get(0).get("event").get("payload").asText()).isEqualTo("{\"n\": 1}");
    assertThat(json("dead-letters", "list", "failing", "--key", "k3", "-o", "json")).isEmpty();
    Cli.Result unconfirmed = fails(cli, 4, "dead-letters", "redrive", "failing");
    assertThat(unconfirmed.err()).contains("1 dead letter(s) of failing match", "pass --yes");
    assertThat(app.admin().failures("failing").deadLetters()).isEqualTo(1);
    assertThat(ok("dead-letters", "redrive", "failing", "--key", "k1", "--yes").out())
        .contains("Redrive: 1 dead letter(s) of failing");
    assertThat(app.admin().failures("failing").deadLetters()).isZero();

    // Changes: retention and the group policy.
    assertThat(ok("retention", topic, "--max-age", "P7D").out())
        .contains("max age 7d, keeps unconsumed");
    assertThat(app.admin().topicState(TopicName.parse(topic)).retention().maxAge())
        .isEqualTo(Duration.ofDays(7));
    assertThat(ok("group-policy", "billing", "--slack", "0.3").out()).contains("slack", "0.3");
    assertThat(app.admin().groupPolicy("billing").slack()).isEqualTo(0.3);
    ok("group-policy", "billing", "--clear");
    assertThat(app.admin().groupPolicy("billing").slack()).isNotEqualTo(0.3);

    // Tail through the admin events route: the log from earliest, then following new events.
    Cli.Result earliest = ok("tail", topic, "--from", "earliest");
    assertThat(earliest.outLines()).hasSize(3);
    assertThat(earliest.out())
        .contains("key=k1  type=Placed  {\"n\": 1}", "key=k2", "key=k3  type=Shipped  plain text");
    JsonNode shipped = null;
    for (String l :
        ok("tail", topic, "--from", "earliest", "--type", "Shipped", "-o", "json").outLines()) {
      shipped = JSON.readTree(l);
    }
    assertThat(shipped.get("payload").asText()).isEqualTo("plain text");
    assertThat(shipped.get("headers").get("tenant").asText()).isEqualTo("acme");
    Cli.Running tail = cli.start("tail", topic, "-f", "--key", "later", "-o", "json");
    tail.awaitErr(Duration.ofSeconds(60), "the tail following", e -> e.contains("following"));
    ok("publish", topic, "--key", "later", "--type", "Late", "--payload", "after");
    tail.awaitOut(Duration.ofSeconds(60), "the new event", o -> o.contains("\"after\""));
    tail.signal("TERM");
    tail.await(Duration.ofSeconds(30));
    assertThat(tail.out().strip().lines()).hasSize(1);
    assertThat(JSON.readTree(tail.out().strip()).get("type").asText()).isEqualTo("Late");

    // What only a database connection offers.
    Cli.Result migrate = fails(cli, 2, "migrate");
    assertThat(migrate.err()).contains("'boxline migrate' needs a database connection");

    assertThat(ok("delete", "subscription", "failing", "--yes").out())
        .contains("deleted subscription failing");
    assertThat(app.admin().subscription("failing")).isEmpty();
  }

  @Test
  @Timeout(300)
  void consumeExecIsAGroupMemberThroughTheServersFetchAndSettle() throws Exception {
    String topic = "acme/exec/jobs";
    ok("create", "topic", topic, "--partitions", "3");
    ok("create", "subscription", "workers", "--topic", topic, "--start", "earliest");
    ExecScenario exec = ExecScenario.create();
    Cli.Result pub = cli.input(exec.events(), "publish", topic, "--stdin");
    assertThat(pub.exit()).as(pub.err()).isZero();

    Cli.Running consumer = cli.start(exec.consume("workers"));
    await(
        Duration.ofSeconds(90),
        "30 events handled, the poison and the never-ending one dead-lettered",
        () -> exec.handled().size() == 30 && app.admin().failures("workers").deadLetters() == 2);
    exec.assertEachKeyInOrder();
    List<GroupState.Member> members = app.admin().group("workers").members();
    // The group knows an HTTP member by its token's name and its id (docs/guide/server.md).
    assertThat(members).extracting(GroupState.Member::id).containsExactly("cli-admin:exec-member");

    Cli.Result dead = ok("dead-letters", "list", "workers");
    assertThat(dead.out())
        .contains("poison", "cannot parse")
        .contains("never", "3", "after 3 attempt(s): still failing");
    assertThat(json("dead-letters", "reasons", "workers", "-o", "json"))
        .hasSize(2)
        .allSatisfy(r -> assertThat(r.get("count").asLong()).isEqualTo(1));
    exec.heal();
    assertThat(ok("dead-letters", "redrive", "workers", "--key", "poison", "--yes").out())
        .contains("Redrive: 1 dead letter(s) of workers");
    await(Duration.ofSeconds(60), "the redriven event handled", () -> exec.handled().size() == 31);
    assertThat(exec.handled().get(30)).isEqualTo("poison 1");

    consumer.signal("TERM");
    Cli.Result end = consumer.await(Duration.ofSeconds(60));
    assertThat(end.err())
        .contains("consuming workers as exec-member through " + serverUrl)
        .contains("stopped: 31 done");
    assertThat(app.admin().group("workers").members()).as("it left the group").isEmpty();

    Cli.Result missing = fails(cli, 3, "consume", "nobody", "--exec", "cat");
    assertThat(missing.err()).contains("subscription 'nobody' does not exist");
  }

  private static List<String> lines(Path p) {
    try {
      return Files.exists(p) ? Files.readAllLines(p) : List.of();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  @Timeout(300)
  void tokenProblemsAndAServerThatIsDownAreOneLineErrorsWithTheirExitCodes() throws Exception {
    String topic = "acme/scope/in";
    ok("create", "topic", topic, "--partitions", "1"); // the server creates its namespace
    ok("create", "subscription", "scoped", "--topic", topic);

    Cli.Result wrong = fails(with("BOXLINE_TOKEN", "not-a-token-of-this-server"), 5, "topics");
    assertThat(wrong.err())
        .contains("refused the token (401 unauthorized)", "BOXLINE_TOKEN")
        .doesNotContain("not-a-token-of-this-server");
    assertThat(wrong.out()).isEmpty();
    Cli.Result none = fails(with("BOXLINE_TOKEN", ""), 5, "status");
    assertThat(none.err()).contains("needs a token (401)", "BOXLINE_TOKEN", "--token");

    // A token of another namespace: refused (403), exit 4; lists show only its namespaces.
    Cli elsewhere = with("BOXLINE_TOKEN", ELSEWHERE);
    Cli.Result lag = fails(elsewhere, 4, "lag", "scoped");
    assertThat(lag.err())
        .contains("the token may not do this (403 forbidden)", "elsewhere-admin", "[elsewhere]")
        .doesNotContain(ELSEWHERE);
    Cli.Result publish = fails(elsewhere, 4, "publish", topic, "--type", "t", "--payload", "x");
    assertThat(publish.err()).contains("403", "may only touch namespaces [elsewhere]");
    assertThat(ok(elsewhere, "topics").out()).doesNotContain(topic);
    assertThat(ok(elsewhere, "status").outLines().get(0))
        .contains("outbox: not shown (needs a token for every namespace)");

    // Other answers of the server: 404 is "not found" (3), 400 "bad usage" (2).
    Cli.Result missing = fails(cli, 3, "lag", "nobody");
    assertThat(missing.err()).contains("subscription 'nobody' does not exist");
    Cli.Result conflict = fails(cli, 2, "create", "topic", topic, "--partitions", "2");
    assertThat(conflict.err()).contains(topic);

    // A server that is down: exit 5, naming its URL.
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String down = "http://127.0.0.1:" + port;
    Cli.Result refused = fails(with("BOXLINE_SERVER", down), 5, "topics");
    assertThat(refused.err()).contains("cannot connect to " + down, "connection refused");
    Cli.Result notHttp = fails(with("BOXLINE_SERVER", "127.0.0.1:" + port), 5, "topics");
    assertThat(notHttp.err()).contains("is not a server URL; it starts with http:// or https://");

    // The token typed at the --token prompt (standard input without a terminal), never printed.
    Cli.Result typed = with("BOXLINE_TOKEN", "").input(ADMIN + "\n", "topics", "--token");
    assertThat(typed.exit()).as(typed.err()).isZero();
    assertThat(typed.out()).contains(topic).doesNotContain(ADMIN);
    assertThat(typed.err()).doesNotContain(ADMIN);

    // Profiles: server= works; a token in a profile is refused like a password.
    Files.writeString(home.resolve("remote.properties"), "server=" + serverUrl + "\n");
    Cli noServerEnv = with("BOXLINE_SERVER", "");
    assertThat(ok(noServerEnv, "topics", "--profile", "remote").out()).contains(topic);
    Files.writeString(
        home.resolve("leaky.properties"), "server=" + serverUrl + "\ntoken=" + ADMIN + "\n");
    Cli.Result leaky = fails(noServerEnv, 2, "topics", "--profile", "leaky");
    assertThat(leaky.err()).contains("holds a token", "BOXLINE_TOKEN").doesNotContain(ADMIN);
    Cli.Result both = fails(cli, 2, "topics", "--url", PG_URL, "--server", serverUrl);
    assertThat(both.err()).contains("both --url and --server");
  }
}
