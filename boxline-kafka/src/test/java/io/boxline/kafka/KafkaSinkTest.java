package io.boxline.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.DeadLetter;
import io.boxline.ValidationException;
import io.boxline.kafka.testing.EmbeddedKafka;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.Relay;
import io.boxline.relay.testing.OrderCheck;
import io.boxline.relay.testing.RelayFixture;
import io.boxline.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class KafkaSinkTest {
  private static final Duration WAIT = Duration.ofSeconds(90);

  private static EmbeddedKafka kafka;

  private RelayFixture fx;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  static void startKafka() throws Exception {
    kafka = EmbeddedKafka.start();
  }

  @AfterAll
  static void stopKafka() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @BeforeEach
  void setUp() {
    fx = RelayFixture.create("kafka", 4);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    fx.close();
  }

  private String createTopic(String hint, int partitions) throws Exception {
    String name = EmbeddedKafka.uniqueTopic(hint);
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    try (Admin admin = Admin.create(p)) {
      admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    }
    return name;
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** Reads a topic from the beginning on a background thread, handing every record over. */
  private void consume(
      String topic, int partitions, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
    List<TopicPartition> tps = new ArrayList<>();
    for (int i = 0; i < partitions; i++) {
      tps.add(new TopicPartition(topic, i));
    }
    consumer.assign(tps);
    consumer.seekToBeginning(tps);
    AtomicBoolean running = new AtomicBoolean(true);
    Thread t =
        new Thread(
            () -> {
              try {
                while (running.get()) {
                  for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    sink.accept(r);
                  }
                }
              } catch (WakeupException e) {
                // closing
              } finally {
                consumer.close();
              }
            },
            "test-consumer-" + topic);
    t.setDaemon(true);
    t.start();
    closeables.add(
        () -> {
          running.set(false);
          consumer.wakeup();
          t.join(10_000);
        });
  }

  private static void record(OrderCheck check, ConsumerRecord<byte[], byte[]> r) {
    check.record(
        header(r, "ce_id"),
        header(r, "ce_subject"),
        Long.parseLong(header(r, "ce_boxlinesequence")));
  }

  private KafkaSink.Builder sink(String topic) {
    return KafkaSink.builder().bootstrapServers(kafka.bootstrapServers()).topic(topic);
  }

  private Relay start(KafkaSink sink, int batchSize) {
    Relay relay =
        Relay.builder(fx.boxline())
            .subscription(RelayFixture.SUBSCRIPTION)
            .sink(sink)
            .batchSize(batchSize)
            .retryBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
            .start();
    closeables.add(relay);
    return relay;
  }

  @Test
  void relaysTenThousandEventsKeepingBoxlinePartitionsAndOrderPerKey() throws Exception {
    String topic = createTopic("orders", 4);
    OrderCheck check = new OrderCheck();
    AtomicInteger wrongPartition = new AtomicInteger();
    AtomicInteger wrongHeaders = new AtomicInteger();
    AtomicInteger traced = new AtomicInteger();
    consume(
        topic,
        4,
        r -> {
          if (r.partition() != Integer.parseInt(header(r, "ce_boxlinepartition"))) {
            wrongPartition.incrementAndGet();
          }
          if (!header(r, "ce_subject").equals(new String(r.key(), StandardCharsets.UTF_8))
              || !"1.0".equals(header(r, "ce_specversion"))
              || !RelayFixture.TYPE.equals(header(r, "ce_type"))
              || !"application/json".equals(header(r, "content-type"))
              || !"relay/test/events".equals(header(r, "ce_boxlinetopic"))
              || !new String(r.value(), StandardCharsets.UTF_8).contains("\"key\":\"")) {
            wrongHeaders.incrementAndGet();
          }
          if (header(r, "ce_traceparent") != null) {
            traced.incrementAndGet();
          }
          record(check, r);
        });
    List<UUID> ids = fx.publish(10_000, 100, 500);
    Relay relay = start(sink(topic).boxline(fx.boxline()).build(), 250);
    Await.until(WAIT, "10,000 records in Kafka", check::distinct, n -> n >= 10_000);
    Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(check.duplicates()).isZero();
    assertThat(check.keys()).isEqualTo(100);
    assertThat(wrongPartition).hasValue(0);
    assertThat(wrongHeaders).hasValue(0);
    assertThat(traced).hasValue(1_000);
    assertThat(relay.deadLetterCount()).isZero();
  }

  @Test
  void usesKafkasPartitionerOnTheKeyWhenPartitionCountsDiffer() throws Exception {
    String topic = createTopic("three", 3);
    OrderCheck check = new OrderCheck();
    Map<String, Set<Integer>> partitionsOfKey = new ConcurrentHashMap<>();
    AtomicInteger notMurmur = new AtomicInteger();
    consume(
        topic,
        3,
        r -> {
          String key = header(r, "ce_subject");
          partitionsOfKey
              .computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet())
              .add(r.partition());
          if (Utils.toPositive(Utils.murmur2(r.key())) % 3 != r.partition()) {
            notMurmur.incrementAndGet();
          }
          record(check, r);
        });
    List<UUID> ids = fx.publish(1_000, 20, 250);
    start(sink(topic).boxline(fx.boxline()).build(), 100);
    Await.until(WAIT, "1,000 records in Kafka", check::distinct, n -> n >= 1_000);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(partitionsOfKey).hasSize(20).allSatisfy((k, ps) -> assertThat(ps).hasSize(1));
    assertThat(notMurmur).hasValue(0);
  }

  @Test
  void structuredModeSendsCloudEventsJsonDocuments() throws Exception {
    String topic = createTopic("structured", 4);
    OrderCheck check = new OrderCheck();
    AtomicInteger wrong = new AtomicInteger();
    com.fasterxml.jackson.databind.ObjectMapper json =
        new com.fasterxml.jackson.databind.ObjectMapper();
    consume(
        topic,
        4,
        r -> {
          if (!CloudEventsMapping.JSON_CONTENT_TYPE.equals(header(r, "content-type"))
              || header(r, "ce_id") != null) {
            wrong.incrementAndGet();
          }
          try {
            var doc = json.readTree(r.value());
            check.record(
                doc.get("id").asText(),
                doc.get("subject").asText(),
                Long.parseLong(doc.get("boxlinesequence").asText()));
          } catch (java.io.IOException e) {
            wrong.incrementAndGet();
          }
        });
    List<UUID> ids = fx.publish(200, 10, 100);
    start(
        sink(topic)
            .cloudEvents(
                CloudEventsMapping.builder().mode(CloudEventsMapping.Mode.STRUCTURED).build())
            .build(),
        100);
    Await.until(WAIT, "200 documents in Kafka", check::distinct, n -> n >= 200);
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
    assertThat(wrong).hasValue(0);
  }

  @Test
  void aRecordKafkaCannotTakeBecomesADeadLetter() throws Exception {
    String topic = createTopic("large", 4);
    OrderCheck check = new OrderCheck();
    consume(topic, 4, r -> record(check, r));
    List<UUID> ids = new ArrayList<>(fx.publish(0, 100, 10, 50));
    byte[] huge =
        ("{\"key\":\"key-003\",\"n\":-1,\"pad\":\"" + "x".repeat(20_000) + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    UUID tooLarge = fx.publishOne("key-003", huge, Map.of());
    ids.addAll(fx.publish(100, 100, 10, 50));
    start(sink(topic).property("max.request.size", 10_000).build(), 100);
    Await.until(WAIT, "200 records in Kafka", check::distinct, n -> n >= 200);
    Await.until(WAIT, "one dead letter", () -> fx.deadLetters().size(), n -> n >= 1);
    List<DeadLetter> dead = fx.deadLetters();
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).event().id()).isEqualTo(tooLarge);
    assertThat(dead.get(0).lastError()).contains("RecordTooLargeException");
    assertThat(check.missing(ids)).isEmpty();
    assertThat(check.violations()).isEmpty();
  }

  @Test
  void aBrokerOutageStallsTheRelayAndNothingIsLost() throws Exception {
    String topic = createTopic("outage", 4);
    OrderCheck check = new OrderCheck();
    consume(topic, 4, r -> record(check, r));
    List<UUID> first = fx.publish(0, 3_000, 100, 500);
    Relay relay = start(sink(topic).boxline(fx.boxline()).build(), 100);
    Await.until(WAIT, "some records in Kafka", check::distinct, n -> n >= 1_000);

    kafka.shutdown();
    List<UUID> second = fx.publish(3_000, 3_000, 100, 500);
    // The producer keeps retrying (no delivery bound by default), so the relay just waits.
    Await.until(WAIT, "events wait behind the outage", fx::backlog, n -> n > 0);
    assertThat(check.distinct()).as("nothing new reaches Kafka while it is down").isLessThan(6_000);
    assertThat(fx.deadLetters()).isEmpty();

    kafka.startup();
    Await.until(WAIT, "all 6,000 records after the restart", check::distinct, n -> n >= 6_000);
    Await.until(WAIT, "cursor past every event", () -> fx.backlog() == 0);
    assertThat(check.missing(first)).isEmpty();
    assertThat(check.missing(second)).isEmpty();
    assertThat(check.violations()).isEmpty();
    // at least once: only records of batches in flight at the outage may be written twice
    assertThat(check.duplicates()).isLessThanOrEqualTo(4 * 100 * 2);
    assertThat(fx.deadLetters()).isEmpty();
  }

  @Test
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> KafkaSink.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessage(
            "KafkaSink.builder() needs bootstrap servers: .bootstrapServers(\"kafka:9092\")");
    assertThatThrownBy(() -> KafkaSink.builder().property("acks", "1"))
        .hasMessage("producer setting 'acks' is fixed by the Kafka sink and cannot be changed");
    assertThatThrownBy(() -> KafkaSink.builder().property("enable.idempotence", false))
        .hasMessage(
            "producer setting 'enable.idempotence' is fixed by the Kafka sink and cannot be changed");
    assertThatThrownBy(
            () ->
                KafkaSink.builder()
                    .bootstrapServers("localhost:1")
                    .sendTimeout(Duration.ofSeconds(1))
                    .build())
        .hasMessage("sendTimeout must be between PT2S and PT24H, got PT1S");
    assertThatThrownBy(
            () ->
                KafkaSink.builder()
                    .bootstrapServers("localhost:1")
                    .property("linger.ms", "not a number")
                    .build())
        .isInstanceOf(ValidationException.class)
        .hasMessageStartingWith("Kafka producer settings are invalid: ");
  }
}
