package io.boxline.server;

import static io.boxline.server.Api.enc;
import static io.boxline.server.MalformedRequests.ascii;
import static io.boxline.server.TwoTenants.expect;
import static io.boxline.server.TwoTenants.subPath;
import static io.boxline.server.TwoTenants.topicPath;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.server.MalformedRequests.Case;
import io.boxline.server.TwoTenants.Who;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
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
 * <p>The parts: {@link TwoTenants} sets up the tenants, {@link AttackMarkers} holds A's names,
 * {@link AttackRequests} generates the requests (with {@link AttackNames}, {@link AttackBodies},
 * {@link OneFaultBodies} and {@link AttackAcks}, all drawing from one {@link AttackDice}), {@link
 * AttackChecks} judges the answers, {@link AttackTally} counts them, {@link TenantSnapshots}
 * compares A's state, and {@link MalformedRequests} and {@link SlowConnections} are the second
 * test's.
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

  final AttackDice dice = new AttackDice(new Random(SEED));
  final TwoTenants tenants = new TwoTenants(dice);
  AttackMarkers markers;
  AttackRequests requests;
  AttackChecks checks;
  TenantSnapshots snapshots;

  @BeforeAll
  void start() throws Exception {
    System.out.println(
        "TenantAttackTest seed: "
            + SEED
            + " (replay with -Dboxline.attack.seed="
            + SEED
            + "), requests: "
            + REQUESTS);
    tenants.start();
    markers = new AttackMarkers(tenants);
    requests = new AttackRequests(new AttackNames(dice, tenants));
    checks = new AttackChecks(dice, tenants, markers);
    snapshots = new TenantSnapshots(tenants);
  }

  @AfterAll
  void stop() throws Exception {
    tenants.close();
  }

  @Test
  @Order(1)
  void tenantBCannotSeeOrTouchTenantA() throws Exception {
    long t0 = System.nanoTime();
    requests.readRoutes(tenants.star.as(null));
    assertThat(requests.routes).as("routes from /openapi.json").hasSizeGreaterThan(30);
    Map<String, String> before = snapshots.apiSnapshot();
    Map<String, String> dbBefore = snapshots.dbSnapshot();
    assertThat(before.keySet()).as("A's state as seen by the * token").isNotEmpty();

    AttackFailures failures = new AttackFailures("TenantAttackTest (seed " + SEED + ")");
    AttackTally tally = new AttackTally(LOG);
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
      Attack attack = requests.generate(i);
      long g1 = System.nanoTime();
      RawHttp.Response resp = tenants.raw.send(attack.request(), 5_000, 300);
      long g2 = System.nanoTime();
      tally.phase[0] += g1 - g0;
      tally.phase[1] += g2 - g1;
      tally.sent(i, attack, resp);
      checks.check(attack, resp, failures);
      checks.harvest(attack, resp);
      tally.phase[2] += System.nanoTime() - g2;
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
      boolean aRealInPath = attack.params().stream().anyMatch(p -> p.aReal() != null);
      if (aRealInPath && dice.chance(30)) {
        tally.twins++;
        tally.sent++;
        checks.oracle(attack, resp, failures);
      }
    }
    // Whatever B managed to publish into A's topics is sequenced by now.
    Thread.sleep(1500);
    RawHttp.Response live = tenants.raw.send(new RawHttp.Request("GET", "/health/live"), 5_000, 0);
    if (live.status != 200) {
      failures.add(-1, "server-down", "GET /health/live", "GET /health/live", live.toString(), "");
    }
    Map<String, String> after = snapshots.apiSnapshot();
    Map<String, String> dbAfter = snapshots.dbSnapshot();
    TenantSnapshots.compare("a-state-changed (API, * token)", before, after, failures);
    TenantSnapshots.compare("a-state-changed (database rows)", dbBefore, dbAfter, failures);
    // The snapshots are not blind: A's own change (retention, a member leaving) shows in both.
    expect(
        tenants
            .a("admin")
            .put(topicPath(tenants.aTopics.get(0)) + "/retention", "{\"maxAge\":\"3650d\"}"),
        200,
        "A changes its own retention");
    expect(
        tenants
            .a("consumer")
            .delete(subPath(tenants.aSubs.get(1)) + "/members/" + enc(tenants.aMembers.get(2))),
        200,
        "A's member leaves");
    seesOwnChange(
        List.of(
            "topic " + tenants.aTopics.get(0), "subscription " + tenants.aSubs.get(1) + " group"),
        after,
        snapshots.apiSnapshot(),
        "the API snapshot does not see A's own change of ",
        failures);
    seesOwnChange(
        List.of("table topic", "table member"),
        dbAfter,
        snapshots.dbSnapshot(),
        "the database snapshot does not see A's own change in ",
        failures);
    int dbRows = 0;
    for (String rows : dbBefore.values()) {
      dbRows += rows.isEmpty() ? 0 : rows.split("\n").length;
    }

    double seconds = (System.nanoTime() - t0) / 1e9;
    String header =
        String.format(
            Locale.ROOT,
            "seed %d (replay: -Dboxline.attack.seed=%d), %d requests sent (%d oracle twins) in %.1f s%s"
                + "%nstatuses: %s%nmost time:%s%nmarkers of A: %d; adopted by B (stored under B's own names): %s"
                + "%nA's state compared: %d API reads, %d database rows in %d tables%n",
            SEED,
            SEED,
            tally.sent,
            tally.twins,
            seconds,
            stoppedEarly,
            tally.statuses,
            tally.slowest(),
            markers.size(),
            markers.adopted,
            before.size(),
            dbRows,
            dbBefore.size());
    System.out.println("TenantAttackTest attack: " + header);
    tally.writeLog(SEED);
    tally.printPhases();
    failures.throwIfAny(Path.of("target", "tenant-attack", "attack-" + SEED + ".txt"), header);
  }

  /** A failure for each of {@code keys} that A's own change left the same in the snapshot. */
  static void seesOwnChange(
      List<String> keys,
      Map<String, String> before,
      Map<String, String> changed,
      String blind,
      AttackFailures failures) {
    for (String k : keys) {
      if (Objects.equals(changed.get(k), before.get(k))) {
        failures.add(
            -1, "snapshot-blind", k, "(A's own change)", String.valueOf(before.get(k)), blind + k);
      }
    }
  }

  @Test
  @Order(2)
  void malformedHttpGetsAClear4xxAndWritesNothing() throws Exception {
    long t0 = System.nanoTime();
    AttackFailures failures = new AttackFailures("TenantAttackTest malformed input");
    MalformedRequests malformed = new MalformedRequests(tenants, "tb/malformed-" + tenants.rB);
    String topic = malformed.topic;
    expect(
        tenants.b(Who.ADMIN).post("/v1/topics", "{\"name\":\"" + topic + "\",\"partitions\":2}"),
        201,
        "B's topic for malformed input");
    RawHttp raw = tenants.raw;
    // The controls: the same requests, well formed, are taken. Each malformed one below differs
    // from one of them in one place only, so a refusal comes from that place.
    RawHttp.Response control = raw.send(malformed.publishControl(), false, 10_000, 0);
    assertThat(control.status).as("the well-formed publish: " + control).isEqualTo(200);
    RawHttp.Response tailControl = raw.send(malformed.tailControl(), false, 10_000, 300);
    assertThat(tailControl.status).as("the well-formed tail: " + tailControl).isEqualTo(200);
    RawHttp.Response fetchControl = raw.send(malformed.fetchControl(), false, 10_000, 0);
    assertThat(fetchControl.status).as("the well-formed fetch: " + fetchControl).isEqualTo(200);
    ServerApiTest.await(
        "the control event sequenced",
        () -> tenants.star.get(topicPath(topic)).json().get("events").asInt() == 1);
    Map<String, String> heads = snapshots.heads();

    List<Case> cases = malformed.cases();
    boolean down = false;
    int index = 0;
    for (Case c : cases) {
      index++;
      RawHttp.Response r = raw.send(c.bytes(), false, 15_000, 300);
      String described =
          c.name()
              + ":\n"
              + RawHttp.truncate(new String(c.bytes(), StandardCharsets.ISO_8859_1), 600);
      checks.malformedCheck(index, c.name(), c.expect(), c.bytes(), r, described, failures);
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
      SlowConnections slow =
          new SlowConnections(raw, tenants.aSecrets.get("ta-admin-" + tenants.rA));
      slow.slowloris(failures, "a partial request line", ascii("GET /health/live HT"));
      slow.slowloris(
          failures, "partial headers", ascii("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: "));
      slow.slowloris(
          failures, "a partial body sent with B's producer token", malformed.partialPublish());
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
    TenantSnapshots.compare("written", heads, snapshots.heads(), failures);

    double seconds = (System.nanoTime() - t0) / 1e9;
    String header =
        String.format(
            Locale.ROOT,
            "%d malformed cases and 3 slow-connection attacks in %.1f s%n",
            cases.size(),
            seconds);
    System.out.println("TenantAttackTest malformed: " + header);
    failures.throwIfAny(Path.of("target", "tenant-attack", "malformed.txt"), header);
  }
}
