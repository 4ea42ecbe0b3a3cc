package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * A server process with its Kafka listener on, three tokens (an admin of everything and the admins
 * of tenants {@code a} and {@code b}) and a few topics, on a schema of its own; the HTTP admin API
 * to look at what the Kafka clients did.
 */
final class KafkaServer implements AutoCloseable {
  static final String ADMIN = "admin";
  static final String TENANT_A = "tenant-a";
  static final String TENANT_B = "tenant-b";

  /** A token of tenant a that may consume only (it may not create a subscription). */
  static final String READER_A = "reader-a";

  final String schema;
  final String adminSecret;
  final String aSecret;
  final String bSecret;
  final String readerSecret;
  final ServerProcess process;
  final String url;
  final int port;

  /** Whether this instance made the schema, and drops it at the end. */
  private final boolean owner;

  private final String kafka;
  private final String topics;
  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  KafkaServer(String topics) throws Exception {
    this(topics, "{port: 0}");
  }

  /** With {@code kafka} as the config's kafka section. */
  KafkaServer(String topics, String kafka) throws Exception {
    this(
        topics,
        kafka,
        Databases.uniqueName("kafka_"),
        new String[] {
          "admin-" + UUID.randomUUID(),
          "tenant-a-" + UUID.randomUUID(),
          "tenant-b-" + UUID.randomUUID(),
          "reader-a-" + UUID.randomUUID()
        },
        true);
  }

  /** Another server instance on this one's database, with the same config. */
  KafkaServer another() throws Exception {
    return new KafkaServer(
        topics, kafka, schema, new String[] {adminSecret, aSecret, bSecret, readerSecret}, false);
  }

  private KafkaServer(String topics, String kafka, String schema, String[] secrets, boolean owner)
      throws Exception {
    this.topics = topics;
    this.kafka = kafka;
    this.schema = schema;
    this.adminSecret = secrets[0];
    this.aSecret = secrets[1];
    this.bSecret = secrets[2];
    this.readerSecret = secrets[3];
    this.owner = owner;
    process =
        ServerProcess.startWithConfig(
            "http: {port: 0, shutdownTimeout: 5s}\n"
                + Databases.postgresYaml(schema)
                + "kafka: "
                + kafka
                + "\n"
                + "tokens:\n"
                + "  - {name: "
                + ADMIN
                + ", secret: "
                + adminSecret
                + ", role: admin, namespaces: ['*']}\n"
                + "  - {name: "
                + TENANT_A
                + ", secret: "
                + aSecret
                + ", role: admin, namespaces: [a]}\n"
                + "  - {name: "
                + TENANT_B
                + ", secret: "
                + bSecret
                + ", role: admin, namespaces: [b]}\n"
                + "  - {name: "
                + READER_A
                + ", secret: "
                + readerSecret
                + ", role: consumer, namespaces: [a]}\n"
                + "topics:\n"
                + topics);
    url = process.awaitReady(Duration.ofSeconds(60));
    port = process.kafkaPort();
    assertThat(port).as("the server printed its Kafka port").isPositive();
  }

  String bootstrap() {
    return "127.0.0.1:" + port;
  }

  String secret(String user) {
    return switch (user) {
      case ADMIN -> adminSecret;
      case TENANT_A -> aSecret;
      case READER_A -> readerSecret;
      default -> bSecret;
    };
  }

  /** Client properties for SASL/PLAIN as this token. */
  Properties client(String user) {
    return client(user, secret(user));
  }

  Properties client(String user, String password) {
    return client(bootstrap(), user, password);
  }

  /** Client properties for SASL/PLAIN against any Kafka listener (also used by child JVMs). */
  static Properties client(String bootstrap, String user, String password) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "PLAIN");
    p.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
            + user
            + "\" password=\""
            + password
            + "\";");
    return p;
  }

  /** GET of the admin API as the admin, parsed. */
  JsonNode get(String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + path))
                .header("Authorization", "Bearer " + adminSecret)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("GET " + path + ": " + r.body()).isEqualTo(200);
    return json.readTree(r.body());
  }

  static String enc(String name) {
    return URLEncoder.encode(name, StandardCharsets.UTF_8);
  }

  /** Every event of a partition, in order, as the admin API shows it. */
  List<JsonNode> events(String topic, int partition) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    long after = 0;
    while (true) {
      JsonNode page =
          get(
              "/v1/topics/"
                  + enc(topic)
                  + "/partitions/"
                  + partition
                  + "/events?after="
                  + after
                  + "&limit=1000");
      page.get("events").forEach(out::add);
      if (page.get("events").isEmpty()) {
        return out;
      }
      after = out.get(out.size() - 1).get("sequence").asLong();
    }
  }

  /** Whether the subscription exists, as the admin API says. */
  boolean subscriptionExists(String name) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/v1/subscriptions/" + enc(name)))
                .header("Authorization", "Bearer " + adminSecret)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isIn(200, 404);
    return r.statusCode() == 200;
  }

  /** The heads of a topic's partitions. */
  List<Long> heads(String topic) throws Exception {
    List<Long> out = new ArrayList<>();
    get("/v1/topics/" + enc(topic)).get("heads").forEach(h -> out.add(h.asLong()));
    return out;
  }

  /** Waits (bounded) for a condition. */
  static void await(String what, Duration timeout, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  @Override
  public void close() throws Exception {
    // The server's warnings and errors, for the report of a test that failed because of one.
    process.output.stream()
        .filter(
            l ->
                l.contains("level=WARN")
                    || l.contains("level=ERROR")
                    || l.startsWith("\tat ")
                    || l.contains("Exception"))
        .forEach(l -> System.out.println("server: " + l));
    process.process.destroy();
    process.awaitExit(Duration.ofSeconds(30));
    if (owner) {
      Databases.dropPostgresSchema(schema);
    }
  }
}
