package io.boxline.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.boxline.DeadLetter;
import io.boxline.ValidationException;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Relay;
import io.boxline.relay.testing.OrderCheck;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RabbitMqSinkTest {
  private static final Duration WAIT = Duration.ofSeconds(90);
  private static String vhost;

  private RelayFixture fx;
  private Connection admin;
  private String exchange;
  private String queue;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  static void broker() throws IOException {
    RabbitBroker.ensureRunning();
    vhost = RabbitBroker.createVhost();
  }

  @AfterAll
  static void dropVhost() throws IOException {
    if (vhost != null) {
      RabbitBroker.deleteVhost(vhost);
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = RelayFixture.create("rabbit", 4);
    admin = RabbitBroker.factory(vhost).newConnection("boxline-test-admin");
    String id = UUID.randomUUID().toString().substring(0, 8);
    exchange = "relay-" + id;
    queue = "relay-q-" + id;
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      for (int i = closeables.size() - 1; i >= 0; i--) {
        closeables.get(i).close();
      }
      try (Connection c = RabbitBroker.factory(vhost).newConnection();
          Channel ch = c.createChannel()) {
        ch.queueDelete(queue);
        ch.exchangeDelete(exchange);
      }
      if (admin.isOpen()) {
        admin.close();
      }
    } finally {
      fx.close(); // drops the test's schema even when the broker side could not be cleaned
    }
  }

  /** A durable exchange of {@code type} and a durable queue bound with each of {@code keys}. */
  private void declare(String type, String... keys) throws Exception {
    try (Channel ch = admin.createChannel()) {
      ch.exchangeDeclare(exchange, type, true);
      ch.queueDeclare(queue, true, false, false, null);
      for (String k : keys) {
        ch.queueBind(queue, exchange, k);
      }
    }
  }

  private void bind(String key) throws Exception {
    try (Channel ch = admin.createChannel()) {
      ch.queueBind(queue, exchange, key);
    }
  }

  private static String header(AMQP.BasicProperties p, String name) {
    Object v = p.getHeaders() == null ? null : p.getHeaders().get(name);
    return v == null ? null : v.toString();
  }

  /** Consumes the queue on its own connection, handing every message over. */
  private void consume(BiConsumer<AMQP.BasicProperties, byte[]> handler) throws Exception {
    Connection c = RabbitBroker.factory(vhost).newConnection("boxline-test-consumer");
    Channel ch = c.createChannel();
    ch.basicQos(500);
    ch.basicConsume(
        queue,
        false,
        new DefaultConsumer(ch) {
          @Override
          public void handleDelivery(
              String tag, Envelope env, AMQP.BasicProperties props, byte[] body)
              throws IOException {
            handler.accept(props, body);
            getChannel().basicAck(env.getDeliveryTag(), false);
          }
        });
    closeables.add(
        () -> {
          if (c.isOpen()) {
            c.close();
          }
        });
  }

  private static void record(OrderCheck check, AMQP.BasicProperties p) {
    check.record(
        header(p, "cloudEvents_id"),
        header(p, "cloudEvents_subject"),
        Long.parseLong(header(p, "cloudEvents_boxlinesequence")));
  }

  private RabbitMqSink.Builder sink() {
    return RabbitMqSink.builder().uri(RabbitBroker.uri(vhost)).exchange(e -> exchange);
  }

  private Relay start(RabbitMqSink sink) {
    Relay relay =
        Relay.builder(fx.boxline())
            .subscription(RelayFixture.SUBSCRIPTION)
            .sink(sink)
            .batchSize(200)
            .retryBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
            .start();
    closeables.add(relay);
    return relay;
  }

  @Test
  void relaysTenThousandEventsInOrderPerKeyWithConfirms() throws Exception {
    declare("topic", "#");
    OrderCheck check = new OrderCheck();
    AtomicInteger wrong = new AtomicInteger();
    AtomicInteger traced = new AtomicInteger();
    consume(
        (p, body) -> {
          if (!"application/json".equals(p.getContentType())
              || p.getDeliveryMode() != 2
              || !p.getMessageId().equals(header(p, "cloudEvents_id"))
              || !RelayFixture.TYPE.equals(header(p, "cloudEvents_type"))
              || !"1.0".equals(header(p, "cloudEvents_specversion"))
              || !new String(body, StandardCharsets.UTF_8)
                  .contains("\"key\":\"" + header(p, "cloudEvents_subject") + "\"")) {
            wrong.incrementAndGet();
          }
          if (header(p, "cloudEvents_traceparent") != null) {
            traced.incrementAndGet();
          }
          record(check, p);
        });
    List<UUID> ids = fx.publish(10_000, 100, 500);
    Relay relay = start(sink().build());
    Await.until(WAIT, "10,000 messages consumed", check::distinct, n -> n >= 10_000);
    Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(check.duplicates()).isZero();
    assertThat(check.keys()).isEqualTo(100);
    assertThat(wrong).hasValue(0);
    assertThat(traced).hasValue(1_000);
    assertThat(relay.deadLetterCount()).isZero();
  }

  @Test
  void aBrokerOutageStallsTheRelayAndNothingIsLost() throws Exception {
    declare("topic", "#");
    List<UUID> first = fx.publish(0, 2_000, 100, 500);
    Relay relay = start(sink().confirmTimeout(Duration.ofSeconds(5)).build());
    Await.until(WAIT, "relay under way", relay::sentCount, n -> n >= 500);

    admin.abort();
    RabbitBroker.stopApp();
    try {
      List<UUID> second = fx.publish(2_000, 2_000, 100, 500);
      Await.until(WAIT, "the relay sees the outage and retries", relay::retryCount, n -> n >= 3);
      assertThat(relay.isStalled()).isTrue();
      assertThat(fx.backlog()).as("cursor waits for RabbitMQ").isGreaterThan(0);
      assertThat(fx.deadLetters()).isEmpty();

      RabbitBroker.startApp(vhost);
      admin = RabbitBroker.factory(vhost).newConnection("boxline-test-admin");
      OrderCheck check = new OrderCheck();
      consume((p, body) -> record(check, p));
      Await.until(WAIT, "all 4,000 after the outage", check::distinct, n -> n >= 4_000);
      Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
      assertThat(check.missing(first)).isEmpty();
      assertThat(check.missing(second)).isEmpty();
      assertThat(check.violations()).isEmpty();
      // at least once: only batches unconfirmed at the outage may be published twice
      assertThat(check.duplicates()).isLessThanOrEqualTo(4 * 200 * 2);
      assertThat(fx.deadLetters()).isEmpty();
    } finally {
      if (!RabbitBroker.reachable(vhost)) {
        RabbitBroker.startApp(vhost);
      }
    }
  }

  @Test
  void unroutableMessagesWaitForABindingInsteadOfBeingDropped() throws Exception {
    List<String> keys = new ArrayList<>();
    for (int k = 0; k < 9; k++) {
      keys.add(RelayFixture.key(k, 10));
    }
    declare("direct", keys.toArray(new String[0])); // key-009 has no binding yet
    OrderCheck check = new OrderCheck();
    consume((p, body) -> record(check, p));
    List<UUID> ids = fx.publish(500, 10, 100);
    Relay relay = start(sink().build());
    Await.until(WAIT, "unroutable key-009 retried", relay::retryCount, n -> n >= 3);
    assertThat(relay.isStalled()).isTrue();
    assertThat(check.distinct()).isLessThan(500);

    bind("key-009");
    Await.until(WAIT, "all 500 once key-009 is bound", check::distinct, n -> n >= 500);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(fx.deadLetters()).isEmpty();
  }

  @Test
  void eventsTheRoutingFunctionCannotMapBecomeDeadLetters() throws Exception {
    declare("topic", "#");
    OrderCheck check = new OrderCheck();
    consume((p, body) -> record(check, p));
    List<UUID> ids = fx.publish(300, 10, 100);
    Relay relay =
        start(
            sink()
                .routingKey(
                    e -> {
                      if (new String(e.payload(), StandardCharsets.UTF_8).contains("\"n\":77}")) {
                        throw new IllegalArgumentException("no route for order 77");
                      }
                      return e.key();
                    })
                .build());
    Await.until(WAIT, "299 delivered", check::distinct, n -> n >= 299);
    Await.until(WAIT, "one dead letter", () -> fx.deadLetters().size(), n -> n >= 1);
    List<DeadLetter> dead = fx.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).event().id()).isEqualTo(ids.get(77));
    assertThat(dead.get(0).lastError()).contains("no route for order 77");
    assertThat(check.missing(ids)).containsExactly(ids.get(77));
    assertThat(check.violations()).isEmpty();
    assertThat(relay.deadLetterCount()).isEqualTo(1);
  }

  @Test
  void structuredModeSendsCloudEventsJsonDocuments() throws Exception {
    declare("topic", "#");
    OrderCheck check = new OrderCheck();
    AtomicInteger wrong = new AtomicInteger();
    ObjectMapper json = new ObjectMapper();
    consume(
        (p, body) -> {
          if (!CloudEventsMapping.JSON_CONTENT_TYPE.equals(p.getContentType())
              || (p.getHeaders() != null && !p.getHeaders().isEmpty())) {
            wrong.incrementAndGet();
          }
          try {
            JsonNode doc = json.readTree(body);
            check.record(
                doc.get("id").asText(),
                doc.get("subject").asText(),
                Long.parseLong(doc.get("boxlinesequence").asText()));
          } catch (IOException e) {
            wrong.incrementAndGet();
          }
        });
    List<UUID> ids = fx.publish(100, 10, 100);
    start(
        sink()
            .cloudEvents(
                CloudEventsMapping.builder().mode(CloudEventsMapping.Mode.STRUCTURED).build())
            .build());
    Await.until(WAIT, "100 documents", check::distinct, n -> n >= 100);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(wrong).hasValue(0);
  }

  @Test
  void theLegacyHeaderPrefixIsSelectable() throws Exception {
    declare("topic", "#");
    UUID id = UUID.randomUUID();
    try (RabbitMqSink sink = sink().headerPrefix(RabbitMqSink.LEGACY_HEADER_PREFIX).build();
        Channel ch = admin.createChannel()) {
      sink.send(List.of(eventFor(id)));
      Await.until(WAIT, "the message in the queue", () -> messageCount(ch, queue) >= 1);
      com.rabbitmq.client.GetResponse r = ch.basicGet(queue, true);
      assertThat(header(r.getProps(), "cloudEvents:id")).isEqualTo(id.toString());
      assertThat(header(r.getProps(), "cloudEvents:subject")).isEqualTo("key-legacy");
      assertThat(header(r.getProps(), "cloudEvents_id")).isNull();
      assertThat(r.getProps().getMessageId()).isEqualTo(id.toString());
    }
  }

  private static long messageCount(Channel ch, String q) {
    try {
      return ch.messageCount(q);
    } catch (IOException e) {
      return -1;
    }
  }

  private io.boxline.Event eventFor(UUID id) {
    return new io.boxline.Event(
        id,
        fx.topic(),
        0,
        1,
        "key-legacy",
        RelayFixture.TYPE,
        null,
        "application/json",
        RelayFixture.payload("key-legacy", 1),
        Map.of(),
        java.time.Instant.now(),
        null);
  }

  @Test
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> RabbitMqSink.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "RabbitMqSink.builder() needs a broker: .uri(\"amqp://user:password@host:5672/vhost\")"
                + " or .connectionFactory(factory)");
    assertThatThrownBy(() -> RabbitMqSink.builder().uri("ftp://x:secret@host/").build())
        .isInstanceOf(ValidationException.class)
        .hasMessageStartingWith("uri is not an AMQP URI (amqp://user:password@host:port/vhost): ")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> RabbitMqSink.builder().headerPrefix("ce_"))
        .hasMessage("headerPrefix must be \"cloudEvents_\" or \"cloudEvents:\", got \"ce_\"");
    assertThatThrownBy(
            () ->
                RabbitMqSink.builder()
                    .uri("amqp://localhost")
                    .confirmTimeout(Duration.ofMillis(10))
                    .build())
        .hasMessage("confirmTimeout must be between PT0.1S and PT1H, got PT0.01S");
  }
}
