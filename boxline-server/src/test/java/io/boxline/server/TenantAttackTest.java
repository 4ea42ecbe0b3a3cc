package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Tenant isolation under generated attack. Two tenants share one server on PostgreSQL: namespace
 * {@code ta} (tenant A, the victim, with topics, subscriptions, group members holding fetched
 * events, a dead letter and a parked retry) and namespace {@code tb} (tenant B, the attacker).
 * Tenant B, with each of its tokens in turn, without a token and with bad tokens, sends thousands
 * of requests generated from a seeded {@link Random}: every route of {@code /openapi.json} and
 * other methods and paths, path parameters drawn from A's real names (raw, encoded, case changed,
 * mutated), B's names and made-up ones, forged ack ids, random JSON bodies with known and misspelt
 * fields, random query parameters and headers. For every answer:
 *
 * <ol>
 *   <li>it holds none of A's names or markers that the request did not carry itself (nor does an
 *       answer about one of A's real names differ from the answer about a made-up name of the same
 *       shape: no existence oracle);
 *   <li>a status that is not 2xx is a 4xx, or a 503 with Retry-After, with a JSON problem body
 *       ({@code status} and {@code error} or {@code message}), never a 5xx, never HTML, never a
 *       Java exception's name;
 *   <li>A's state, read through a token for "*" and straight from the database, is the same after
 *       the attack as before it.
 * </ol>
 *
 * <p>The seed is printed and heads the failure report; {@code -Dboxline.attack.seed=N} replays a
 * run (the same requests, but for the ack ids B's own fetches hand out meanwhile). {@code
 * -Dboxline.attack.requests=N} changes its length, {@code -Dboxline.attack.seconds=N} its time
 * budget, and {@code -Dboxline.attack.log=true} writes every request with its status to {@code
 * target/tenant-attack/}, where every failure goes too; the assertion message shows the first 20,
 * grouped by kind.
 *
 * <p>The second test sends malformed HTTP over raw sockets: invalid UTF-8, NUL, deeply nested JSON,
 * bodies, headers and targets too large, bad framing, {@code %00}, {@code %ZZ} and {@code ..} in
 * paths, request lines that are no HTTP/1.1, and slowloris connections. Each gets a clear 4xx (or,
 * for garbage, a closed connection), the server stays up, and nothing of it is written.
 *
 * <p>Run it alone: {@code ./mvnw -o -pl boxline-server test -Dtest=TenantAttackTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TenantAttackTest {
  static final long SEED =
      System.getProperty("boxline.attack.seed") != null
              && !System.getProperty("boxline.attack.seed").isBlank()
          ? Long.parseLong(System.getProperty("boxline.attack.seed").trim())
          : new java.security.SecureRandom().nextLong();
  static final int REQUESTS = Integer.getInteger("boxline.attack.requests", 3000);
  static final int SECONDS = Integer.getInteger("boxline.attack.seconds", 120);

  /** With -Dboxline.attack.log=true every request and its status go to target/tenant-attack/. */
  static final boolean LOG = Boolean.getBoolean("boxline.attack.log");

  static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  static final String NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";

  final Random rnd = new Random(SEED);
  final String rA = suffix();
  final String rB = suffix();

  String schema;
  ServerProcess server;
  String base;
  Api star;
  RawHttp raw;

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

  final String starSecret = "star-" + UUID.randomUUID();
  final Map<String, String> aSecrets = new LinkedHashMap<>(); // token name -> secret
  final Map<Who, String> bSecrets = new LinkedHashMap<>();

  /**
   * Whose turn each request is: every one of B's tokens, no token and a bad token, in a fixed
   * cycle; the roles that reach the most code (admin, producer, consumer) more often.
   */
  static final Who[] TURNS = {
    Who.ADMIN,
    Who.CONSUMER,
    Who.PRODUCER,
    Who.NONE,
    Who.ADMIN,
    Who.OPERATOR,
    Who.CONSUMER,
    Who.VIEWER,
    Who.BAD,
    Who.ADMIN,
    Who.PRODUCER,
    Who.CONSUMER
  };

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

  /** One of A's names or markers, found in an answer by its literal with name boundaries. */
  record Marker(String kind, String literal, String form, Pattern pattern, boolean adoptable) {}

  final List<Marker> markers = new ArrayList<>();

  /** Markers B legitimately stored under its own names (a member id, an event id, a key). */
  final Set<String> adopted = new TreeSet<>();

  String suffix() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      sb.append(NAME_CHARS.charAt(rnd.nextInt(NAME_CHARS.length())));
    }
    return sb.toString();
  }

  @BeforeAll
  void start() throws Exception {
    System.out.println(
        "TenantAttackTest seed: "
            + SEED
            + " (replay with -Dboxline.attack.seed="
            + SEED
            + "), requests: "
            + REQUESTS);
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
                + "database: {url: '"
                + Databases.PG_URL
                + "', user: postgres, schema: "
                + schema
                + "}\n"
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
    collectMarkers();
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    if (schema != null) {
      Databases.dropPostgresSchema(schema);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Setup

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
    for (String s : aSubs) {
      expect(
          admin.put(
              subPath(s) + "/group-policy",
              "{\"minCheckInInterval\":\"5m\",\"maxCheckInInterval\":\"10m\",\"deadlineMultiplier\":3}"),
          200,
          "A's group policy");
    }

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
      StringBuilder batch = new StringBuilder("{\"events\":[");
      for (int i = 0; i < perTopic.get(t); i++) {
        String key = "a-key-" + rA + "-" + (i % 8);
        if (!aKeys.contains(key)) {
          aKeys.add(key);
        }
        String idem = "a-idem-" + rA + "-" + published;
        aIdemKeys.add(idem);
        batch
            .append(i == 0 ? "" : ",")
            .append("{\"key\":\"")
            .append(key)
            .append("\",\"type\":\"")
            .append(aType)
            .append("\",\"source\":\"")
            .append(aSource)
            .append("\",\"idempotencyKey\":\"")
            .append(idem)
            .append("\",\"headers\":{\"")
            .append(aHeaderKey)
            .append("\":\"")
            .append(aHeaderValue)
            .append("\"},\"payload\":{\"marker\":\"")
            .append(aPayloadMarker)
            .append("\",\"n\":")
            .append(published)
            .append("}}");
        published++;
      }
      Api.Reply r =
          expect(producer.post(topicPath(t) + "/events", batch + "]}"), 200, "A publishes");
      r.json().get("results").forEach(x -> aEventIds.add(x.get("id").asText()));
    }
    final int total = published;
    ServerApiTest.await(
        "A's events sequenced",
        () -> {
          int n = 0;
          for (String t : aTopics) {
            n += star.get(topicPath(t)).json().get("events").asInt();
          }
          return n == total;
        });
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
    ArrayNode settle = NODES.arrayNode();
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
    ObjectNode body = NODES.objectNode();
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
    for (String s : bSubs) {
      expect(
          admin.put(
              subPath(s) + "/group-policy",
              "{\"minCheckInInterval\":\"5m\",\"maxCheckInInterval\":\"10m\",\"deadlineMultiplier\":3}"),
          200,
          "B's group policy");
    }
    Api producer = b(Who.PRODUCER);
    int total = 0;
    for (String t : bTopics) {
      StringBuilder batch = new StringBuilder("{\"events\":[");
      for (int i = 0; i < 30; i++) {
        String key = "b-key-" + rB + "-" + (i % 6);
        if (!bKeys.contains(key)) {
          bKeys.add(key);
        }
        batch
            .append(i == 0 ? "" : ",")
            .append("{\"key\":\"")
            .append(key)
            .append("\",\"type\":\"BType\",\"payload\":{\"b\":")
            .append(i)
            .append("}}");
        total++;
      }
      Api.Reply r =
          expect(producer.post(topicPath(t) + "/events", batch + "]}"), 200, "B publishes");
      r.json().get("results").forEach(x -> bEventIds.add(x.get("id").asText()));
      for (int p = 0; p < 4; p++) {
        bPositions.add(t + "/" + p + "/1");
      }
    }
    final int expected = total;
    ServerApiTest.await(
        "B's events sequenced",
        () -> {
          int n = 0;
          for (String t : bTopics) {
            n += star.get(topicPath(t)).json().get("events").asInt();
          }
          return n == expected;
        });
    Api consumer = b(Who.CONSUMER);
    String m1 = "b-member-" + rB + "-1";
    String m2 = "b-member-" + rB + "-2";
    fetchUntil(consumer, work, m1, 30);
    fetchUntil(consumer, mixed, m2, 60);
    bMembers.addAll(List.of(m1, m2));
  }

  void collectMarkers() {
    // The namespace is short and common: only as a namespace (followed by a slash, a quote, a
    // bracket or a comma), never inside a longer name such as tb/ta or status.
    markers.add(
        new Marker(
            "namespace",
            "ta",
            "ta",
            Pattern.compile("(?<![A-Za-z0-9._:/%-])ta(?=/|%2F|%2f|\"|'|\\]|,)"),
            false));
    for (String ns : aNamespaces.subList(1, aNamespaces.size())) {
      addMarker("namespace", ns, false);
    }
    aTopics.forEach(t -> addMarker("topic", t, false));
    // The last segment alone too (B may name its own things tb/<the same>: the slash before it
    // keeps those from matching).
    aTopics.forEach(t -> addMarker("topic", t.substring(t.lastIndexOf('/') + 1), false));
    aNamespaces
        .subList(1, aNamespaces.size())
        .forEach(n -> addMarker("namespace", n.substring(n.lastIndexOf('/') + 1), false));
    aSubs.forEach(s -> addMarker("subscription", s, !s.contains("/")));
    aSubBare.forEach(s -> addMarker("subscription", s, true));
    aMembers.forEach(m -> addMarker("member", m, true));
    aEventIds.forEach(id -> addMarker("event-id", id, true));
    aKeys.forEach(k -> addMarker("key", k, true));
    aIdemKeys.forEach(k -> addMarker("idempotency-key", k, true));
    aAcks.forEach(k -> addMarker("ack-id", k, false));
    aSecrets.keySet().forEach(n -> addMarker("token-name", n, false));
    for (String s :
        List.of(
            aType, aPayloadMarker, aHeaderKey, aHeaderValue, aSource, aDeadReason, aRetryReason)) {
      addMarker("event-content", s, false);
    }
    // Every secret of A's: a suffix the attacker never has, whatever form a leak takes.
    addMarker("tenant-suffix", rA, false);
  }

  void addMarker(String kind, String literal, boolean adoptable) {
    for (String form : new LinkedHashSet<>(List.of(literal, enc(literal).replace("+", "%20")))) {
      markers.add(
          new Marker(
              kind,
              literal,
              form,
              Pattern.compile(
                  "(?<![A-Za-z0-9._:/-])(?<!%2F)(?<!%2f)"
                      + Pattern.quote(form)
                      + "(?![A-Za-z0-9._:-])"),
              adoptable));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The attack

  /** A path parameter as sent, with the real name of A's it carries (for the oracle twin). */
  record Param(String name, String encoded, String aReal, String style) {}

  /** One generated request. */
  static final class Attack {
    final int index;
    final Who who;
    final String template;
    final RawHttp.Request request;
    final List<Param> params;
    final String query;

    Attack(
        int index,
        Who who,
        String template,
        RawHttp.Request request,
        List<Param> params,
        String query) {
      this.index = index;
      this.who = who;
      this.template = template;
      this.request = request;
      this.params = params;
      this.query = query;
    }

    String route() {
      return request.method + " " + template;
    }

    String describe() {
      return "(as " + who + ") " + request.describe();
    }
  }

  List<String[]> routes; // {method, template} from /openapi.json
  final List<String[]> extraRoutes = new ArrayList<>(); // paths the API does not have

  @Test
  @Order(1)
  void tenantBCannotSeeOrTouchTenantA() throws Exception {
    long t0 = System.nanoTime();
    routes = new ArrayList<>();
    for (String r : new TreeSet<>(star.as(null).describedRoutes())) {
      routes.add(r.split(" ", 2));
    }
    assertThat(routes).as("routes from /openapi.json").hasSizeGreaterThan(30);
    for (String extra :
        List.of(
            "GET /v1",
            "GET /v1/",
            "GET /V1/topics",
            "GET /v1//topics",
            "GET /v2/topics",
            "GET /v1/topics/{topic}/",
            "GET /v1/topics/{topic}/partitions",
            "GET /v1/topics/{topic}/partitions/{partition}",
            "GET /v1/subscriptions/{subscription}/members",
            "GET /v1/subscriptions/{subscription}/members/{member}",
            "POST /v1/topics/{topic}/events/{sequence}",
            "GET /v1/namespaces/{namespace}",
            "GET /v1/namespaces/{namespace}/topics",
            "POST /v1/subscriptions/{subscription}/members/{member}/ack")) {
      extraRoutes.add(extra.split(" ", 2));
    }
    Map<String, String> before = apiSnapshot();
    Map<String, String> dbBefore = dbSnapshot();
    assertThat(before.keySet()).as("A's state as seen by the * token").isNotEmpty();

    AttackFailures failures = new AttackFailures("TenantAttackTest (seed " + SEED + ")");
    Map<Integer, Integer> statuses = new TreeMap<>();
    Map<String, long[]> timing = new TreeMap<>();
    long[] phase = new long[3];
    StringBuilder log = LOG ? new StringBuilder() : null;
    int sent = 0;
    int twins = 0;
    int consecutiveSilent = 0;
    long budget = System.nanoTime() + Duration.ofSeconds(SECONDS).toNanos();
    String stoppedEarly = "";
    for (int i = 0; i < REQUESTS; i++) {
      if (System.nanoTime() > budget) {
        stoppedEarly =
            " (stopped at request " + i + ": the time budget of " + SECONDS + " s is spent)";
        break;
      }
      long g0 = System.nanoTime();
      Attack attack = generate(i);
      long g1 = System.nanoTime();
      RawHttp.Response resp = raw.send(attack.request, 5_000, 300);
      long g2 = System.nanoTime();
      phase[0] += g1 - g0;
      phase[1] += g2 - g1;
      sent++;
      statuses.merge(resp.status, 1, Integer::sum);
      if (log != null) {
        log.append(i)
            .append(' ')
            .append(attack.who)
            .append(' ')
            .append(RawHttp.truncate(attack.request.method + " " + attack.request.target, 300))
            .append(" -> ")
            .append(resp.status)
            .append(' ')
            .append(RawHttp.truncate(resp.bodyText().replace("\n", " "), 200))
            .append('\n');
      }
      long[] t = timing.computeIfAbsent(attack.template, k -> new long[2]);
      t[0]++;
      t[1] += resp.millis;
      check(attack, resp, failures);
      harvest(attack, resp);
      phase[2] += System.nanoTime() - g2;
      consecutiveSilent = resp.answered() ? 0 : consecutiveSilent + 1;
      if (consecutiveSilent >= 5) {
        failures.add(
            i,
            "server-unresponsive",
            attack.route(),
            attack.describe(),
            resp.toString(),
            "5 requests in a row got no answer: the attack stopped at request " + i);
        break;
      }
      boolean aRealInPath = attack.params.stream().anyMatch(p -> p.aReal() != null);
      if (aRealInPath && rnd.nextInt(100) < 30) {
        twins++;
        sent++;
        oracle(attack, resp, failures);
      }
    }
    // Whatever B managed to publish into A's topics is sequenced by now.
    Thread.sleep(1500);
    RawHttp.Response live = raw.send(new RawHttp.Request("GET", "/health/live"), 5_000, 0);
    if (live.status != 200) {
      failures.add(-1, "server-down", "GET /health/live", "GET /health/live", live.toString(), "");
    }
    Map<String, String> after = apiSnapshot();
    Map<String, String> dbAfter = dbSnapshot();
    compare("a-state-changed (API, * token)", before, after, failures);
    compare("a-state-changed (database rows)", dbBefore, dbAfter, failures);
    // The snapshots are not blind: A's own change (retention, a member leaving) shows in both.
    expect(
        a("admin").put(topicPath(aTopics.get(0)) + "/retention", "{\"maxAge\":\"3650d\"}"),
        200,
        "A changes its own retention");
    expect(
        a("consumer").delete(subPath(aSubs.get(1)) + "/members/" + enc(aMembers.get(2))),
        200,
        "A's member leaves");
    Map<String, String> changedApi = apiSnapshot();
    Map<String, String> changedDb = dbSnapshot();
    for (String k : List.of("topic " + aTopics.get(0), "subscription " + aSubs.get(1) + " group")) {
      if (Objects.equals(changedApi.get(k), after.get(k))) {
        failures.add(
            -1,
            "snapshot-blind",
            k,
            "(A's own change)",
            String.valueOf(after.get(k)),
            "the API snapshot does not see A's own change of " + k);
      }
    }
    for (String k : List.of("table topic", "table member")) {
      if (Objects.equals(changedDb.get(k), dbAfter.get(k))) {
        failures.add(
            -1,
            "snapshot-blind",
            k,
            "(A's own change)",
            String.valueOf(dbAfter.get(k)),
            "the database snapshot does not see A's own change in " + k);
      }
    }
    int dbRows = 0;
    for (String rows : dbBefore.values()) {
      dbRows += rows.isEmpty() ? 0 : rows.split("\n").length;
    }

    double seconds = (System.nanoTime() - t0) / 1e9;
    StringBuilder slow = new StringBuilder();
    timing.entrySet().stream()
        .sorted((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]))
        .limit(6)
        .forEach(
            e ->
                slow.append(
                    String.format(
                        Locale.ROOT,
                        " %s: %d in %d ms (%.1f ms each);",
                        e.getKey(),
                        e.getValue()[0],
                        e.getValue()[1],
                        e.getValue()[1] / (double) e.getValue()[0])));
    String header =
        String.format(
            Locale.ROOT,
            "seed %d (replay: -Dboxline.attack.seed=%d), %d requests sent (%d oracle twins) in %.1f s%s"
                + "%nstatuses: %s%nmost time:%s%nmarkers of A: %d; adopted by B (stored under B's own names): %s"
                + "%nA's state compared: %d API reads, %d database rows in %d tables%n",
            SEED,
            SEED,
            sent,
            twins,
            seconds,
            stoppedEarly,
            statuses,
            slow,
            markers.size(),
            adopted,
            before.size(),
            dbRows,
            dbBefore.size());
    System.out.println("TenantAttackTest attack: " + header);
    if (log != null) {
      Path file = Path.of("target", "tenant-attack", "requests-" + SEED + ".txt");
      Files.createDirectories(file.getParent());
      Files.writeString(file, log);
      System.out.println("TenantAttackTest requests: " + file.toAbsolutePath());
    }
    System.out.printf(
        Locale.ROOT,
        "TenantAttackTest phases: generate %d ms, send %d ms, check %d ms%n",
        phase[0] / 1_000_000,
        phase[1] / 1_000_000,
        phase[2] / 1_000_000);
    if (!failures.isEmpty()) {
      String file =
          failures.writeAll(Path.of("target", "tenant-attack", "attack-" + SEED + ".txt"), header);
      String report = failures.report(header + "all failures: " + file + "\n");
      System.out.println(report);
      throw new AssertionError(report);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Generation

  <T> T pick(List<T> list) {
    return list.get(rnd.nextInt(list.size()));
  }

  @SafeVarargs
  final <T> T pick(T... items) {
    return items[rnd.nextInt(items.length)];
  }

  boolean chance(int percent) {
    return rnd.nextInt(100) < percent;
  }

  Attack generate(int index) {
    Who who = TURNS[index % TURNS.length];
    String[] route = pickRoute();
    String method = route[0];
    if (chance(12)) {
      method =
          pick(
              "GET",
              "POST",
              "PUT",
              "DELETE",
              "PATCH",
              "HEAD",
              "OPTIONS",
              "TRACE",
              "get",
              "FOO",
              "PROPFIND",
              "Post");
    }
    String template = route[1];
    List<Param> params = new ArrayList<>();
    String subChoice = null;
    Matcher m = Pattern.compile("\\{([a-z]+)\\}").matcher(template);
    StringBuilder path = new StringBuilder();
    int last = 0;
    boolean consume = template.contains("/members/");
    while (m.find()) {
      path.append(template, last, m.start());
      String name = m.group(1);
      Param p;
      switch (name) {
        case "topic":
          p = topicParam(method, template);
          break;
        case "subscription":
          p = subscriptionParam(method, template, consume);
          subChoice = decode(p.encoded());
          break;
        case "member":
          p = memberParam(subChoice);
          break;
        case "namespace":
          p = namespaceParam();
          break;
        case "partition":
          p =
              plain(
                  "partition",
                  pick(
                      "0",
                      "1",
                      "3",
                      "0",
                      "1",
                      "-1",
                      "4",
                      "65536",
                      "99999999999",
                      "abc",
                      "0x1",
                      "%2B1",
                      "1.0",
                      "%20"));
          break;
        case "sequence":
          p =
              plain(
                  "sequence",
                  pick(
                      "1",
                      "2",
                      "5",
                      "0",
                      "-1",
                      "9223372036854775807",
                      "9223372036854775808",
                      "1e3",
                      "abc"));
          break;
        case "file":
          p =
              plain(
                  "file",
                  pick(
                      "index.html",
                      "app.js",
                      "style.css",
                      "x.html",
                      "INDEX.HTML",
                      "..%2F..%2Fetc%2Fpasswd",
                      "%2e%2e",
                      "app.js%00.html"));
          break;
        default:
          p = plain(name, suffix());
      }
      params.add(p);
      path.append(p.encoded());
      last = m.end();
    }
    path.append(template.substring(last));
    String query = query(template);
    String target = path + (query.isEmpty() ? "" : "?" + query);
    RawHttp.Request req = new RawHttp.Request(method, target);
    authorization(req, who);
    String body = body(method, template);
    if (body != null) {
      req.body(body);
      if (chance(85)) {
        req.header("Content-Type", "application/json");
      } else if (chance(60)) {
        req.header(
            "Content-Type",
            pick(
                "text/plain",
                "application/x-www-form-urlencoded",
                "application/json; charset=latin1",
                "",
                "multipart/form-data; boundary=x",
                "application/xml"));
      }
      if (chance(3)) {
        req.header("Expect", "100-continue");
      }
    }
    if (template.endsWith("/tail") ? chance(50) : chance(4)) {
      req.header("Last-Event-ID", position());
    }
    if (chance(5)) {
      req.header(
          "Accept",
          pick("text/html", "*/*", "application/json", "text/event-stream", "application/xml"));
    }
    if (chance(4)) {
      req.header(
          pick("X-Forwarded-For", "X-Real-IP", "Forwarded"),
          pick("127.0.0.1", "10.0.0.1", "for=unknown"));
    }
    if (chance(3)) {
      req.header(pick("X-Boxline-Namespace", "X-Tenant", "X-Namespace"), pick("ta", "*", "tb"));
    }
    if (chance(3)) {
      req.header("If-None-Match", pick("*", "\"x\"", "W/\"0\""));
    }
    return new Attack(index, who, template, req, params, query);
  }

  /** A route, the ones that take ack ids, member ids and events more often than the rest. */
  String[] pickRoute() {
    if (chance(6)) {
      return pick(extraRoutes);
    }
    int total = 0;
    for (String[] r : routes) {
      total += weight(r);
    }
    int x = rnd.nextInt(total);
    for (String[] r : routes) {
      x -= weight(r);
      if (x < 0) {
        return r;
      }
    }
    return routes.get(0);
  }

  static int weight(String[] route) {
    String t = route[1];
    if (t.endsWith("/settle")) {
      return 14;
    }
    if (t.endsWith("/fetch") || t.endsWith("/events") || t.endsWith("/members/{member}")) {
      return 4;
    }
    if (t.contains("{subscription}") || t.contains("{topic}")) {
      return 2;
    }
    return 1;
  }

  void authorization(RawHttp.Request req, Who who) {
    switch (who) {
      case NONE:
        if (chance(20)) {
          req.header("Authorization", pick("", "Bearer", "Bearer ", " "));
        }
        return;
      case BAD:
        String bad =
            pick(
                () -> "Bearer " + suffix() + suffix(),
                () -> "Bearer " + pick(new ArrayList<>(aSecrets.keySet())),
                () -> "Bearer " + pick(new ArrayList<>(bTokenNames.values())),
                () -> "Bearer " + mutate(pick(new ArrayList<>(bSecrets.values()))),
                () -> "Bearer " + pick(new ArrayList<>(bSecrets.values())).toUpperCase(Locale.ROOT),
                () ->
                    "Basic "
                        + Base64.getEncoder()
                            .encodeToString(
                                ("ta-admin-" + rA + ":x").getBytes(StandardCharsets.UTF_8)),
                () ->
                    "Basic "
                        + Base64.getEncoder()
                            .encodeToString(
                                ("star-admin:" + suffix()).getBytes(StandardCharsets.UTF_8)),
                () -> "Bearer " + "x".repeat(5000),
                () -> "Bearer *",
                () -> "Bearer ta",
                () -> "Token " + pick(new ArrayList<>(bSecrets.values())),
                () -> pick(new ArrayList<>(bSecrets.values())));
        req.header("Authorization", bad);
        return;
      default:
        String secret = bSecrets.get(who);
        String value =
            chance(80)
                ? "Bearer " + secret
                : pick(
                    "bearer " + secret,
                    "BEARER " + secret,
                    "Bearer  " + secret,
                    "Bearer " + secret + " ");
        req.header("Authorization", value);
        if (chance(4)) {
          req.header("Authorization", "Bearer " + suffix());
        }
    }
  }

  @SafeVarargs
  final <T> T pick(Supplier<T>... options) {
    return options[rnd.nextInt(options.length)].get();
  }

  String encodeStyled(String decoded, String style) {
    String std = enc(decoded).replace("+", "%20");
    switch (style) {
      case "raw-slash":
        return std.replace("%2F", "/");
      case "lower":
        return std.replace("%2F", "%2f");
      case "double":
        return std.replace("%", "%25");
      case "every-byte":
        StringBuilder sb = new StringBuilder();
        for (byte x : decoded.getBytes(StandardCharsets.UTF_8)) {
          sb.append(String.format(Locale.ROOT, "%%%02X", x & 0xff));
        }
        return sb.toString();
      default:
        return std;
    }
  }

  String style() {
    int k = rnd.nextInt(100);
    return k < 75
        ? "std"
        : k < 82 ? "raw-slash" : k < 88 ? "lower" : k < 94 ? "double" : "every-byte";
  }

  Param named(String name, String decoded, boolean aReal) {
    String style = style();
    return new Param(name, encodeStyled(decoded, style), aReal ? decoded : null, style);
  }

  Param plain(String name, String encoded) {
    return new Param(name, encoded, null, "std");
  }

  Param topicParam(String method, String template) {
    int k = rnd.nextInt(100);
    if (k < 28) {
      return named("topic", pick(aTopics), true);
    }
    if (k < 60) {
      List<String> own =
          method.equals("DELETE") && template.equals("/v1/topics/{topic}")
              ? List.of("tb/gone-" + suffix())
              : bTopics;
      return named("topic", pick(own), false);
    }
    if (k < 76) {
      return named("topic", mutate(pick(aTopics)), false);
    }
    if (k < 87) {
      return named(
          "topic",
          pick(
              "ta/nothing-" + suffix(),
              "tb/" + suffix(),
              suffix(),
              "*",
              "tb",
              "ta",
              aNamespaces.get(1),
              "tb/" + suffix() + "/" + suffix(),
              "ta/*",
              "*/secret-orders-" + rA),
          false);
    }
    return named("topic", odd(pick(aTopics)), false);
  }

  Param subscriptionParam(String method, String template, boolean consume) {
    int k = rnd.nextInt(100);
    if (consume && k < (template.endsWith("/settle") ? 65 : 45)) {
      return named("subscription", pick(bCoreSubs), false);
    }
    if (k < 30) {
      List<String> all = new ArrayList<>(aSubs);
      all.addAll(aSubBare);
      aSubBare.forEach(s -> all.add("ta/" + s));
      String s = pick(all);
      return named("subscription", s, true);
    }
    if (k < 55) {
      boolean destructive =
          method.equals("DELETE") && template.equals("/v1/subscriptions/{subscription}");
      List<String> own = new ArrayList<>(bSubs);
      own.addAll(bSubBare);
      if (destructive) {
        own.removeAll(bCoreSubs);
        own.removeAll(bSubBare);
        own.add("tb/gone-" + suffix());
      }
      return named("subscription", pick(own), false);
    }
    if (k < 72) {
      return named("subscription", mutate(pick(chance(50) ? aSubs : aSubBare)), false);
    }
    if (k < 85) {
      return named(
          "subscription",
          pick(suffix(), "tb/" + suffix(), "ta/" + suffix(), "*", "ta", "%", "a b"),
          false);
    }
    return named("subscription", odd(pick(aSubs)), false);
  }

  Param memberParam(String subscription) {
    int k = rnd.nextInt(100);
    boolean own = subscription != null && bCoreSubs.contains(subscription);
    if (own && k < 50) {
      return plain("member", enc(pick(bMembers)));
    }
    if (k < 25) {
      return plain("member", enc(pick(aMembers)));
    }
    if (k < 45) {
      return plain("member", enc(pick(bMembers)));
    }
    if (k < 60) {
      return plain("member", enc(mutate(pick(aMembers))));
    }
    if (k < 85) {
      return plain("member", "m-" + suffix());
    }
    return plain(
        "member",
        pick(
            "bad%20id", "x".repeat(101), "m%2F1", "..", "m%00", "%C3%BC", ":", "-", "*", "%2E%2E"));
  }

  Param namespaceParam() {
    int k = rnd.nextInt(100);
    if (k < 35) {
      return named("namespace", pick(aNamespaces), true);
    }
    if (k < 50) {
      return named("namespace", pick("tb", "tb/empty-" + suffix()), false);
    }
    if (k < 75) {
      return named("namespace", mutate(pick(aNamespaces)), false);
    }
    return named(
        "namespace",
        pick("*", "TA", "ta/..", "ta/", "/ta", "ta/" + suffix(), suffix(), ".", "ta%00"),
        false);
  }

  /** A name changed a little: case, one character, a prefix or suffix, another tenant's part. */
  String mutate(String s) {
    if (s.isEmpty()) {
      return suffix();
    }
    int i = rnd.nextInt(s.length());
    switch (rnd.nextInt(12)) {
      case 0:
        return s.toUpperCase(Locale.ROOT);
      case 1:
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
      case 2:
        char c = s.charAt(i);
        char flipped =
            Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
        return flipped == c ? s + "x" : s.substring(0, i) + flipped + s.substring(i + 1);
      case 3:
        return s.substring(0, i)
            + NAME_CHARS.charAt(rnd.nextInt(NAME_CHARS.length()))
            + s.substring(i + 1);
      case 4:
        return s + pick("x", "-", ".", "_", "0", "/", " ");
      case 5:
        return s.substring(0, s.length() - 1);
      case 6:
        return pick("x", "-", ".", "_", "/", " ") + s;
      case 7:
        return s.replace(rA, rB);
      case 8:
        return s.startsWith("ta/") ? "tb/" + s.substring(3) : "tb/" + s;
      case 9:
        return s.replace("/", "//");
      case 10:
        return s + "/" + suffix();
      default:
        return s.substring(0, i) + s.substring(i, i + 1).repeat(2) + s.substring(i + 1);
    }
  }

  /** A name in a form a careless parser might take for the real one. */
  String odd(String s) {
    return pick(
        " " + s,
        s + " ",
        "./" + s,
        s.replace("/", "/./"),
        "tb/../" + s,
        "../" + s,
        s.replace("/", "\\"),
        s + "\u0000",
        s + "\u0000tb",
        "tb/x\u0000" + s,
        s.replace("a", "\u0430"), // Cyrillic a
        s + "%",
        s + "/",
        "/" + s,
        s.toUpperCase(Locale.ROOT),
        s + "\n",
        s + ";tb",
        s + "?x=1",
        s + "#x",
        "x".repeat(300));
  }

  String query(String template) {
    List<String> names = new ArrayList<>();
    if (template.endsWith("/events")) {
      names.addAll(List.of("after", "key", "id", "limit", "at", "payload"));
    } else if (template.endsWith("{sequence}")) {
      names.add("payload");
    } else if (template.endsWith("/tail")) {
      names.addAll(List.of("from", "key", "type", "position"));
    } else if (template.equals("/v1/topics/{topic}")
        || template.equals("/v1/subscriptions/{subscription}")) {
      names.add("force");
    } else if (template.endsWith("/retries")) {
      names.addAll(List.of("limit", "after"));
    } else if (template.endsWith("/dead-letters")) {
      names.addAll(
          List.of(
              "topic",
              "type",
              "key",
              "eventId",
              "error",
              "deadBefore",
              "deadAfter",
              "after",
              "limit"));
    } else if (template.endsWith("/reasons")) {
      names.add("limit");
    }
    names.addAll(List.of("namespace", "token", "debug", "tenant", "x"));
    int n = chance(35) ? 0 : 1 + rnd.nextInt(3);
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name =
          chance(85)
              ? pick(names.subList(0, Math.max(1, names.size() - (chance(80) ? 5 : 0))))
              : pick(names);
      if (chance(3)) {
        parts.add(enc(name));
        continue;
      }
      parts.add(enc(name) + "=" + enc(queryValue(name)).replace("+", "%20"));
    }
    return String.join("&", parts);
  }

  String queryValue(String name) {
    switch (name) {
      case "force":
        return pick("true", "false", "yes", "", "TRUE");
      case "limit":
        return pick("1", "10", "1000", "0", "-1", "1001", "10001", "99999999999", "abc", "1e2");
      case "after":
        return chance(50) ? pick("0", "5", "-1", "abc", "9223372036854775807") : position3();
      case "key":
        return chance(85)
            ? pick(chance(50) ? aKeys : bKeys)
            : pick("\u0000", "k".repeat(5000), "%");
      case "id":
      case "eventId":
        return pick(pick(aEventIds), pick(bEventIds), UUID.randomUUID().toString(), "abc", "");
      case "at":
      case "deadBefore":
      case "deadAfter":
        return pick(
            "2020-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "now",
            "abc",
            "1970-01-01T00:00:00Z",
            "",
            "+1000000000-01-01T00:00:00Z",
            "-1000000000-01-01T00:00:00Z");
      case "payload":
        return pick("base64", "json", "xml", "");
      case "from":
        return pick("earliest", "latest", "beginning", "", "EARLIEST");
      case "position":
        return position();
      case "type":
        return pick(aType, "BType", suffix(), "", "\u0000");
      case "topic":
        return pick(pick(aTopics), pick(bTopics), mutate(pick(aTopics)), "x");
      case "error":
        return pick(aDeadReason.substring(0, 6), "poison", "%", "_", "", "\u0000", "\\");
      case "namespace":
      case "tenant":
        return pick("ta", "*", "tb");
      case "token":
        return pick(new ArrayList<>(aSecrets.keySet()));
      default:
        return suffix();
    }
  }

  /** A tail position, real-looking or not. */
  String position() {
    return pick(
        "0:1",
        "0:1,1:2",
        "0:0",
        "99:1",
        "0:-1",
        "-1:1",
        "0:99999999999999999999",
        "abc",
        "",
        "0:1,0:2",
        "1:1;2:2",
        ",",
        "0:1,",
        "\u00e9:1",
        "0:1".repeat(200));
  }

  /** A namespace/topic/partition/sequence position, as dead letters and retries page by. */
  String position3() {
    return pick(
        pick(aPositions), pick(bPositions), mutate(pick(aPositions)), "x/y/0/1", "ta", "a/b/c/d/e");
  }

  // Bodies -------------------------------------------------------------------------------------

  String body(String method, String template) {
    boolean writes =
        method.equalsIgnoreCase("POST")
            || method.equalsIgnoreCase("PUT")
            || method.equalsIgnoreCase("PATCH");
    if (!(writes ? chance(92) : chance(12))) {
      return null;
    }
    if (chance(8)) {
      return junkBody();
    }
    if (chance(55)) {
      JsonNode valid = wellFormed(template);
      if (valid != null) {
        return withSurrogates(oneFault(valid).toString());
      }
    }
    ObjectNode o;
    if (template.equals("/v1/namespaces")) {
      o = object(Map.of("name", this::nameValue));
    } else if (template.equals("/v1/topics")) {
      o =
          object(
              Map.of(
                  "name",
                  this::nameValue,
                  "partitions",
                  this::partitionsValue,
                  "sequencing",
                  () -> any("sequencer", "in-transaction", "IN_TRANSACTION", "x", 1, null)));
    } else if (template.endsWith("/retention")) {
      o =
          object(
              Map.of(
                  "maxAge",
                  this::durationValue,
                  "keepUnconsumed",
                  this::boolValue,
                  "maxEventsPerPartition",
                  this::intValue,
                  "abandonAfter",
                  this::durationValue));
    } else if (template.endsWith("/events")) {
      return eventsBody();
    } else if (template.equals("/v1/subscriptions")) {
      o =
          object(
              Map.of(
                  "name",
                  this::subNameValue,
                  "topics",
                  this::topicsValue,
                  "start",
                  this::startValue));
    } else if (template.endsWith("group-policy")) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      for (String d :
          List.of("minCheckInInterval", "releaseGrace", "idleRelease", "maxCheckInInterval")) {
        f.put(d, this::durationValue);
      }
      for (String n :
          List.of("checkInRate", "deadlineMultiplier", "slack", "batchSize", "maxMembers")) {
        f.put(n, this::numberValue);
      }
      o = object(f);
    } else if (template.endsWith("/rewind")) {
      o = object(Map.of("to", this::startValue));
    } else if (template.endsWith("/redrive") || template.endsWith("/discard")) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      f.put("topic", () -> text(pick(pick(aTopics), pick(bTopics), mutate(pick(aTopics)))));
      f.put("type", () -> text(pick(aType, "BType", suffix())));
      f.put("key", () -> text(pick(pick(aKeys), pick(bKeys))));
      f.put("eventId", () -> text(pick(pick(aEventIds), pick(bEventIds), "x")));
      f.put("error", () -> text(pick("A-DEAD", "poison", "%")));
      f.put("deadBefore", () -> text(pick("2020-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "x")));
      f.put("deadAfter", () -> text(pick("2020-01-01T00:00:00Z", "x")));
      f.put("after", () -> text(position3()));
      f.put("limit", this::intValue);
      f.put("dryRun", this::boolValue);
      o = object(f);
    } else if (template.endsWith("/fetch")) {
      o =
          object(
              Map.of(
                  "weight",
                  () -> any(1, 0, -1, 1000, 1001, 0.5, "1", 1e308, null),
                  "max",
                  () -> any(1, 10, 100, 10000, 0, 10001, -5, "5", 2.5),
                  "waitMillis",
                  () -> any(0, 10, 50, 100, -1, 30001, "100", 1.5, null)));
    } else if (template.endsWith("/settle") || template.endsWith("/ack")) {
      return settleBody();
    } else {
      o = object(Map.of("name", this::nameValue, "x", this::anyValue));
    }
    return withSurrogates(o.toString());
  }

  static final String LONE_SURROGATE = "@@lone-surrogate@@";

  /** JSON text cannot be built with a lone surrogate: it is written as an escape afterwards. */
  static String withSurrogates(String json) {
    return json.replace(LONE_SURROGATE, "\\ud800");
  }

  /**
   * A body the endpoint takes as it is, on B's own things: the start of a one-fault mutation, so
   * that what is judged is the one hostile value, not a missing field.
   */
  JsonNode wellFormed(String template) {
    ObjectNode o = NODES.objectNode();
    if (template.equals("/v1/namespaces")) {
      o.put("name", "tb/ns-" + suffix());
    } else if (template.equals("/v1/topics")) {
      o.put("name", "tb/t-" + suffix()).put("partitions", 1 + rnd.nextInt(3));
      if (chance(50)) {
        o.put("sequencing", pick("sequencer", "in-transaction"));
      }
    } else if (template.endsWith("/retention")) {
      o.put("maxAge", "30d").put("keepUnconsumed", true).put("maxEventsPerPartition", 1000);
      o.put("abandonAfter", "7d");
    } else if (template.endsWith("/events")) {
      if (chance(50)) {
        return wellFormedEvent();
      }
      ArrayNode events = o.putArray("events");
      for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
        events.add(wellFormedEvent());
      }
    } else if (template.equals("/v1/subscriptions")) {
      o.put("name", pick("tb/s-", "s-") + suffix());
      o.putArray("topics").add(pick(bCoreTopics));
      o.put("start", pick("earliest", "latest", "2020-01-01T00:00:00Z"));
    } else if (template.endsWith("group-policy")) {
      o.put("minCheckInInterval", "5m").put("maxCheckInInterval", "10m");
      o.put("deadlineMultiplier", 3).put("slack", 0.1).put("checkInRate", 8);
      o.put("batchSize", 0).put("maxMembers", 0).put("releaseGrace", "10s");
      o.put("idleRelease", "10s");
    } else if (template.endsWith("/rewind")) {
      o.put("to", pick("earliest", "latest", "2020-01-01T00:00:00Z"));
    } else if (template.endsWith("/redrive") || template.endsWith("/discard")) {
      o.put("dryRun", true).put("topic", pick(bCoreTopics)).put("type", "BType");
      o.put("key", pick(bKeys)).put("limit", 10).put("deadAfter", "2020-01-01T00:00:00Z");
      o.put("error", "b").put("after", pick(bCoreTopics) + "/0/1");
    } else if (template.endsWith("/fetch")) {
      o.put("max", 10).put("waitMillis", 0).put("weight", 1);
    } else if (template.endsWith("/settle")) {
      ArrayNode list = o.putArray("settle");
      ObjectNode x = list.addObject();
      x.put("ackId", bAcks.isEmpty() ? "1.0.1.0.1" : pick(bAcks));
      String outcome = pick("done", "retry", "dead");
      x.put("outcome", outcome);
      if (!outcome.equals("done")) {
        x.put("reason", "b-reason");
      }
      if (outcome.equals("retry")) {
        x.put("retryIn", "1h");
      }
    } else {
      return null;
    }
    return o;
  }

  ObjectNode wellFormedEvent() {
    ObjectNode e = NODES.objectNode();
    e.put("type", "BType").put("key", pick(bKeys));
    e.putObject("payload").put("b", rnd.nextInt(100));
    if (chance(40)) {
      e.putObject("headers").put("h-" + suffix(), "v");
    }
    if (chance(30)) {
      e.put("source", "b-source");
    }
    if (chance(30)) {
      e.put("idempotencyKey", "b-idem-" + suffix());
    }
    if (chance(20)) {
      e.put("id", UUID.randomUUID().toString());
    }
    if (chance(15)) {
      e.put("deliverAt", "2020-01-01T00:00:00Z");
    }
    return e;
  }

  /**
   * One hostile change, anywhere in the body: a field's value (also deep in a list) made odd, a
   * field added or left out.
   */
  JsonNode oneFault(JsonNode body) {
    List<ObjectNode> objects = new ArrayList<>();
    collectObjects(body, objects);
    if (objects.isEmpty()) {
      return body;
    }
    ObjectNode target = pick(objects);
    List<String> fields = new ArrayList<>();
    target.fieldNames().forEachRemaining(fields::add);
    int k = rnd.nextInt(100);
    if (k < 70 && !fields.isEmpty()) {
      target.set(pick(fields), oddValue());
    } else if (k < 85 || fields.isEmpty()) {
      target.set(
          fields.isEmpty() || chance(50)
              ? pick("extra", "namespace", "tenant", suffix())
              : misspell(pick(fields)),
          oddValue());
    } else {
      target.remove(pick(fields));
    }
    return body;
  }

  static void collectObjects(JsonNode n, List<ObjectNode> out) {
    if (n.isObject()) {
      out.add((ObjectNode) n);
      n.forEach(x -> collectObjects(x, out));
    } else if (n.isArray()) {
      n.forEach(x -> collectObjects(x, out));
    }
  }

  /**
   * A value no field expects: NUL, lone surrogates, huge strings, times and numbers at the edges.
   */
  JsonNode oddValue() {
    return pick(
        () -> text("\u0000"),
        () -> text("a\u0000b"),
        () -> text(LONE_SURROGATE),
        () -> text("x".repeat(3000)),
        () -> text("k".repeat(10_000)),
        () -> text(""),
        () -> text(" "),
        () -> NODES.numberNode(-1),
        () -> NODES.numberNode(0),
        () -> NODES.numberNode(1e308),
        () -> NODES.numberNode(1e-320),
        () -> NODES.numberNode(new java.math.BigInteger("18446744073709551616")),
        () -> NODES.numberNode(1.5),
        () -> NODES.booleanNode(true),
        () -> NODES.nullNode(),
        () -> NODES.arrayNode(),
        () -> NODES.objectNode(),
        () -> text("999999999d"),
        () -> text("PT2562047788015215H"),
        () -> text("+1000000000-01-01T00:00:00Z"),
        () -> text("-1000000000-01-01T00:00:00Z"),
        () -> text("+294277-01-01T00:00:00Z"),
        () -> text("-4714-11-24T00:00:00Z"),
        () -> text("NaN"),
        () -> text("${jndi:ldap://127.0.0.1/x}"),
        () -> text("../../etc/passwd"),
        () -> text("\uD83D\uDE00"),
        () -> text("tb/x/0/99999999999999999999"));
  }

  String junkBody() {
    return pick(
        "",
        "null",
        "[]",
        "{}",
        "{",
        "\"x\"",
        "123",
        "[1,2",
        "{\"a\":{\"b\":{\"c\":[]}}}",
        "[".repeat(200) + "]".repeat(200),
        "\uFEFF{}",
        "{\"name\":\"tb/x\",\"name\":\"ta/x\"}",
        "{\"name\":\"ta/secret-orders-" + rA + "\"}",
        "name=ta",
        "{\"type\":\"T\",\"key\":\"\\u0000\"}",
        "{'single':'quotes'}",
        "{\"a\":1}garbage",
        "x".repeat(70_000));
  }

  /** An object with some of these fields (some misspelt, some unknown, some missing). */
  ObjectNode object(Map<String, Supplier<JsonNode>> fields) {
    ObjectNode o = NODES.objectNode();
    for (Map.Entry<String, Supplier<JsonNode>> f : new TreeMap<>(fields).entrySet()) {
      if (chance(25)) {
        continue;
      }
      String name = chance(8) ? misspell(f.getKey()) : f.getKey();
      o.set(name, f.getValue().get());
    }
    if (chance(8)) {
      o.set(
          pick("extra", "namespace", "tenant", "owner", "admin", "id", "__proto__", suffix()),
          anyValue());
    }
    return o;
  }

  String misspell(String s) {
    if (s.length() < 3) {
      return s + "x";
    }
    switch (rnd.nextInt(5)) {
      case 0:
        return s.toLowerCase(Locale.ROOT);
      case 1:
        return s + "s";
      case 2:
        return s.length() < 3 ? s + "x" : s.substring(0, 1) + s.substring(2);
      case 3:
        int i = rnd.nextInt(s.length() - 1);
        return s.substring(0, i) + s.charAt(i + 1) + s.charAt(i) + s.substring(i + 2);
      default:
        return s.replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
    }
  }

  JsonNode text(String s) {
    return NODES.textNode(s);
  }

  JsonNode any(Object... options) {
    Object o = options[rnd.nextInt(options.length)];
    return Api.JSON.valueToTree(o);
  }

  JsonNode nameValue() {
    return chance(85)
        ? text(
            pick(
                pick(aNamespaces),
                pick(aTopics),
                mutate(pick(aTopics)),
                "tb/" + suffix(),
                "tb/" + suffix() + "/" + suffix(),
                pick(bTopics),
                odd("tb/" + suffix()),
                "ta/" + suffix(),
                "*",
                ""))
        : anyValue();
  }

  JsonNode subNameValue() {
    return chance(85)
        ? text(
            pick(
                pick(aSubs),
                pick(aSubBare),
                "ta/" + pick(aSubBare),
                mutate(pick(aSubBare)),
                "tb/" + suffix(),
                suffix(),
                pick(bSubs),
                odd(suffix()),
                "*",
                ""))
        : anyValue();
  }

  JsonNode topicsValue() {
    if (chance(10)) {
      return anyValue();
    }
    ArrayNode a = NODES.arrayNode();
    int n = rnd.nextInt(3) + (chance(90) ? 1 : 0);
    for (int i = 0; i < n; i++) {
      a.add(
          pick(pick(aTopics), pick(bTopics), mutate(pick(aTopics)), "tb/" + suffix(), "ta/*", "*"));
    }
    return a;
  }

  JsonNode startValue() {
    return any(
        "earliest",
        "latest",
        "2020-01-01T00:00:00Z",
        "yesterday",
        5,
        "",
        null,
        "9999-01-01T00:00:00Z");
  }

  JsonNode partitionsValue() {
    return any(1, 2, 4, 0, -1, 65537, "4", 1.5, null, true);
  }

  JsonNode durationValue() {
    return any("1s", "30d", "PT1H", "-1s", "often", "", 5, "999999999d", "250ms", null);
  }

  JsonNode boolValue() {
    return any(true, false, "true", 1, null);
  }

  JsonNode intValue() {
    return any(0, 1, 100, -1, 2147483648L, 1.5, "10", null, 100000, 100001);
  }

  JsonNode numberValue() {
    return any(0, 0.1, 1, 3, 8, 1000, -1, 1e9, "1", null, 100001);
  }

  /** Any JSON value without A's markers: B's own content. */
  JsonNode anyValue() {
    return anyValue(0);
  }

  JsonNode anyValue(int depth) {
    switch (rnd.nextInt(depth > 3 ? 6 : 9)) {
      case 0:
        return NODES.nullNode();
      case 1:
        return NODES.booleanNode(rnd.nextBoolean());
      case 2:
        return NODES.numberNode(rnd.nextInt(2001) - 1000);
      case 3:
        return NODES.numberNode(pick(1e308, -0.0, 9.007199254740993E15, Double.MIN_VALUE));
      case 4:
        return text(
            pick(
                "b-" + suffix(),
                "",
                "\u0000",
                "\uD83D\uDE00",
                "<script>alert(1)</script>",
                "'; DROP TABLE topic; --",
                "%s%n",
                "x".repeat(2000)));
      case 5:
        return NODES.numberNode(new java.math.BigInteger("123456789012345678901234567890"));
      case 6:
        ArrayNode a = NODES.arrayNode();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          a.add(anyValue(depth + 1));
        }
        return a;
      default:
        ObjectNode o = NODES.objectNode();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          o.set(pick("b", "k", "nested", suffix()), anyValue(depth + 1));
        }
        return o;
    }
  }

  String eventsBody() {
    if (chance(5)) {
      StringBuilder sb = new StringBuilder("{\"events\":[");
      for (int i = 0; i < 1001; i++) {
        sb.append(i == 0 ? "" : ",").append("{}");
      }
      return sb.append("]}").toString();
    }
    int n = chance(60) ? 1 : rnd.nextInt(5);
    List<ObjectNode> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Supplier<JsonNode>> f = new LinkedHashMap<>();
      f.put(
          "type",
          () ->
              chance(90)
                  ? text(pick("BType", "B." + suffix(), "", "\u0000", "x".repeat(300)))
                  : anyValue());
      f.put(
          "key",
          () ->
              chance(85)
                  ? text(pick(pick(bKeys), pick(aKeys), "b-" + suffix(), "", "\u0000"))
                  : anyValue());
      f.put("payload", this::anyValue);
      if (chance(15)) {
        f.put("payloadBase64", () -> text(pick("aGVsbG8=", "!!!", "", "aGVsbG8")));
      }
      f.put(
          "contentType",
          () ->
              text(
                  pick(
                      "application/json",
                      "text/plain",
                      "application/octet-stream",
                      "",
                      "x".repeat(1000))));
      f.put(
          "headers",
          () -> chance(70) ? Api.JSON.valueToTree(Map.of("h-" + suffix(), "v")) : anyValue());
      f.put("idempotencyKey", () -> text(pick(pick(aIdemKeys), "b-idem-" + suffix(), "")));
      f.put(
          "id",
          () ->
              text(
                  pick(
                      pick(aEventIds),
                      pick(bEventIds),
                      UUID.randomUUID().toString(),
                      "not-a-uuid")));
      f.put("source", () -> text(pick("b-source", "", "\u0000")));
      f.put(
          "deliverAt",
          () ->
              text(
                  pick(
                      "2020-01-01T00:00:00Z",
                      "9999-12-31T23:59:59Z",
                      "tomorrow",
                      "+1000000000-01-01T00:00:00Z")));
      ObjectNode e = object(f);
      if (!e.has("deliverAt") || chance(70)) {
        e.remove("deliverAt");
      }
      events.add(e);
    }
    if (n == 1 && chance(60)) {
      return events.get(0).toString();
    }
    ObjectNode body = NODES.objectNode();
    ArrayNode a = body.putArray(chance(95) ? "events" : "event");
    events.forEach(a::add);
    if (chance(5)) {
      body.put("type", "BType");
    }
    return body.toString();
  }

  String settleBody() {
    ObjectNode body = NODES.objectNode();
    if (chance(4)) {
      body.set("settle", anyValue());
      return body.toString();
    }
    ArrayNode list = body.putArray(chance(96) ? "settle" : pick("acks", "Settle", "settles"));
    // Mostly one settlement, well formed but for its ack id, so the ack id is what is judged.
    int n = chance(65) ? 1 : 2 + rnd.nextInt(3);
    boolean sloppy = chance(20);
    for (int i = 0; i < n; i++) {
      ObjectNode s = list.addObject();
      s.set(sloppy && chance(30) ? misspell("ackId") : "ackId", ackValue());
      String outcome = pick("done", "done", "retry", "dead", "DONE");
      if (sloppy) {
        s.set("outcome", any("done", "retry", "dead", "x", 1, null));
      } else if (chance(80)) {
        s.put("outcome", outcome);
      }
      if (outcome.equals("retry") && chance(50)) {
        s.set(
            "retryIn",
            sloppy
                ? any("1s", "-1s", "x", 5, "999999999d", "PT2562047788015215H")
                : any("1s", "1h", "PT0S"));
      }
      if (!outcome.equals("done") && chance(50)) {
        s.set("reason", any("b-reason-" + rB, "", "x".repeat(3000), "\u0000"));
      }
      if (sloppy && chance(20)) {
        s.set(
            pick("subscription", "topic", "member"),
            text(pick(pick(aSubs), pick(aTopics), pick(aMembers))));
      }
    }
    return body.toString();
  }

  JsonNode ackValue() {
    int k = rnd.nextInt(100);
    if (k < 12 && !bAcks.isEmpty()) {
      return text(pick(bAcks));
    }
    if (k < 27) {
      return text(pick(aAcks));
    }
    if (k < 62) {
      return text(mutateAck(pick(chance(60) ? aAcks : bAcks.isEmpty() ? aAcks : bAcks)));
    }
    if (k < 72) {
      String x = pick(aAcks);
      String y = pick(bAcks.isEmpty() ? aAcks : bAcks);
      int i = rnd.nextInt(Math.min(x.length(), y.length()) + 1);
      return text(
          chance(50)
              ? x.substring(0, i) + y.substring(Math.min(i, y.length()))
              : y.substring(0, Math.min(i, y.length())) + x.substring(Math.min(i, x.length())));
    }
    if (k < 88) {
      return text(
          pick(
              "1.0.1.0.1",
              "1.0.0.0.1",
              "0.0.0.0.0",
              "2.1.1.r2.3",
              "1.0.1.0",
              "-1.0.1.0.1",
              "99999999999999999999.0.1.0.1",
              "1.0.1.0.1.0",
              "1..1.0.1",
              ".....",
              "1.0.1.r.1",
              randomDigits()));
    }
    return any(
        "", null, 123, "x".repeat(5000), "\u0000", List.of("1.0.1.0.1"), Map.of("ackId", "1"));
  }

  String randomDigits() {
    StringBuilder sb = new StringBuilder();
    int parts = 3 + rnd.nextInt(4);
    for (int i = 0; i < parts; i++) {
      sb.append(i == 0 ? "" : ".")
          .append(chance(10) ? "r" : "")
          .append(rnd.nextInt(chance(50) ? 10 : 100000));
    }
    return sb.toString();
  }

  /** An ack id changed without knowing its format: a run of digits or one character at a time. */
  String mutateAck(String ack) {
    String s = ack;
    int edits = 1 + rnd.nextInt(2);
    for (int e = 0; e < edits; e++) {
      List<int[]> runs = new ArrayList<>();
      Matcher m = Pattern.compile("\\d+").matcher(s);
      while (m.find()) {
        runs.add(new int[] {m.start(), m.end()});
      }
      int kind = rnd.nextInt(6);
      if (kind <= 2 && !runs.isEmpty()) {
        int[] r = pick(runs);
        String digits = s.substring(r[0], r[1]);
        String replaced;
        switch (kind) {
          case 0:
            replaced =
                new java.math.BigInteger(digits)
                    .add(java.math.BigInteger.valueOf(chance(50) ? 1 : -1))
                    .max(java.math.BigInteger.ZERO)
                    .toString();
            break;
          case 1:
            replaced =
                pick(
                    "0", "1", "2", "-1", "99999999999999999999", String.valueOf(rnd.nextInt(1000)));
            break;
          default:
            // The run at the same place in another real ack id (of the other tenant, maybe).
            String other = pick(chance(50) ? aAcks : bAcks.isEmpty() ? aAcks : bAcks);
            List<String> otherRuns = new ArrayList<>();
            Matcher om = Pattern.compile("\\d+").matcher(other);
            while (om.find()) {
              otherRuns.add(om.group());
            }
            int idx = runs.indexOf(r);
            replaced = idx < otherRuns.size() ? otherRuns.get(idx) : digits;
        }
        s = s.substring(0, r[0]) + replaced + s.substring(r[1]);
      } else if (kind == 3 && !s.isEmpty()) {
        int i = rnd.nextInt(s.length());
        String chars = "0123456789abcdefABCDEF._-";
        s = s.substring(0, i) + chars.charAt(rnd.nextInt(chars.length())) + s.substring(i + 1);
      } else if (kind == 4 && s.length() > 1) {
        s = s.substring(0, 1 + rnd.nextInt(s.length() - 1));
      } else {
        s = s + pick(".1", "0", "=", ".r1", "." + s);
      }
    }
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // Checks

  static String decode(String s) {
    try {
      return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  /** The request as text, with its target decoded once and twice: what an echo may repeat. */
  static String requestText(RawHttp.Request r) {
    String sent = new String(r.bytes("h", 1), StandardCharsets.UTF_8);
    String once = decode(r.target);
    return sent + "\n" + once + "\n" + decode(once);
  }

  static final Pattern ECHO_BOUNDARY_CHARS = Pattern.compile("[A-Za-z0-9._:-]");

  /** Whether the request carried this literal itself (so an answer may repeat it). */
  static boolean carried(String requestText, String literal) {
    int from = 0;
    while (true) {
      int i = requestText.indexOf(literal, from);
      if (i < 0) {
        return false;
      }
      int end = i + literal.length();
      boolean rightOk =
          end >= requestText.length()
              || !ECHO_BOUNDARY_CHARS.matcher(String.valueOf(requestText.charAt(end))).matches();
      boolean leftOk =
          i == 0
              || !ECHO_BOUNDARY_CHARS.matcher(String.valueOf(requestText.charAt(i - 1))).matches();
      if (rightOk && leftOk) {
        return true;
      }
      from = i + 1;
    }
  }

  static final List<String> INTERNALS =
      List.of(
          "Exception",
          "java.",
          "javax.",
          "com.fasterxml",
          "org.postgresql",
          "io.boxline.",
          "com.sun.",
          "sun.net",
          "\tat ",
          "Caused by",
          "SQLState",
          "StackOverflowError",
          "NullPointer");

  void check(Attack attack, RawHttp.Response resp, AttackFailures failures) {
    String req = attack.describe();
    String route = attack.route();
    if (!resp.answered()) {
      failures.add(attack.index, "no-answer", route, req, resp.toString(), "no HTTP answer");
      return;
    }
    String reqText = requestText(attack.request);
    String respText = resp.text();
    // 1. none of A's names.
    List<String> leaked = leaks(reqText, respText);
    if (!leaked.isEmpty()) {
      failures.add(
          attack.index,
          "leak",
          route,
          req,
          resp.toString(),
          "the answer holds "
              + leaked.size()
              + " of A's names the request did not carry: "
              + String.join("; ", leaked.subList(0, Math.min(6, leaked.size())))
              + (leaked.size() > 6 ? "; …" : ""));
    }
    // 2. the status and the problem body.
    int s = resp.status;
    boolean head = attack.request.method.equals("HEAD");
    if (s >= 200 && s < 300) {
      return;
    }
    if (s >= 300 && s < 400) {
      String location = resp.header("Location");
      boolean redirect =
          (s == 301 || s == 302 || s == 303 || s == 307 || s == 308)
              && location != null
              && location.startsWith("/")
              && !location.startsWith("//");
      boolean notModified = s == 304 && attack.request.hasHeader("If-None-Match");
      if (!redirect && !notModified) {
        failures.add(attack.index, "status-3xx", route, req, resp.toString(), "status " + s);
      }
      return;
    }
    if (s >= 500) {
      if (s != 503 || resp.header("Retry-After") == null) {
        failures.add(
            attack.index,
            s == 503 ? "status-503-without-retry-after" : "status-" + s,
            route,
            req,
            resp.toString(),
            "status " + s);
      }
    } else if (s < 400) {
      failures.add(attack.index, "status-" + s, route, req, resp.toString(), "status " + s);
    }
    if (!head) {
      String problem = problem(resp);
      if (problem != null) {
        failures.add(attack.index, "not-a-json-problem", route, req, resp.toString(), problem);
      }
    }
    for (String x : INTERNALS) {
      if (resp.bodyText().contains(x) && !reqText.contains(x)) {
        failures.add(
            attack.index,
            "internals-exposed",
            route,
            req,
            resp.toString(),
            "the answer names '" + x + "'");
        break;
      }
    }
  }

  /** A's names in {@code text} that {@code requestText} did not carry, each with its context. */
  List<String> leaks(String requestText, String text) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new TreeSet<>();
    for (Marker mk : markers) {
      if (adopted.contains(mk.literal())
          || seen.contains(mk.literal())
          || !text.contains(mk.form())) {
        continue;
      }
      Matcher m = mk.pattern().matcher(text);
      while (m.find()) {
        if (carried(requestText, m.group())) {
          continue;
        }
        seen.add(mk.literal());
        int from = Math.max(0, m.start() - 60);
        int to = Math.min(text.length(), m.end() + 40);
        out.add(
            mk.kind()
                + " '"
                + m.group()
                + "' in …"
                + text.substring(from, to).replace("\r", "").replace("\n", " | ")
                + "…");
        break;
      }
    }
    return out;
  }

  /** Null when the body is a JSON problem for this status; else what is wrong with it. */
  static String problem(RawHttp.Response resp) {
    String body = resp.bodyText();
    String ct = resp.header("Content-Type");
    if (ct != null && ct.toLowerCase(Locale.ROOT).contains("html")
        || body.stripLeading().startsWith("<")) {
      return "an HTML answer (Content-Type " + ct + ")";
    }
    JsonNode json;
    try {
      json = Api.JSON.readTree(body);
    } catch (Exception e) {
      return "the body is not JSON (Content-Type " + ct + ")";
    }
    if (json == null || !json.isObject()) {
      return "the body is not a JSON object";
    }
    if (!json.path("status").isInt() || json.get("status").asInt() != resp.status) {
      return "the body's \"status\" is not " + resp.status;
    }
    if (!json.path("error").isTextual() && !json.path("message").isTextual()) {
      return "the body has neither \"error\" nor \"message\"";
    }
    return null;
  }

  /**
   * Sends the attack again with each real name of A's in its path replaced by a made-up name of the
   * same shape; the two answers must be the same but for the names.
   */
  void oracle(Attack attack, RawHttp.Response resp, AttackFailures failures) {
    String target = attack.request.target;
    Map<String, String> swaps = new LinkedHashMap<>();
    String fakeSuffix = suffix();
    for (Param p : attack.params) {
      if (p.aReal() == null) {
        continue;
      }
      String fake = p.aReal().replace(rA, fakeSuffix);
      if (fake.equals(p.aReal())) {
        continue;
      }
      swaps.put(p.encoded(), encodeStyled(fake, p.style()));
    }
    if (swaps.isEmpty()) {
      return;
    }
    String twinTarget = target;
    for (Map.Entry<String, String> e : swaps.entrySet()) {
      twinTarget = twinTarget.replace(e.getKey(), e.getValue());
    }
    RawHttp.Request twin = new RawHttp.Request(attack.request.method, twinTarget);
    attack.request.headers.forEach(h -> twin.header(h[0], h[1]));
    twin.body = attack.request.body;
    RawHttp.Response twinResp = raw.send(twin, 5_000, 300);
    // The twin is an attack of its own: its answer is held to the same rules.
    check(
        new Attack(attack.index, attack.who, attack.template, twin, List.of(), attack.query),
        twinResp,
        failures);
    if (throttled(resp) || throttled(twinResp)) {
      return; // a rate limit or a full server says nothing about the names
    }
    String a = normalized(resp, rA, fakeSuffix);
    String b = normalized(twinResp, rA, fakeSuffix);
    if (resp.status != twinResp.status || !a.equals(b)) {
      failures.add(
          attack.index,
          "existence-oracle",
          attack.route(),
          attack.describe() + "\n(twin: " + twin.method + " " + twinTarget + ")",
          resp + "\n--- twin answer ---\n" + twinResp,
          "an answer about A's real name differs from one about a made-up name of the same shape");
    }
  }

  static boolean throttled(RawHttp.Response r) {
    return r.status == 429 || r.status == 503;
  }

  static String normalized(RawHttp.Response r, String real, String fake) {
    if (!r.answered()) {
      return "(none)";
    }
    String body = decode(decode(r.bodyText())).replace(real, "<N>").replace(fake, "<N>");
    try {
      JsonNode j = Api.JSON.readTree(body);
      if (j != null && j.isObject()) {
        return r.status + " " + j.path("error").asText() + " " + j.path("message").asText();
      }
    } catch (Exception e) {
      // not JSON: compare the text
    }
    return r.status + " " + body;
  }

  /** Real ack ids from B's own fetches join the pool; what B stored under its names is adopted. */
  void harvest(Attack attack, RawHttp.Response resp) {
    if (resp.status < 200 || resp.status >= 300) {
      return;
    }
    if (attack.template.endsWith("/fetch") && attack.request.method.equals("POST")) {
      try {
        JsonNode j = Api.JSON.readTree(resp.bodyText());
        for (JsonNode e : j.path("events")) {
          if (e.path("ackId").isTextual() && bAcks.size() < 500) {
            bAcks.add(e.get("ackId").asText());
          }
        }
      } catch (Exception e) {
        // reported by check
      }
    }
    if (!attack.request.method.equals("POST")) {
      return;
    }
    // Only what B stored under its own names: a member id it joined its group with, the ids, keys
    // and idempotency keys of events it published to its topics, a subscription it created.
    Set<String> stored = new TreeSet<>();
    if (attack.template.endsWith("/fetch")) {
      attack.params.stream()
          .filter(p -> p.name().equals("member"))
          .forEach(p -> stored.add(decode(p.encoded())));
    }
    try {
      JsonNode body = attack.request.body == null ? null : Api.JSON.readTree(attack.request.body);
      if (body != null && attack.template.endsWith("/events")) {
        List<JsonNode> events = new ArrayList<>();
        if (body.has("events")) {
          body.get("events").forEach(events::add);
        } else {
          events.add(body);
        }
        for (JsonNode e : events) {
          for (String f : List.of("id", "key", "idempotencyKey")) {
            if (e.path(f).isTextual()) {
              stored.add(e.get(f).asText());
            }
          }
        }
      }
      if (body != null
          && attack.template.equals("/v1/subscriptions")
          && body.path("name").isTextual()) {
        stored.add(body.get("name").asText());
      }
    } catch (Exception e) {
      // not JSON: nothing stored
    }
    for (Marker mk : markers) {
      if (mk.adoptable() && stored.contains(mk.literal())) {
        adopted.add(mk.literal());
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // A's state

  static final Set<String> VOLATILE = Set.of("lagSeconds", "readAt", "ageSeconds");

  static JsonNode stripVolatile(JsonNode n) {
    if (n.isObject()) {
      ObjectNode o = ((ObjectNode) n).deepCopy();
      VOLATILE.forEach(o::remove);
      List<String> names = new ArrayList<>();
      o.fieldNames().forEachRemaining(names::add);
      for (String f : names) {
        o.set(f, stripVolatile(o.get(f)));
      }
      return o;
    }
    if (n.isArray()) {
      ArrayNode a = NODES.arrayNode();
      n.forEach(x -> a.add(stripVolatile(x)));
      return a;
    }
    return n;
  }

  String read(String path) {
    Api.Reply r = star.get(path);
    if (r.status() != 200) {
      return r.status() + " " + r.body();
    }
    return stripVolatile(r.json()).toString();
  }

  boolean isA(String topicName) {
    return topicName.equals("ta") || topicName.startsWith("ta/");
  }

  /** A's namespaces, topics with their events, subscriptions with everything the API shows. */
  Map<String, String> apiSnapshot() {
    Map<String, String> s = new TreeMap<>();
    List<String> ns = new ArrayList<>();
    star.get("/v1/namespaces")
        .json()
        .get("namespaces")
        .forEach(
            n -> {
              if (isA(n.asText())) {
                ns.add(n.asText());
              }
            });
    s.put("namespaces", ns.toString());
    for (JsonNode t : star.get("/v1/topics").json().get("topics")) {
      String name = t.get("name").asText();
      if (!isA(name)) {
        continue;
      }
      s.put("topic " + name, read(topicPath(name)));
      try {
        s.put(
            "events " + name,
            star.allEvents(topicPath(name), t.get("partitions").asInt()).toString());
      } catch (AssertionError e) {
        s.put("events " + name, "unreadable: " + e.getMessage());
      }
    }
    for (JsonNode sub : star.get("/v1/subscriptions").json().get("subscriptions")) {
      String name = sub.get("name").asText();
      boolean touchesA = false;
      for (JsonNode t : sub.get("topics")) {
        touchesA |= isA(t.asText());
      }
      if (!touchesA && !aSubs.contains(name) && !aSubBare.contains(name)) {
        continue;
      }
      String p = subPath(name);
      s.put("subscription " + name, read(p));
      for (String tail :
          List.of(
              "lag",
              "group",
              "group-policy",
              "failures",
              "retries?limit=10000",
              "dead-letters?limit=10000",
              "dead-letters/reasons")) {
        s.put("subscription " + name + " " + tail, read(p + "/" + tail));
      }
    }
    List<String> f = new ArrayList<>();
    star.get("/v1/failures")
        .json()
        .get("failures")
        .forEach(
            x -> {
              if (aSubs.contains(x.path("subscription").asText())) {
                f.add(stripVolatile(x).toString());
              }
            });
    s.put("failures", f.toString());
    return s;
  }

  /** The rows of A's namespaces, topics and subscriptions, straight from the schema. */
  Map<String, String> dbSnapshot() throws Exception {
    Map<String, String> s = new TreeMap<>();
    try (Connection c = Databases.postgres();
        Statement st = c.createStatement()) {
      Set<String> tables = new TreeSet<>();
      try (ResultSet rs =
          st.executeQuery(
              "SELECT table_name FROM information_schema.tables WHERE table_schema = '"
                  + schema
                  + "'")) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      String ns =
          ids(st, "SELECT id FROM " + schema + ".namespace WHERE path = 'ta' OR path LIKE 'ta/%'");
      String topics =
          ids(st, "SELECT id FROM " + schema + ".topic WHERE namespace_id IN (" + ns + ")");
      StringBuilder names = new StringBuilder("''");
      for (String n : aSubs) {
        names.append(",'").append(n.replace("'", "''")).append('\'');
      }
      for (String n : aSubBare) {
        names.append(",'").append(n.replace("'", "''")).append('\'');
      }
      String subs =
          ids(
              st,
              "SELECT subscription_id FROM "
                  + schema
                  + ".subscription_topic WHERE topic_id IN ("
                  + topics
                  + ") UNION SELECT id FROM "
                  + schema
                  + ".subscription WHERE name IN ("
                  + names
                  + ")");
      StringBuilder subNames = new StringBuilder(names);
      try (ResultSet rs =
          st.executeQuery(
              "SELECT name FROM " + schema + ".subscription WHERE id IN (" + subs + ")")) {
        while (rs.next()) {
          subNames.append(",'").append(rs.getString(1).replace("'", "''")).append('\'');
        }
      }
      Map<String, String> where = new LinkedHashMap<>();
      where.put("namespace", "id IN (" + ns + ")");
      where.put("topic", "id IN (" + topics + ")");
      where.put("partition", "topic_id IN (" + topics + ")");
      where.put("log", "topic_id IN (" + topics + ")");
      where.put("outbox", "topic_id IN (" + topics + ")");
      where.put("outbox_rejected", "topic_id IN (" + topics + ")");
      where.put("idempotency", "topic_id IN (" + topics + ")");
      where.put("subscription", "id IN (" + subs + ")");
      where.put(
          "subscription_topic",
          "topic_id IN (" + topics + ") OR subscription_id IN (" + subs + ")");
      where.put("cursor", "topic_id IN (" + topics + ") OR subscription_id IN (" + subs + ")");
      where.put("member", "group_name IN (" + subNames + ")");
      where.put("lease", "group_name IN (" + subNames + ") OR topic_id IN (" + topics + ")");
      where.put("group_policy", "group_name IN (" + subNames + ")");
      where.put("parked", "subscription_id IN (" + subs + ") OR topic_id IN (" + topics + ")");
      where.put("inbox", "subscription_id IN (" + subs + ")");
      for (Map.Entry<String, String> w : where.entrySet()) {
        if (!tables.contains(w.getKey())) {
          continue;
        }
        StringBuilder rows = new StringBuilder();
        String sql =
            "SELECT t::text FROM "
                + schema
                + ".\""
                + w.getKey()
                + "\" t WHERE "
                + w.getValue()
                + " ORDER BY 1";
        try (ResultSet rs = st.executeQuery(sql)) {
          while (rs.next()) {
            rows.append(rs.getString(1)).append('\n');
          }
        } catch (java.sql.SQLException e) {
          rows.append("(cannot read: ").append(e.getMessage()).append(')');
        }
        s.put("table " + w.getKey(), rows.toString());
      }
    }
    return s;
  }

  static String ids(Statement st, String sql) throws java.sql.SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out.isEmpty() ? "-1" : String.join(",", out);
  }

  static void compare(
      String kind, Map<String, String> before, Map<String, String> after, AttackFailures failures) {
    Set<String> keys = new TreeSet<>(before.keySet());
    keys.addAll(after.keySet());
    for (String k : keys) {
      String x = before.get(k);
      String y = after.get(k);
      if (x == null ? y == null : x.equals(y)) {
        continue;
      }
      failures.add(
          -1,
          kind,
          k,
          "("
              + (kind.startsWith("written")
                  ? "heads of every topic, A's and B's"
                  : "state of tenant A")
              + ": "
              + k
              + ")",
          "before: "
              + RawHttp.truncate(String.valueOf(x), 1500)
              + "\nafter:  "
              + RawHttp.truncate(String.valueOf(y), 1500),
          "changed: " + k + " " + firstDifference(x, y));
    }
  }

  static String firstDifference(String x, String y) {
    if (x == null || y == null) {
      return x == null ? "(appeared)" : "(disappeared)";
    }
    int i = 0;
    while (i < x.length() && i < y.length() && x.charAt(i) == y.charAt(i)) {
      i++;
    }
    int from = Math.max(0, i - 80);
    return "at char "
        + i
        + ": before …"
        + x.substring(from, Math.min(x.length(), i + 120))
        + "… after …"
        + y.substring(from, Math.min(y.length(), i + 120))
        + "…";
  }

  // ---------------------------------------------------------------------------------------------
  // Malformed HTTP over raw sockets

  /** What a malformed request may get: a 4xx with a JSON problem, or (for garbage) no answer. */
  enum Expect {
    FOUR_XX,
    FOUR_XX_OR_CLOSE
  }

  /** One malformed request: what it is, what it may get, its bytes. */
  record Case(String name, Expect expect, byte[] bytes) {}

  /**
   * A request on the wire: the request line, then Host, Authorization (when a token is given),
   * Connection: close, the extra header lines, a Content-Length (unless the extra headers frame the
   * body themselves) and the body.
   */
  byte[] wire(String requestLine, String token, String headers, byte[] body) {
    StringBuilder sb = new StringBuilder(requestLine).append("\r\n");
    sb.append("Host: ").append(raw.host).append(':').append(raw.port).append("\r\n");
    if (token != null) {
      sb.append("Authorization: Bearer ").append(token).append("\r\n");
    }
    sb.append("Connection: close\r\n").append(headers);
    boolean framed = headers.contains("Content-Length:") || headers.contains("Transfer-Encoding:");
    if (body != null && !framed) {
      sb.append("Content-Type: application/json\r\nContent-Length: ")
          .append(body.length)
          .append("\r\n");
    }
    sb.append("\r\n");
    return body == null ? ascii(sb.toString()) : concat(ascii(sb.toString()), body);
  }

  @Test
  @Order(2)
  void malformedHttpGetsAClear4xxAndWritesNothing() throws Exception {
    long t0 = System.nanoTime();
    AttackFailures failures = new AttackFailures("TenantAttackTest malformed input");
    String admin = bSecrets.get(Who.ADMIN);
    String producer = bSecrets.get(Who.PRODUCER);
    String consumer = bSecrets.get(Who.CONSUMER);
    String topic = "tb/malformed-" + rB;
    expect(
        b(Who.ADMIN).post("/v1/topics", "{\"name\":\"" + topic + "\",\"partitions\":2}"),
        201,
        "B's topic for malformed input");
    String publish = topicPath(topic) + "/events";
    byte[] event = ascii("{\"type\":\"Malformed\",\"key\":\"k\",\"payload\":{\"n\":1}}");
    // The controls: the same requests, well formed, are taken. Each malformed one below differs
    // from one of them in one place only, so a refusal comes from that place.
    RawHttp.Response control =
        raw.send(wire("POST " + publish + " HTTP/1.1", producer, "", event), false, 10_000, 0);
    assertThat(control.status).as("the well-formed publish: " + control).isEqualTo(200);
    RawHttp.Response tailControl =
        raw.send(
            wire(
                "GET " + topicPath(topic) + "/tail HTTP/1.1",
                consumer,
                "Last-Event-ID: 0:1\r\n",
                null),
            false,
            10_000,
            300);
    assertThat(tailControl.status).as("the well-formed tail: " + tailControl).isEqualTo(200);
    String member = subPath(bCoreSubs.get(0)) + "/members/" + enc(bMembers.get(0));
    RawHttp.Response fetchControl =
        raw.send(
            wire("POST " + member + "/fetch HTTP/1.1", consumer, "", ascii("{}")),
            false,
            10_000,
            0);
    assertThat(fetchControl.status).as("the well-formed fetch: " + fetchControl).isEqualTo(200);
    ServerApiTest.await(
        "the control event sequenced",
        () -> star.get(topicPath(topic)).json().get("events").asInt() == 1);
    Map<String, String> heads = heads();

    String line = "POST " + publish + " HTTP/1.1";
    List<Case> cases = new ArrayList<>();
    // Invalid UTF-8 and NUL.
    cases.add(
        new Case(
            "invalid UTF-8 in the path",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                ascii("POST " + topicPath(topic)),
                bytes(0xff, 0xfe),
                wire("/events HTTP/1.1", producer, "", event))));
    cases.add(
        new Case(
            "invalid UTF-8, percent-encoded, in the path",
            Expect.FOUR_XX,
            wire("POST " + topicPath(topic) + "%FF%FE/events HTTP/1.1", producer, "", event)));
    cases.add(
        new Case(
            "invalid UTF-8 in the Authorization header",
            Expect.FOUR_XX,
            wire(
                line,
                null,
                new String(
                    concat(
                        ascii("Authorization: Bearer "),
                        bytes(0xff, 0xfe, 0xc3, 0x28),
                        ascii("\r\n")),
                    StandardCharsets.ISO_8859_1),
                event)));
    cases.add(
        new Case(
            "invalid UTF-8 in Last-Event-ID",
            Expect.FOUR_XX,
            wire(
                "GET " + topicPath(topic) + "/tail HTTP/1.1",
                consumer,
                "Last-Event-ID: 0:\u00ff\u00fe\r\n",
                null)));
    cases.add(
        new Case(
            "invalid UTF-8 in a header name",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "X-\u00ff\u00fe: 1\r\n", event)));
    cases.add(
        new Case(
            "invalid UTF-8 in the JSON body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                concat(
                    ascii("{\"type\":\"Malformed\",\"key\":\""),
                    bytes(0xc3, 0x28, 0xff),
                    ascii("\"}")))));
    cases.add(
        new Case(
            "NUL characters in the event's type and key",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                ascii("{\"type\":\"Malformed\\u0000\",\"key\":\"k\\u0000\"}"))));
    cases.add(
        new Case(
            "a raw NUL byte in the path",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                ascii("POST " + topicPath(topic)),
                bytes(0),
                wire("/events HTTP/1.1", producer, "", event))));
    // Deep JSON.
    cases.add(
        new Case(
            "JSON arrays nested 5,000 levels as a publish body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                ascii(
                    "{\"type\":\"Malformed\",\"payload\":"
                        + "[".repeat(5000)
                        + "]".repeat(5000)
                        + "}"))));
    cases.add(
        new Case(
            "JSON objects nested 5,000 levels as a publish body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                ascii(
                    "{\"type\":\"Malformed\",\"payload\":"
                        + "{\"a\":".repeat(5000)
                        + "1"
                        + "}".repeat(5000)
                        + "}"))));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a fetch body",
            Expect.FOUR_XX,
            wire(
                "POST " + member + "/fetch HTTP/1.1",
                consumer,
                "",
                ascii("[".repeat(5000) + "]".repeat(5000)))));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a settle body",
            Expect.FOUR_XX,
            wire(
                "POST " + member + "/settle HTTP/1.1",
                consumer,
                "",
                ascii(
                    "{\"settle\":["
                        + "{\"ackId\":".repeat(5000)
                        + "\"1\""
                        + "}".repeat(5000)
                        + "]}"))));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a subscription",
            Expect.FOUR_XX,
            wire(
                "POST /v1/subscriptions HTTP/1.1",
                admin,
                "",
                ascii(
                    "{\"name\":\"tb/deep\",\"topics\":"
                        + "[".repeat(5000)
                        + "]".repeat(5000)
                        + "}"))));
    // Bodies and headers too large, bodies framed wrongly.
    cases.add(
        new Case(
            "a 1 MiB body (maxBodyBytes is 64 KiB)",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                ascii("{\"type\":\"Malformed\",\"payload\":\"" + "x".repeat(1 << 20) + "\"}"))));
    StringBuilder chunked = new StringBuilder();
    for (int i = 0; i < 64; i++) {
      String part =
          i == 0
              ? "{\"type\":\"Malformed\",\"payload\":\"" + "y".repeat(16_000)
              : "y".repeat(16_384);
      chunked.append(Integer.toHexString(part.length())).append("\r\n").append(part).append("\r\n");
    }
    chunked.append("2\r\n\"}\r\n0\r\n\r\n");
    cases.add(
        new Case(
            "a 1 MiB chunked body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
                ascii(chunked.toString()))));
    cases.add(
        new Case(
            "a chunked body with a bad chunk size",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
                concat(ascii("ZZ\r\n"), event, ascii("\r\n0\r\n\r\n")))));
    cases.add(
        new Case(
            "a Content-Length that is not a number",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nContent-Length: abc\r\n",
                event)));
    cases.add(
        new Case(
            "a negative Content-Length",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nContent-Length: -5\r\n",
                event)));
    cases.add(
        new Case(
            "a 100 KB header",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "X-Pad: " + "p".repeat(100_000) + "\r\n", event)));
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 2000; i++) {
      many.append("X-Pad-").append(i).append(": ").append("q".repeat(40)).append("\r\n");
    }
    cases.add(
        new Case(
            "100 KB of headers (2,000 of them)",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, many.toString(), event)));
    cases.add(
        new Case(
            "a 100 KB request target",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                "POST " + publish + "?x=" + "u".repeat(100_000) + " HTTP/1.1",
                producer,
                "",
                event)));
    cases.add(
        new Case(
            "a header line without a colon",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "NoColonHere\r\n", event)));
    // Paths: %00, %ZZ, .., targets that are no path.
    String[][] paths = {
      {"%00 in the topic", "POST", publish.replace("%2F", "%2F%00")},
      {"%00 after the topic", "POST", topicPath(topic) + "%00/events"},
      {"%ZZ in the path", "POST", topicPath(topic) + "%ZZ/events"},
      {"%ZZ as the topic", "GET", "/v1/topics/%ZZ"},
      {"a lone % in the path", "GET", "/v1/topics/%"},
      {"%ZZ in the query", "GET", topicPath(topic) + "/partitions/0/events?key=%ZZ"},
      {".. to the metrics", "GET", "/v1/../metrics"},
      {
        "encoded .. to A's topic",
        "GET",
        "/v1/topics/tb%2F..%2F" + enc(aTopics.get(0)) + "/partitions/0/events"
      },
      {"raw .. to A's topic", "GET", "/v1/topics/tb/../" + aTopics.get(0) + "/partitions/0/events"},
      {".. out of the console", "GET", "/console/../../etc/passwd"},
      {"encoded .. out of the console", "GET", "/console/..%2F..%2F..%2Fetc%2Fpasswd"},
      {"%2e%2e out of the console", "GET", "/console/%2e%2e/%2e%2e/etc/passwd"},
      {"an asterisk as the target", "GET", "*"},
    };
    for (String[] p : paths) {
      boolean post = p[1].equals("POST");
      cases.add(
          new Case(
              p[0],
              Expect.FOUR_XX,
              wire(
                  p[1] + " " + p[2] + " HTTP/1.1",
                  post ? producer : consumer,
                  "",
                  post ? event : null)));
    }
    cases.add(
        new Case(
            "a space in the path",
            Expect.FOUR_XX_OR_CLOSE,
            wire("POST " + topicPath(topic) + " x/events HTTP/1.1", producer, "", event)));
    // Request lines that are no HTTP/1.1.
    cases.add(
        new Case(
            "a request line without a version",
            Expect.FOUR_XX_OR_CLOSE,
            wire("GET /v1/topics", admin, "", null)));
    cases.add(
        new Case(
            "a publish whose request line has no version",
            Expect.FOUR_XX_OR_CLOSE,
            wire("POST " + publish, producer, "", event)));
    cases.add(
        new Case("a request line of one word", Expect.FOUR_XX_OR_CLOSE, ascii("GET\r\n\r\n")));
    cases.add(
        new Case(
            "binary garbage (a TLS hello)",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                bytes(0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03),
                new byte[64],
                ascii("\r\n\r\n"))));
    cases.add(
        new Case(
            "a CONNECT request",
            Expect.FOUR_XX_OR_CLOSE,
            wire("CONNECT 127.0.0.1:5432 HTTP/1.1", admin, "", null)));

    boolean down = false;
    int index = 0;
    for (Case c : cases) {
      index++;
      RawHttp.Response r = raw.send(c.bytes(), false, 15_000, 300);
      String described =
          c.name()
              + ":\n"
              + RawHttp.truncate(new String(c.bytes(), StandardCharsets.ISO_8859_1), 600);
      malformedCheck(index, c.name(), c.expect(), c.bytes(), r, described, failures);
      RawHttp.Response live = raw.send(new RawHttp.Request("GET", "/health/live"), 5_000, 0);
      if (live.status != 200) {
        failures.add(
            index,
            "server-down-after",
            c.name(),
            described,
            live.toString(),
            "/health/live did not answer 200 within 5 s after: "
                + c.name()
                + "; the remaining cases were not sent");
        down = true;
        break;
      }
    }

    if (!down) {
      // Slowloris: 64 connections that stop in the middle of a request; the server still answers.
      slowloris(failures, "a partial request line", ascii("GET /health/live HT"));
      slowloris(
          failures, "partial headers", ascii("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: "));
      byte[] full = wire(line, producer, "", event);
      slowloris(
          failures,
          "a partial body sent with B's producer token",
          java.util.Arrays.copyOf(full, full.length - event.length + 7));
      RawHttp.Response live = raw.send(new RawHttp.Request("GET", "/health/live"), 10_000, 0);
      if (live.status != 200) {
        failures.add(
            -1,
            "server-down-after",
            "slowloris",
            "GET /health/live",
            live.toString(),
            "the server does not answer after the slow connections closed");
      }
    }
    Thread.sleep(1500); // anything the malformed requests published is sequenced by now
    compare("written", heads, heads(), failures);

    double seconds = (System.nanoTime() - t0) / 1e9;
    String header =
        String.format(
            Locale.ROOT,
            "%d malformed cases and 3 slow-connection attacks in %.1f s%n",
            cases.size(),
            seconds);
    System.out.println("TenantAttackTest malformed: " + header);
    if (!failures.isEmpty()) {
      String file = failures.writeAll(Path.of("target", "tenant-attack", "malformed.txt"), header);
      String report = failures.report(header + "all failures: " + file + "\n");
      System.out.println(report);
      throw new AssertionError(report);
    }
  }

  void malformedCheck(
      int index,
      String name,
      Expect expect,
      byte[] request,
      RawHttp.Response r,
      String described,
      AttackFailures failures) {
    String text = r.text();
    String requestText = new String(request, StandardCharsets.ISO_8859_1);
    for (String x : INTERNALS) {
      if (text.contains(x) && !requestText.contains(x)) {
        failures.add(
            index,
            "internals-exposed",
            name,
            described,
            r.toString(),
            "the answer names '" + x + "'");
        break;
      }
    }
    List<String> leaked = leaks(requestText + "\n" + decode(requestText), text);
    if (!leaked.isEmpty()) {
      failures.add(
          index,
          "leak",
          name,
          described,
          r.toString(),
          "the answer holds A's " + String.join("; ", leaked));
    }
    if (!r.answered()) {
      if (expect != Expect.FOUR_XX_OR_CLOSE || r.timedOut) {
        failures.add(
            index,
            r.timedOut ? "no-answer-timeout" : "no-answer",
            name,
            described,
            r.toString(),
            "expected a 4xx answer");
      }
      return;
    }
    if (r.status < 400 || r.status >= 500) {
      failures.add(
          index,
          "accepted-or-not-4xx",
          name,
          described,
          r.toString(),
          "expected a 4xx, got " + r.status);
      return;
    }
    String problem = problem(r);
    if (problem != null) {
      failures.add(index, "not-a-json-problem", name, described, r.toString(), problem);
    }
  }

  /** Opens 64 connections that send {@code partial} and then nothing; /health/live must answer. */
  void slowloris(AttackFailures failures, String what, byte[] partial) throws Exception {
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < 64; i++) {
        Socket s = new Socket(raw.host, raw.port);
        s.getOutputStream().write(partial);
        s.getOutputStream().flush();
        sockets.add(s);
      }
      Thread.sleep(500);
      long t0 = System.nanoTime();
      RawHttp.Response live = raw.send(new RawHttp.Request("GET", "/health/live"), 3_000, 0);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      if (live.status != 200) {
        failures.add(
            -1,
            "slowloris",
            "slowloris: " + what,
            "64 connections each sending "
                + RawHttp.truncate(new String(partial, StandardCharsets.ISO_8859_1), 200)
                + " and then nothing; then GET /health/live",
            live.toString(),
            "/health/live did not answer 200 within 3 s ("
                + ms
                + " ms) while 64 connections stalled in "
                + what);
      }
      // Tenant A's own call must get through too.
      RawHttp.Response aCall =
          raw.send(
              new RawHttp.Request("GET", "/v1/topics")
                  .header("Authorization", "Bearer " + aSecrets.get("ta-admin-" + rA)),
              3_000,
              0);
      if (aCall.status != 200) {
        failures.add(
            -1,
            "slowloris",
            "slowloris: " + what,
            "tenant A's GET /v1/topics while 64 connections stalled in " + what,
            aCall.toString(),
            "tenant A was not served within 3 s");
      }
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
    // Freed: the server answers again soon.
    RawHttp.Response again = raw.send(new RawHttp.Request("GET", "/health/live"), 10_000, 0);
    if (again.status != 200) {
      failures.add(
          -1,
          "server-down-after",
          "slowloris: " + what,
          "GET /health/live after closing the slow connections",
          again.toString(),
          "no answer after the slow connections closed");
    }
  }

  /** The heads and event counts of every topic, A's and B's. */
  Map<String, String> heads() {
    Map<String, String> out = new TreeMap<>();
    for (JsonNode t : star.get("/v1/topics").json().get("topics")) {
      String name = t.get("name").asText();
      JsonNode state = star.get(topicPath(name)).json();
      out.put(name, state.get("heads") + " events=" + state.get("events"));
    }
    return out;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  static byte[] bytes(int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }
}
