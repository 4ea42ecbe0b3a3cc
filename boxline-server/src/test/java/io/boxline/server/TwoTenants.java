package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The two tenants of {@link TenantAttackTest}, sharing one server on PostgreSQL: namespace {@code
 * ta} (tenant A, the victim, with topics, subscriptions, group members holding fetched events, a
 * dead letter and a parked retry) and namespace {@code tb} (tenant B, the attacker), each with its
 * tokens, and every name the server gave their things.
 */
final class TwoTenants implements AutoCloseable {
  /** Tenant B's callers, used in turn. */
  enum Who {
    ADMIN,
    OPERATOR,
    VIEWER,
    PRODUCER,
    CONSUMER,
    NONE,
    BAD
  }

  final String rA;
  final String rB;

  String schema;
  ServerProcess server;
  String base;
  Api star;
  RawHttp raw;

  final String starSecret = "star-" + UUID.randomUUID();
  final Map<String, String> aSecrets = new LinkedHashMap<>(); // token name -> secret
  final Map<Who, String> bSecrets = new LinkedHashMap<>();
  final Map<Who, String> bTokenNames = new LinkedHashMap<>();

  // Tenant A: everything B must never see.
  final List<String> aTopics = new ArrayList<>();
  final Map<String, Integer> aPartitions = new LinkedHashMap<>();
  final List<String> aNamespaces = new ArrayList<>();
  final List<String> aSubs = new ArrayList<>(); // the names the server gave
  final List<String> aSubBare = new ArrayList<>(); // the names as A typed them, without namespace
  final List<String> aMembers = new ArrayList<>();
  final List<String> aEventIds = new ArrayList<>();
  final List<String> aKeys = new ArrayList<>();
  final List<String> aIdemKeys = new ArrayList<>();
  final List<String> aAcks = new ArrayList<>();
  final List<String> aPositions = new ArrayList<>();
  String aType;
  String aPayloadMarker;
  String aHeaderKey;
  String aHeaderValue;
  String aSource;
  String aDeadReason;
  String aRetryReason;

  // Tenant B: its own things, which it may see.
  final List<String> bTopics = new ArrayList<>();
  final List<String> bCoreTopics = new ArrayList<>();
  final List<String> bSubs = new ArrayList<>();
  final List<String> bSubBare = new ArrayList<>();
  final List<String> bCoreSubs = new ArrayList<>();
  final List<String> bMembers = new ArrayList<>();
  final List<String> bEventIds = new ArrayList<>();
  final List<String> bKeys = new ArrayList<>();
  final List<String> bAcks = new ArrayList<>();
  final List<String> bPositions = new ArrayList<>();

  /** Draws the tenants' name suffixes: the first draws of a run. */
  TwoTenants(AttackDice dice) {
    rA = dice.suffix();
    rB = dice.suffix();
  }

  /** Starts the server with A's, B's and a "*" token; each tenant then makes its things. */
  void start() throws Exception {
    schema = Databases.uniqueName("bx_attack_");
    Databases.postgres().close();
    aSecrets.put("ta-admin-" + rA, "ta-admin-secret-" + UUID.randomUUID());
    aSecrets.put("ta-producer-" + rA, "ta-producer-secret-" + UUID.randomUUID());
    aSecrets.put("ta-consumer-" + rA, "ta-consumer-secret-" + UUID.randomUUID());
    for (Who w : List.of(Who.ADMIN, Who.OPERATOR, Who.VIEWER, Who.PRODUCER, Who.CONSUMER)) {
      String role = w.name().toLowerCase(Locale.ROOT);
      bTokenNames.put(w, "tb-" + role + "-" + rB);
      bSecrets.put(w, "tb-" + role + "-secret-" + UUID.randomUUID());
    }
    StringBuilder yaml =
        new StringBuilder(
            "http: {port: 0, maxBodyBytes: 65536, shutdownTimeout: 5s}\n"
                + Databases.postgresYaml(schema)
                + "tokens:\n"
                + ServerApiTest.token("star-admin", starSecret, "admin", "'*'"));
    for (Map.Entry<String, String> t : aSecrets.entrySet()) {
      String role = t.getKey().split("-")[1];
      yaml.append(ServerApiTest.token(t.getKey(), t.getValue(), role, "ta"));
    }
    for (Who w : bSecrets.keySet()) {
      yaml.append(
          ServerApiTest.token(
              bTokenNames.get(w), bSecrets.get(w), w.name().toLowerCase(Locale.ROOT), "tb"));
    }
    Path config = Files.createTempFile("boxline-attack", ".yaml");
    Files.writeString(config, yaml.toString());
    server = ServerProcess.start(Map.of(), "--config", config.toString());
    base = server.awaitReady(Duration.ofSeconds(90));
    star = new Api(base, starSecret);
    raw = new RawHttp(base);
    setUpTenantA();
    setUpTenantB();
  }

  @Override
  public void close() throws Exception {
    if (server != null) {
      server.close();
    }
    if (schema != null) {
      Databases.dropPostgresSchema(schema);
    }
  }

  Api a(String role) {
    return new Api(base, aSecrets.get("ta-" + role + "-" + rA));
  }

  Api b(Who w) {
    return new Api(base, bSecrets.get(w));
  }

  static Api.Reply expect(Api.Reply r, int status, String what) {
    assertThat(r.status()).as(what + " -> " + r).isEqualTo(status);
    return r;
  }

  /**
   * Creates a subscription as a namespace-limited admin: first as {@code <namespace>/<name>}, the
   * form subscriptions of such tokens are to take, then as the plain name; the name the server gave
   * is the one returned.
   */
  static String createSubscription(Api admin, String namespace, String name, List<String> topics) {
    StringBuilder ts = new StringBuilder("[");
    for (String t : topics) {
      ts.append(ts.length() > 1 ? "," : "").append('"').append(t).append('"');
    }
    ts.append(']');
    Api.Reply r =
        admin.post(
            "/v1/subscriptions",
            "{\"name\":\"" + namespace + "/" + name + "\",\"topics\":" + ts + "}");
    if (r.status() != 201) {
      r = admin.post("/v1/subscriptions", "{\"name\":\"" + name + "\",\"topics\":" + ts + "}");
    }
    assertThat(r.status()).as("create subscription " + name + " -> " + r).isEqualTo(201);
    return r.json().get("name").asText();
  }

  static String subPath(String sub) {
    return "/v1/subscriptions/" + enc(sub);
  }

  static String topicPath(String topic) {
    return "/v1/topics/" + enc(topic);
  }

  void setUpTenantA() throws Exception {
    Api admin = a("admin");
    expect(admin.post("/v1/namespaces", "{\"name\":\"ta\"}"), 201, "A creates its namespace");
    String vault = "ta/vault-" + rA;
    aNamespaces.add("ta");
    aNamespaces.add(vault);
    String orders = "ta/secret-orders-" + rA;
    String payments = vault + "/secret-payments-" + rA;
    String ledger = "ta/secret-ledger-" + rA;
    expect(admin.post("/v1/topics", "{\"name\":\"" + orders + "\",\"partitions\":4}"), 201, orders);
    expect(
        admin.post("/v1/topics", "{\"name\":\"" + payments + "\",\"partitions\":2}"),
        201,
        payments);
    expect(
        admin.post(
            "/v1/topics",
            "{\"name\":\"" + ledger + "\",\"partitions\":1,\"sequencing\":\"in-transaction\"}"),
        201,
        ledger);
    aTopics.addAll(List.of(orders, payments, ledger));
    aPartitions.put(orders, 4);
    aPartitions.put(payments, 2);
    aPartitions.put(ledger, 1);
    String audit = createSubscription(admin, "ta", "audit-" + rA, List.of(orders));
    String billing = createSubscription(admin, "ta", "billing-" + rA, List.of(orders, payments));
    String graveyard = createSubscription(admin, "ta", "graveyard-" + rA, List.of(payments));
    aSubs.addAll(List.of(audit, billing, graveyard));
    aSubBare.addAll(List.of("audit-" + rA, "billing-" + rA, "graveyard-" + rA));
    // Long deadlines: A's members keep their partitions (and A's ack ids stay valid) for the run.
    longDeadlines(admin, aSubs, "A's group policy");

    aType = "ASecretType-" + rA;
    aPayloadMarker = "A-PAYLOAD-" + rA;
    aHeaderKey = "a-hdr-" + rA;
    aHeaderValue = "A-HDRVAL-" + rA;
    aSource = "a-source-" + rA;
    aDeadReason = "A-DEAD-REASON-" + rA;
    aRetryReason = "A-RETRY-REASON-" + rA;
    Api producer = a("producer");
    int published = 0;
    Map<String, Integer> perTopic = Map.of(orders, 40, payments, 12, ledger, 5);
    for (String t : List.of(orders, payments, ledger)) {
      List<String> events = new ArrayList<>();
      for (int i = 0; i < perTopic.get(t); i++) {
        String key = "a-key-" + rA + "-" + (i % 8);
        if (!aKeys.contains(key)) {
          aKeys.add(key);
        }
        String idem = "a-idem-" + rA + "-" + published;
        aIdemKeys.add(idem);
        events.add(
            "{\"key\":\""
                + key
                + "\",\"type\":\""
                + aType
                + "\",\"source\":\""
                + aSource
                + "\",\"idempotencyKey\":\""
                + idem
                + "\",\"headers\":{\""
                + aHeaderKey
                + "\":\""
                + aHeaderValue
                + "\"},\"payload\":{\"marker\":\""
                + aPayloadMarker
                + "\",\"n\":"
                + published
                + "}}");
        published++;
      }
      aEventIds.addAll(publish(producer, t, events, "A publishes"));
    }
    awaitSequenced("A's events sequenced", aTopics, published);
    for (String t : aTopics) {
      for (int p = 0; p < aPartitions.get(t); p++) {
        aPositions.add(t + "/" + p + "/1");
      }
    }

    Api consumer = a("consumer");
    // audit: a member that fetched everything and settled the first event of each partition.
    String m1 = "a-member-" + rA + "-1";
    JsonNode f1 = fetchUntil(consumer, audit, m1, 40);
    settleFirstOfEachPartition(consumer, audit, m1, f1, "done", null, null);
    // graveyard: a dead letter and a retry parked for an hour.
    String m2 = "a-member-" + rA + "-2";
    JsonNode f2 = fetchUntil(consumer, graveyard, m2, 12);
    settleFirstOfEachPartition(consumer, graveyard, m2, f2, "dead", aDeadReason, null);
    JsonNode f2b = fetchUntil(consumer, graveyard, m2, 1);
    settleFirstOfEachPartition(consumer, graveyard, m2, f2b, "retry", aRetryReason, "1h");
    // billing: a member holding fetched, unsettled events.
    String m3 = "a-member-" + rA + "-3";
    fetchUntil(consumer, billing, m3, 52);
    aMembers.addAll(List.of(m1, m2, m3));
    ServerApiTest.await(
        "A's dead letter listed",
        () -> star.get(subPath(graveyard) + "/dead-letters").json().get("deadLetters").size() > 0);
  }

  /** Publishes {@code events}, JSON objects, to {@code topic} in one batch; their ids. */
  static List<String> publish(Api producer, String topic, List<String> events, String what) {
    Api.Reply r =
        expect(
            producer.post(
                topicPath(topic) + "/events", "{\"events\":[" + String.join(",", events) + "]}"),
            200,
            what);
    List<String> ids = new ArrayList<>();
    r.json().get("results").forEach(x -> ids.add(x.get("id").asText()));
    return ids;
  }

  /** Long deadlines: the members keep their partitions for the run. */
  static void longDeadlines(Api admin, List<String> subs, String what) {
    for (String s : subs) {
      expect(
          admin.put(
              subPath(s) + "/group-policy",
              "{\"minCheckInInterval\":\"5m\",\"maxCheckInInterval\":\"10m\",\"deadlineMultiplier\":3}"),
          200,
          what);
    }
  }

  /** Waits until the events of {@code topics} add up to {@code total}. */
  void awaitSequenced(String what, List<String> topics, int total) throws InterruptedException {
    ServerApiTest.await(
        what,
        () -> {
          int n = 0;
          for (String t : topics) {
            n += star.get(topicPath(t)).json().get("events").asInt();
          }
          return n == total;
        });
  }

  /** Fetches as {@code member} until at least {@code n} events came; adds their ack ids to A's. */
  JsonNode fetchUntil(Api consumer, String sub, String member, int n) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      Api.Reply r =
          consumer.post(
              subPath(sub) + "/members/" + enc(member) + "/fetch",
              "{\"max\":1000,\"waitMillis\":500}");
      assertThat(r.status()).as("fetch " + sub + " " + member + " -> " + r).isEqualTo(200);
      JsonNode events = r.json().get("events");
      events.forEach(
          e -> {
            List<String> acks = sub.contains(rA) ? aAcks : bAcks;
            acks.add(e.get("ackId").asText());
          });
      if (events.size() >= n) {
        return r.json();
      }
      assertThat(System.nanoTime())
          .as(member + " fetches " + n + " events of " + sub + ", last: " + r)
          .isLessThan(deadline);
    }
  }

  void settleFirstOfEachPartition(
      Api consumer,
      String sub,
      String member,
      JsonNode fetched,
      String outcome,
      String reason,
      String retryIn) {
    Map<String, JsonNode> first = new LinkedHashMap<>();
    for (JsonNode e : fetched.get("events")) {
      String p = e.get("event").get("topic").asText() + "/" + e.get("event").get("partition");
      first.putIfAbsent(p, e);
    }
    ArrayNode settle = JsonNodeFactory.instance.arrayNode();
    for (JsonNode e : first.values()) {
      ObjectNode s =
          settle.addObject().put("ackId", e.get("ackId").asText()).put("outcome", outcome);
      if (reason != null) {
        s.put("reason", reason);
      }
      if (retryIn != null) {
        s.put("retryIn", retryIn);
      }
    }
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.set("settle", settle);
    expect(
        consumer.post(subPath(sub) + "/members/" + enc(member) + "/settle", body.toString()),
        200,
        "settle " + outcome + " in " + sub);
  }

  void setUpTenantB() throws Exception {
    Api admin = b(Who.ADMIN);
    expect(admin.post("/v1/namespaces", "{\"name\":\"tb\"}"), 201, "B creates its namespace");
    String orders = "tb/orders-" + rB;
    String misc = "tb/misc-" + rB + "/events-" + rB;
    expect(admin.post("/v1/topics", "{\"name\":\"" + orders + "\",\"partitions\":4}"), 201, orders);
    expect(admin.post("/v1/topics", "{\"name\":\"" + misc + "\",\"partitions\":2}"), 201, misc);
    bTopics.addAll(List.of(orders, misc));
    bCoreTopics.addAll(List.of(orders, misc));
    String work = createSubscription(admin, "tb", "work-" + rB, List.of(orders));
    String mixed = createSubscription(admin, "tb", "mixed-" + rB, List.of(orders, misc));
    bSubs.addAll(List.of(work, mixed));
    bSubBare.addAll(List.of("work-" + rB, "mixed-" + rB));
    bCoreSubs.addAll(List.of(work, mixed));
    longDeadlines(admin, bSubs, "B's group policy");
    Api producer = b(Who.PRODUCER);
    int total = 0;
    for (String t : bTopics) {
      List<String> events = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        String key = "b-key-" + rB + "-" + (i % 6);
        if (!bKeys.contains(key)) {
          bKeys.add(key);
        }
        events.add("{\"key\":\"" + key + "\",\"type\":\"BType\",\"payload\":{\"b\":" + i + "}}");
        total++;
      }
      bEventIds.addAll(publish(producer, t, events, "B publishes"));
      for (int p = 0; p < 4; p++) {
        bPositions.add(t + "/" + p + "/1");
      }
    }
    awaitSequenced("B's events sequenced", bTopics, total);
    Api consumer = b(Who.CONSUMER);
    String m1 = "b-member-" + rB + "-1";
    String m2 = "b-member-" + rB + "-2";
    fetchUntil(consumer, work, m1, 30);
    fetchUntil(consumer, mixed, m2, 60);
    bMembers.addAll(List.of(m1, m2));
  }
}
