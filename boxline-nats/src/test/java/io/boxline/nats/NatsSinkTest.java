package io.boxline.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.DeadLetter;
import io.boxline.ValidationException;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Relay;
import io.boxline.relay.testing.OrderCheck;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.testkit.Await;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NatsSinkTest {
  private static final Duration WAIT = Duration.ofSeconds(90);

  private RelayFixture fx;
  private Connection nats;
  private String stream;
  private String prefix;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  static void server() {
    NatsServer.ensureRunning();
  }

  @BeforeEach
  void setUp() throws Exception {
    fx = RelayFixture.create("nats", 4);
    String id = UUID.randomUUID().toString().substring(0, 8);
    stream = "BOXTEST_" + id.toUpperCase();
    prefix = "boxtest." + id + ".";
    nats = Nats.connect(NatsServer.options().build());
    nats.jetStreamManagement()
        .addStream(
            StreamConfiguration.builder()
                .name(stream)
                .subjects(prefix + ">")
                .storageType(StorageType.File)
                .duplicateWindow(Duration.ofMinutes(2))
                .build());
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    try {
      nats.jetStreamManagement().deleteStream(stream);
    } finally {
      nats.close();
      fx.close();
    }
  }

  private long streamCount() {
    try {
      return nats.jetStreamManagement().getStreamInfo(stream).getStreamState().getMsgCount();
    } catch (Exception e) {
      return -1;
    }
  }

  /** Reads the whole stream in order (an ordered push consumer), handing every message over. */
  private void consume(Consumer<Message> handler) throws Exception {
    Dispatcher d = nats.createDispatcher();
    nats.jetStream()
        .subscribe(
            prefix + ">",
            d,
            handler::accept,
            false,
            PushSubscribeOptions.builder().stream(stream).ordered(true).build());
    closeables.add(() -> nats.closeDispatcher(d));
  }

  private static void record(OrderCheck check, Message m) {
    check.record(
        m.getHeaders().getFirst("ce-id"),
        m.getHeaders().getFirst("ce-subject"),
        Long.parseLong(m.getHeaders().getFirst("ce-boxlinesequence")));
  }

  private NatsSink.Builder sink() {
    return NatsSink.builder()
        .servers(NatsServer.URL)
        .subject(e -> prefix + NatsSink.defaultSubject(e))
        .expectedStream(stream);
  }

  private Relay start(NatsSink sink) {
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
  void relaysTenThousandEventsInOrderPerKeyStoredOnce() throws Exception {
    OrderCheck check = new OrderCheck();
    AtomicInteger wrong = new AtomicInteger();
    AtomicInteger traced = new AtomicInteger();
    consume(
        m -> {
          var h = m.getHeaders();
          if (!h.getFirst("ce-id").equals(h.getFirst("Nats-Msg-Id"))
              || !"1.0".equals(h.getFirst("ce-specversion"))
              || !RelayFixture.TYPE.equals(h.getFirst("ce-type"))
              || !"application/json".equals(h.getFirst("content-type"))
              || !m.getSubject().equals(prefix + "relay.test.events")
              || !new String(m.getData(), StandardCharsets.UTF_8)
                  .contains("\"key\":\"" + h.getFirst("ce-subject") + "\"")) {
            wrong.incrementAndGet();
          }
          if (h.getFirst("ce-traceparent") != null) {
            traced.incrementAndGet();
          }
          record(check, m);
        });
    List<UUID> ids = fx.publish(10_000, 100, 500);
    Relay relay = start(sink().build());
    Await.until(WAIT, "10,000 messages consumed", check::distinct, n -> n >= 10_000);
    Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
    assertThat(streamCount()).isEqualTo(10_000);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(check.duplicates()).isZero();
    assertThat(check.keys()).isEqualTo(100);
    assertThat(wrong).hasValue(0);
    assertThat(traced).hasValue(1_000);
    assertThat(relay.deadLetterCount()).isZero();
  }

  @Test
  void aServerCrashStallsTheRelayAndTheStreamHoldsEveryEventOnce() throws Exception {
    List<UUID> first = fx.publish(0, 2_000, 100, 500);
    NatsSink sink = sink().ackTimeout(Duration.ofSeconds(2)).build();
    Relay relay = start(sink);
    Await.until(WAIT, "relay under way", relay::sentCount, n -> n >= 500);

    NatsServer.kill();
    List<UUID> second;
    try {
      second = fx.publish(2_000, 2_000, 100, 500);
      Await.until(WAIT, "the relay sees the outage and retries", relay::retryCount, n -> n >= 3);
      assertThat(relay.isStalled()).isTrue();
      assertThat(fx.backlog()).as("cursor waits for NATS").isGreaterThan(0);
    } finally {
      NatsServer.restart();
    }
    Await.until(WAIT, "4,000 messages in the stream", this::streamCount, n -> n >= 4_000);
    Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
    assertThat(streamCount()).as("Nats-Msg-Id de-duplicates the resends").isEqualTo(4_000);

    OrderCheck check = new OrderCheck();
    consume(m -> record(check, m));
    Await.until(WAIT, "4,000 messages consumed", check::distinct, n -> n >= 4_000);
    assertThat(check.missing(first)).isEmpty();
    assertThat(check.missing(second)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(check.duplicates()).isZero();
    assertThat(fx.deadLetters()).isEmpty();
  }

  @Test
  void resendsAreDroppedByTheStreamThanksToTheMessageId() {
    NatsSink sink = sink().build();
    closeables.add(sink);
    List<UUID> ids = fx.publish(50, 5, 50);
    List<io.boxline.Event> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    fx.boxline()
        .consumer(RelayFixture.SUBSCRIPTION)
        .batchHandler(events::addAll)
        .concurrency(1)
        .start();
    Await.until(WAIT, "50 events read", events::size, n -> n >= 50);
    List<io.boxline.Event> batch = List.copyOf(events);
    sink.send(batch);
    assertThat(sink.duplicateAcks()).isZero();
    sink.send(batch); // a relay resend after a lost acknowledgement
    assertThat(streamCount()).isEqualTo(50);
    assertThat(sink.duplicateAcks()).isEqualTo(50);
    assertThat(batch).extracting(io.boxline.Event::id).containsExactlyInAnyOrderElementsOf(ids);
  }

  @Test
  void messagesTheServerCannotTakeBecomeDeadLetters() throws Exception {
    OrderCheck check = new OrderCheck();
    consume(m -> record(check, m));
    List<UUID> ids = new ArrayList<>(fx.publish(0, 100, 10, 50));
    JetStreamManagement jsm = nats.jetStreamManagement();
    jsm.updateStream(
        StreamConfiguration.builder(jsm.getStreamInfo(stream).getConfiguration())
            .maximumMessageSize(10_000)
            .build());
    byte[] huge =
        ("{\"key\":\"key-004\",\"n\":-1,\"pad\":\"" + "x".repeat(20_000) + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    UUID tooLarge = fx.publishOne("key-004", huge, Map.of());
    ids.addAll(fx.publish(100, 100, 10, 50));
    start(sink().build());
    Await.until(WAIT, "200 messages", check::distinct, n -> n >= 200);
    Await.until(WAIT, "one dead letter", () -> fx.deadLetters().size(), n -> n >= 1);
    List<DeadLetter> dead = fx.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).event().id()).isEqualTo(tooLarge);
    assertThat(dead.get(0).lastError()).contains("nats rejected it").contains("10054");
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
  }

  @Test
  void structuredModeSendsCloudEventsJsonDocuments() throws Exception {
    OrderCheck check = new OrderCheck();
    AtomicInteger wrong = new AtomicInteger();
    ObjectMapper json = new ObjectMapper();
    consume(
        m -> {
          if (!CloudEventsMapping.JSON_CONTENT_TYPE.equals(m.getHeaders().getFirst("content-type"))
              || m.getHeaders().getFirst("ce-id") != null) {
            wrong.incrementAndGet();
          }
          try {
            JsonNode doc = json.readTree(m.getData());
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
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> NatsSink.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "NatsSink.builder() needs a server: .servers(\"nats://127.0.0.1:4222\") or"
                + " .options(options)");
    assertThatThrownBy(
            () -> NatsSink.builder().servers(NatsServer.URL).ackTimeout(Duration.ZERO).build())
        .hasMessage("ackTimeout must be between PT0.1S and PT10M, got PT0S");
    assertThatThrownBy(() -> NatsSink.builder().servers(NatsServer.URL).expectedStream(" ").build())
        .hasMessage("expectedStream must not be blank");
    assertThatThrownBy(
            () ->
                NatsSink.builder()
                    .servers(NatsServer.URL)
                    .options(NatsServer.options().build())
                    .build())
        .hasMessage("set either servers or options, not both");
  }
}
