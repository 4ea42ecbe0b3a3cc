package io.boxline.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.FencedException;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionsFencedException;
import io.boxline.PublishResult;
import io.boxline.RemoteConsumers.Batch;
import io.boxline.RemoteConsumers.Delivery;
import io.boxline.RemoteConsumers.Outcome;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.boxline.server.BoxlineServer;
import io.boxline.server.ServerConfig;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The client against the real server, started in this JVM on PostgreSQL (127.0.0.1:5432, user
 * postgres, trust auth) in a schema of its own, dropped at the end: one case per behaviour, each on
 * topics and subscriptions of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class BoxlineClientTest {
  private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  private static final String ADMIN = "client-test-admin-token";
  private static final Duration WAIT = Duration.ofSeconds(20);

  private String schema;
  private BoxlineServer server;
  private BoxlineClient client;

  @BeforeAll
  void start() {
    schema = "bxclient_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "")) {
      c.isValid(1);
    } catch (SQLException e) {
      fail(
          "PostgreSQL must run on 127.0.0.1:5432 with trust auth for these tests ("
              + e.getMessage()
              + ")");
    }
    String yaml =
        String.join(
            "\n",
            "http: {port: 0, shutdownTimeout: 2s}",
            "database: {url: '" + PG_URL + "', user: postgres, schema: " + schema + "}",
            "tokens:",
            "  - {name: client-admin, secret: " + ADMIN + ", role: admin, namespaces: ['*']}",
            "");
    server = BoxlineServer.start(ServerConfig.parse(yaml, "test", Map.of()));
    client = BoxlineClient.builder().url(server.baseUrl() + "/").token(ADMIN).build();
  }

  @AfterAll
  void stop() throws SQLException {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "");
        Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  /** Polls {@code get} until it gives a value that is not null, within {@link #WAIT}. */
  private static <T> T await(String what, Supplier<T> get) {
    long end = System.nanoTime() + WAIT.toNanos();
    while (true) {
      T value = get.get();
      if (value != null) {
        return value;
      }
      if (System.nanoTime() > end) {
        return fail("timed out after " + WAIT + " waiting for " + what);
      }
      try {
        Thread.sleep(20); // the poll's interval, not a wait for something to happen
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return fail("interrupted");
      }
    }
  }

  private TopicName topic(String name, int partitions) {
    TopicName t = TopicName.parse("acme/client/" + name);
    client.admin().createTopic(t, partitions, Sequencing.SEQUENCER);
    return t;
  }

  private String subscription(String name, TopicName topic) {
    client
        .admin()
        .createSubscription(SubscriptionSpec.of(name, topic).startAt(StartPosition.earliest()));
    return name;
  }

  private static OutgoingEvent event(TopicName t, String key, String json) {
    return OutgoingEvent.builder(t)
        .key(key)
        .type("Placed")
        .contentType("application/json")
        .payload(json.getBytes(StandardCharsets.UTF_8))
        .build();
  }

  /** Fetches as {@code member} (long polls of 200 ms) until {@code n} events came. */
  private List<Delivery> fetch(String sub, String member, int n) {
    List<Delivery> got = new ArrayList<>();
    return await(
        n + " events for " + member,
        () -> {
          Batch b = client.members().fetch(sub, member, 1, 100, Duration.ofMillis(200));
          got.addAll(b.deliveries());
          return got.size() >= n ? got : null;
        });
  }

  @Test
  void createsListsAndDescribesTopicsAndSubscriptions() {
    TopicName t = topic("described", 3);
    String sub = subscription("described-sub", t);

    TopicInfo info = client.admin().topic(t).orElseThrow();
    assertThat(info.partitions()).isEqualTo(3);
    assertThat(info.sequencing()).isEqualTo(Sequencing.SEQUENCER);
    assertThat(client.admin().topics()).extracting(TopicInfo::name).contains(t);
    assertThat(client.admin().topicState(t).heads()).containsExactly(0L, 0L, 0L);
    SubscriptionInfo s = client.admin().subscription(sub).orElseThrow();
    assertThat(s.topics()).containsExactly(t);
    assertThat(client.admin().subscriptions()).extracting(SubscriptionInfo::name).contains(sub);
    assertThat(client.admin().topic(TopicName.parse("acme/client/absent"))).isEmpty();
  }

  @Test
  void publishesOneEventAndABatchInOneRequest() {
    TopicName t = topic("published", 2);
    OutgoingEvent single = event(t, "k1", "{\"n\":1}");
    PublishResult one = client.publisher().publish(single);
    assertThat(one.eventId()).isEqualTo(single.id());
    assertThat(one.duplicate()).isFalse();

    OutgoingEvent first = event(t, "k2", "{\"n\":2}");
    List<PublishResult> batch =
        client.publisher().publishAll(List.of(first, event(t, "k2", "{\"n\":3}")));
    assertThat(batch).hasSize(2);
    assertThat(batch.get(0).eventId()).isEqualTo(first.id());
    assertThat(batch.get(1).partition()).isEqualTo(batch.get(0).partition()); // one key
    assertThat(await("3 events sequenced", () -> sum(t) == 3 ? true : null)).isTrue();
  }

  private long sum(TopicName t) {
    return client.admin().topicState(t).heads().stream().mapToLong(Long::longValue).sum();
  }

  @Test
  void tailsATopicFromTheEarliestWithTheBytesAsPublished() {
    TopicName t = topic("tailed", 1);
    String text = "{\"total\": 12.50, \"items\": [1, 2]}"; // spaces kept: the stored bytes
    client
        .publisher()
        .publishAll(List.of(event(t, "a", text), event(t, "b", "{}"), event(t, "a", "[]")));

    List<Event> events =
        await(
            "3 events in the log",
            () -> {
              List<Event> e = client.admin().events(EventQuery.of(t, 0));
              return e.size() == 3 ? e : null;
            });
    assertThat(events).extracting(Event::sequence).containsExactly(1L, 2L, 3L);
    assertThat(events).extracting(Event::key).containsExactly("a", "b", "a");
    assertThat(new String(events.get(0).payload(), StandardCharsets.UTF_8)).isEqualTo(text);
    assertThat(client.admin().events(EventQuery.of(t, 0).after(2))).hasSize(1);
  }

  @Test
  void aMemberFetchesSettlesAndLeaves() {
    TopicName t = topic("consumed", 1);
    String sub = subscription("consumed-sub", t);
    client.publisher().publishAll(List.of(event(t, "x", "{}"), event(t, "y", "{}")));

    List<Delivery> got = fetch(sub, "worker-1", 2);
    assertThat(got).extracting(d -> d.event().key()).containsExactly("x", "y");
    assertThat(got).extracting(Delivery::attempt).containsOnly(1);
    int settled =
        client
            .members()
            .settle(sub, "worker-1", got.stream().map(d -> Settlement.done(d.ackId())).toList());
    assertThat(settled).isEqualTo(2);
    assertThat(client.admin().lag(sub))
        .singleElement()
        .satisfies(l -> assertThat(l.backlog()).isZero());
    assertThat(client.admin().group(sub).members()).hasSize(1);
    client.members().leave(sub, "worker-1");
    assertThat(client.admin().group(sub).members()).isEmpty();
  }

  @Test
  void deadLettersAreListedAndCounted() {
    TopicName t = topic("dead", 1);
    String sub = subscription("dead-sub", t);
    client.publisher().publish(event(t, "bad", "{}"));
    Delivery d = fetch(sub, "worker-d", 1).get(0);
    client
        .members()
        .settle(sub, "worker-d", List.of(new Settlement(d.ackId(), Outcome.DEAD, null, "no way")));

    List<DeadLetter> dead = client.deadLetters().list(DeadLetterQuery.of(sub));
    assertThat(dead).singleElement().satisfies(l -> assertThat(l.lastError()).isEqualTo("no way"));
    assertThat(dead.get(0).event().id()).isEqualTo(d.event().id());
    assertThat(client.deadLetters().count(DeadLetterQuery.of(sub))).isEqualTo(1);
  }

  @Test
  void aStaleMembersSettleIsFenced() {
    TopicName t = topic("fenced", 1);
    String sub = subscription("fenced-sub", t);
    client.publisher().publish(event(t, "k", "{}"));
    Delivery d = fetch(sub, "worker-f", 1).get(0);
    client.members().leave(sub, "worker-f");
    Delivery again = fetch(sub, "worker-g", 1).get(0); // the partition's new owner, a new epoch
    assertThat(again.event().id()).isEqualTo(d.event().id());

    PartitionsFencedException e =
        catchThrowableOfType(
            () -> client.members().settle(sub, "worker-f", List.of(Settlement.done(d.ackId()))),
            PartitionsFencedException.class);
    assertThat(e).isInstanceOf(FencedException.class).hasMessageContaining("fetch again");
    assertThat(e.settled()).isZero();
    assertThat(e.refused()).containsExactly(new TopicPartition(t, 0));
    assertThat(ServerException.of(e).orElseThrow().status()).isEqualTo(409);
  }

  @Test
  void notFoundIsTheCoreExceptionWithTheServersMessage() {
    NotFoundException e =
        catchThrowableOfType(
            () -> client.admin().topicState(TopicName.parse("acme/client/nowhere")),
            NotFoundException.class);
    assertThat(e).hasMessageContaining("acme/client/nowhere");
    ServerException details = ServerException.of(e).orElseThrow();
    assertThat(details.status()).isEqualTo(404);
    assertThat(details.errorCode()).isEqualTo("not_found");
    assertThat(details.serverUrl()).isEqualTo(server.baseUrl());
  }

  @Test
  void aBadRequestIsAValidationException() {
    TopicName t = topic("sized", 1);
    ValidationException e =
        catchThrowableOfType(
            () -> client.admin().createTopic(t, 2, Sequencing.SEQUENCER),
            ValidationException.class);
    assertThat(e).hasMessageContaining(t.toString());
    assertThat(ServerException.of(e).orElseThrow().errorCode()).isEqualTo("bad_request");
  }

  @Test
  void aBadTokenIsUnauthorizedAndNeverPrinted() {
    String secret = "not-a-token-of-this-server";
    try (BoxlineClient wrong =
        BoxlineClient.builder().url(server.baseUrl()).token(secret).build()) {
      UnauthorizedException e = catchThrowableOfType(wrong::whoami, UnauthorizedException.class);
      assertThat(e.status()).isEqualTo(401);
      assertThat(e.tokenSent()).isTrue();
      assertThat(e).hasMessageContaining("refused the token").hasMessageNotContaining(secret);
    }
  }

  @Test
  void aClosedPortCannotConnectNamingTheUrl() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String down = "http://127.0.0.1:" + port;
    try (BoxlineClient c = BoxlineClient.builder().url(down).token(ADMIN).build()) {
      CannotConnectException e =
          catchThrowableOfType(() -> c.admin().topics(), CannotConnectException.class);
      assertThat(e).hasMessageStartingWith("cannot connect to " + down);
      assertThat(e.status()).isZero();
      assertThat(e.serverUrl()).isEqualTo(down);
    }
  }

  @Test
  void everyRequestSaysItsApiVersionAndClientAndTheCallerIsKnown() throws Exception {
    assertThat(client.whoami()).isEqualTo(new BoxlineClient.Caller("client-admin", "admin"));

    Map<String, String> seen = new ConcurrentHashMap<>();
    HttpServer fake = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    fake.createContext(
        "/",
        x -> {
          x.getRequestHeaders().forEach((k, v) -> seen.put(k.toLowerCase(), v.get(0)));
          byte[] body = "{\"name\":\"n\",\"role\":\"viewer\"}".getBytes(StandardCharsets.UTF_8);
          x.sendResponseHeaders(200, body.length);
          x.getResponseBody().write(body);
          x.close();
        });
    fake.start();
    try (BoxlineClient c =
        BoxlineClient.builder()
            .url("http://127.0.0.1:" + fake.getAddress().getPort())
            .token("t0k")
            .build()) {
      c.whoami();
    } finally {
      fake.stop(0);
    }
    assertThat(seen)
        .containsEntry("boxline-api", "1.0")
        .containsEntry("authorization", "Bearer t0k");
    assertThat(seen.get("user-agent")).matches("boxline-java/\\d\\S*");
  }

  @Test
  void closingTwiceIsSafeAndACallAfterItIsRefused() {
    BoxlineClient c = BoxlineClient.builder().url(server.baseUrl()).token(ADMIN).build();
    c.close();
    c.close();
    assertThatThrownBy(() -> c.admin().topics())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }
}
