package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Partitioner;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Kafka protocol listener against the Java Kafka clients (kafka-clients 4.x) and single
 * requests of its own, one server process for the class.
 */
class KafkaProtocolTest {
  static KafkaServer server;

  @BeforeAll
  static void start() throws Exception {
    server =
        new KafkaServer(
            "  - {name: a/orders, partitions: 3}\n"
                + "  - {name: a/group, partitions: 3}\n"
                + "  - {name: a/wire, partitions: 1}\n"
                + "  - {name: a/zip, partitions: 1}\n"
                + "  - {name: a/retained, partitions: 1}\n"
                + "  - {name: b/orders, partitions: 2}\n"
                + "subscriptions:\n"
                + "  - {name: a/tenant-group, topics: [a/orders]}\n"
                + "  - {name: plain-group-of-a, topics: [a/orders]}\n");
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static KafkaProducer<String, byte[]> producer(String user) {
    Properties p = server.client(user);
    p.put("linger.ms", "5");
    return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  private static KafkaConsumer<String, byte[]> consumer(String user, String group) {
    return consumer(user, group, null);
  }

  private static KafkaConsumer<String, byte[]> consumer(
      String user, String group, String assignor) {
    Properties p = server.client(user);
    if (assignor != null) {
      p.put("partition.assignment.strategy", assignor);
    }
    if (group != null) {
      p.put("group.id", group);
      p.put("enable.auto.commit", "false");
      p.put("auto.offset.reset", "earliest");
      p.put("session.timeout.ms", "6000");
      p.put("heartbeat.interval.ms", "500");
    }
    return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
  }

  private static String header(ConsumerRecord<?, ?> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static final long PRODUCED_AT = 1_700_000_000_123L;

  @Test
  void recordsRoundTripWithKeysHeadersAndTheKafkaPartitioner() throws Exception {
    int n = 30;
    try (KafkaProducer<String, byte[]> producer = producer(KafkaServer.ADMIN)) {
      for (int i = 0; i < n; i++) {
        String key = "k" + (i % 7);
        ProducerRecord<String, byte[]> r =
            new ProducerRecord<>(
                "a.orders",
                null,
                PRODUCED_AT + i,
                key,
                ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
        r.headers().add("trace", ("t" + i).getBytes(StandardCharsets.UTF_8));
        r.headers().add("content-type", "application/json".getBytes(StandardCharsets.UTF_8));
        RecordMetadata meta = producer.send(r).get();
        assertThat(meta.partition())
            .as("the Kafka default partitioner and Boxline's put %s on one partition", key)
            .isEqualTo(Partitioner.kafkaCompatible().partition(key, 3));
      }
    }
    Map<String, JsonNode> stored = new HashMap<>();
    KafkaServer.await(
        "the events sequenced",
        Duration.ofSeconds(30),
        () -> {
          try {
            stored.clear();
            for (int p = 0; p < 3; p++) {
              for (JsonNode e : server.events("a/orders", p)) {
                stored.put(p + "/" + (e.get("sequence").asLong() - 1), e);
              }
            }
            return stored.size() == n;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    try (KafkaConsumer<String, byte[]> consumer = consumer(KafkaServer.ADMIN, null)) {
      List<TopicPartition> all =
          List.of(
              new TopicPartition("a.orders", 0),
              new TopicPartition("a.orders", 1),
              new TopicPartition("a.orders", 2));
      consumer.assign(all);
      consumer.seekToBeginning(all);
      List<ConsumerRecord<String, byte[]>> got = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.size() < n && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(got::add);
      }
      assertThat(got).hasSize(n);
      Map<String, Integer> lastByKey = new HashMap<>();
      for (ConsumerRecord<String, byte[]> r : got) {
        JsonNode e = stored.get(r.partition() + "/" + r.offset());
        assertThat(e)
            .as(
                "offset %d of partition %d is sequence %d",
                r.offset(), r.partition(), r.offset() + 1)
            .isNotNull();
        assertThat(r.key()).isEqualTo(e.get("key").asText());
        String value = new String(r.value(), StandardCharsets.UTF_8);
        assertThat(value).isEqualTo(e.get("payload").toString());
        assertThat(header(r, "trace")).isEqualTo(e.get("headers").get("trace").asText());
        assertThat(header(r, "content-type")).isEqualTo("application/json");
        assertThat(e.get("contentType").asText()).isEqualTo("application/json");
        assertThat(r.headers().toArray()).as("no headers but the record's own").hasSize(2);
        int i = Integer.parseInt(value.replaceAll("\\D", ""));
        assertThat(r.timestamp()).as("the producer's timestamp").isEqualTo(PRODUCED_AT + i);
        assertThat(e.get("headers").get("ce_time").asText())
            .as("kept as the CloudEvents time attribute")
            .isEqualTo(java.time.Instant.ofEpochMilli(PRODUCED_AT + i).toString());
        Integer before = lastByKey.put(r.key(), i);
        assertThat(before == null || before < i).as("order of key %s", r.key()).isTrue();
      }
      assertThat(consumer.endOffsets(all).values().stream().mapToLong(Long::longValue).sum())
          .as("high watermarks are the heads")
          .isEqualTo(n);
      assertThat(consumer.beginningOffsets(all).values()).containsOnly(0L);
      // By timestamp: the first offset stored at or after it (the time stored, not the
      // producer's), and none after the newest.
      for (TopicPartition tp : all) {
        List<Map.Entry<Long, Long>> times = new ArrayList<>();
        stored.forEach(
            (at, e) -> {
              if (at.startsWith(tp.partition() + "/")) {
                times.add(
                    Map.entry(
                        Long.parseLong(at.substring(at.indexOf('/') + 1)),
                        java.time.Instant.parse(e.get("createdAt").asText()).toEpochMilli()));
              }
            });
        times.sort(Map.Entry.comparingByKey());
        Map.Entry<Long, Long> middle = times.get(times.size() / 2);
        long probe = middle.getValue();
        var found = consumer.offsetsForTimes(Map.of(tp, probe)).get(tp);
        assertThat(found).as("offset for time %d on %s", probe, tp).isNotNull();
        assertThat(found.offset())
            .as("not after the event of that time")
            .isLessThanOrEqualTo(middle.getKey());
        assertThat(stored.get(tp.partition() + "/" + found.offset())).isNotNull();
        assertThat(
                java.time.Instant.parse(
                        stored.get(tp.partition() + "/" + found.offset()).get("createdAt").asText())
                    .toEpochMilli())
            .as("stored at or after the time asked")
            .isGreaterThanOrEqualTo(probe);
        assertThat(found.timestamp()).isGreaterThanOrEqualTo(probe);
        long newest = times.stream().mapToLong(Map.Entry::getValue).max().orElseThrow();
        assertThat(consumer.offsetsForTimes(Map.of(tp, newest + 60_000)).get(tp))
            .as("no offset after the newest event")
            .isNull();
      }
    }
  }

  @Test
  void aGroupOfTwoConsumesEverythingAndCommitsTheSubscriptionsCursors() throws Exception {
    String group = "a/kafka-group";
    AtomicBoolean stop = new AtomicBoolean();
    Map<String, List<Long>> seen = new ConcurrentHashMap<>();
    List<KafkaConsumer<String, byte[]>> members = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    Map<Integer, Integer> perMember = new ConcurrentHashMap<>();
    Map<Integer, Integer> assigned = new ConcurrentHashMap<>();
    for (int m = 0; m < 2; m++) {
      int me = m;
      // The cooperative assignor: rebalances revoke only what moves (Python and Node use eager
      // ones).
      KafkaConsumer<String, byte[]> c =
          consumer(
              KafkaServer.ADMIN,
              group,
              "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
      members.add(c);
      loops.add(
          CompletableFuture.runAsync(
              () -> {
                c.subscribe(List.of("a.group"));
                while (!stop.get()) {
                  var records = c.poll(Duration.ofMillis(100));
                  assigned.put(me, c.assignment().size());
                  for (ConsumerRecord<String, byte[]> r : records) {
                    seen.computeIfAbsent(
                            r.partition() + "/" + r.key(), k -> new CopyOnWriteArrayList<>())
                        .add(r.offset());
                    perMember.merge(me, 1, Integer::sum);
                  }
                  if (!records.isEmpty()) {
                    c.commitSync();
                  }
                }
                c.close(Duration.ofSeconds(5));
              }));
    }
    KafkaServer.await(
        "both members to hold partitions",
        Duration.ofSeconds(60),
        () -> assigned.size() == 2 && assigned.values().stream().allMatch(a -> a > 0));
    int n = 200;
    try (KafkaProducer<String, byte[]> producer = producer(KafkaServer.ADMIN)) {
      for (int i = 0; i < n; i++) {
        producer.send(
            new ProducerRecord<>(
                "a.group", "k" + (i % 20), ("" + i).getBytes(StandardCharsets.UTF_8)));
      }
    }
    KafkaServer.await(
        "every event consumed",
        Duration.ofSeconds(60),
        () -> seen.values().stream().mapToLong(l -> l.stream().distinct().count()).sum() == n);
    stop.set(true);
    CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new))
        .get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(perMember).as("both members consumed").hasSize(2);
    // Per key, the offsets come in order (a key is on one partition).
    seen.values().forEach(offsets -> assertThat(offsets).isSorted());
    // The commits are the subscription's cursors: every partition handled up to its head.
    List<Long> heads = server.heads("a/group");
    JsonNode lag = server.get("/v1/subscriptions/" + KafkaServer.enc(group) + "/lag");
    assertThat(lag.get("partitions")).hasSize(3);
    for (JsonNode p : lag.get("partitions")) {
      assertThat(p.get("cursor").asLong()).isEqualTo(heads.get(p.get("partition").asInt()));
    }
    // Kafka's own group tool sees the group, its offsets and no lag.
    java.nio.file.Path config = java.nio.file.Files.createTempFile("kafka-tool", ".properties");
    Properties p = server.client(KafkaServer.ADMIN);
    try (var out = java.nio.file.Files.newBufferedWriter(config)) {
      p.store(out, null);
    }
    ExternalClients.Run run =
        ExternalClients.run(
            List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server",
                server.bootstrap(),
                "--command-config",
                config.toString(),
                "--describe",
                "--group",
                group),
            Map.of(),
            120,
            java.nio.file.Path.of("."),
            "the JDK");
    assertThat(run.output()).contains(group).contains("a.group");
    long lines = run.output().lines().filter(l -> l.contains("a.group")).count();
    assertThat(lines).as(run.output()).isEqualTo(3);
    run.output()
        .lines()
        .filter(l -> l.contains("a.group"))
        .forEach(l -> assertThat(l.split("\\s+")[5]).as(l).isEqualTo("0"));
  }

  private static byte[] subscriptionTo(String topic) {
    ByteBuffer b =
        ConsumerProtocol.serializeSubscription(
            new ConsumerPartitionAssignor.Subscription(List.of(topic)));
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  private static JoinGroupRequest.Builder join(String group, String member) {
    JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
        new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
    protocols.add(
        new JoinGroupRequestData.JoinGroupRequestProtocol()
            .setName("range")
            .setMetadata(subscriptionTo("a.wire")));
    return new JoinGroupRequest.Builder(
        new JoinGroupRequestData()
            .setGroupId(group)
            .setMemberId(member)
            .setSessionTimeoutMs(10_000)
            .setRebalanceTimeoutMs(10_000)
            .setProtocolType("consumer")
            .setProtocols(protocols));
  }

  private static OffsetCommitResponse commit(
      KafkaWire w, String group, int generation, String member, long offset) throws Exception {
    return w.send(
        OffsetCommitRequest.Builder.forTopicNames(
            new OffsetCommitRequestData()
                .setGroupId(group)
                .setGenerationIdOrMemberEpoch(generation)
                .setMemberId(member)
                .setTopics(
                    List.of(
                        new OffsetCommitRequestData.OffsetCommitRequestTopic()
                            .setName("a.wire")
                            .setPartitions(
                                List.of(
                                    new OffsetCommitRequestData.OffsetCommitRequestPartition()
                                        .setPartitionIndex(0)
                                        .setCommittedOffset(offset)))))),
        (short) 9);
  }

  private static Errors commitError(OffsetCommitResponse r) {
    return Errors.forCode(r.data().topics().get(0).partitions().get(0).errorCode());
  }

  private static long position(String group) throws Exception {
    JsonNode lag = server.get("/v1/subscriptions/" + KafkaServer.enc(group) + "/lag");
    assertThat(lag.path("partitions").path(0).has("cursor")).as(lag.toString()).isTrue();
    return lag.get("partitions").get(0).get("cursor").asLong();
  }

  @Test
  void aCommitFromAStaleGenerationIsRefusedAndMovesNothing() throws Exception {
    try (KafkaProducer<String, byte[]> producer = producer(KafkaServer.ADMIN)) {
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>("a.wire", "k", new byte[] {(byte) i})).get();
      }
    }
    KafkaServer.await(
        "the events sequenced",
        Duration.ofSeconds(30),
        () -> {
          try {
            return server.heads("a/wire").get(0) == 5;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    String group = "a/wire-group";
    try (KafkaWire a = KafkaWire.connect(server.port, KafkaServer.TENANT_A, server.aSecret);
        KafkaWire b = KafkaWire.connect(server.port, KafkaServer.TENANT_A, server.aSecret)) {
      JoinGroupResponse first = a.send(join(group, ""), (short) 9);
      assertThat(first.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);
      String memberA = first.data().memberId();
      JoinGroupResponse joinedA = a.send(join(group, memberA), (short) 9);
      assertThat(joinedA.error()).isEqualTo(Errors.NONE);
      int g1 = joinedA.data().generationId();
      assertThat(joinedA.data().leader()).isEqualTo(memberA);
      SyncGroupResponse synced =
          a.send(
              new SyncGroupRequest.Builder(
                  new SyncGroupRequestData()
                      .setGroupId(group)
                      .setGenerationId(g1)
                      .setMemberId(memberA)
                      .setProtocolType("consumer")
                      .setProtocolName("range")
                      .setAssignments(
                          List.of(
                              new SyncGroupRequestData.SyncGroupRequestAssignment()
                                  .setMemberId(memberA)
                                  .setAssignment(new byte[0])))),
              (short) 5);
      assertThat(synced.error()).isEqualTo(Errors.NONE);
      assertThat(commitError(commit(a, group, g1, memberA, 2))).isEqualTo(Errors.NONE);
      assertThat(position(group)).isEqualTo(2);

      // B joins: a rebalance begins, and A's generation is on its way out.
      String memberB = b.<JoinGroupResponse>send(join(group, ""), (short) 9).data().memberId();
      CompletableFuture<JoinGroupResponse> joiningB =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return b.send(join(group, memberB), (short) 9);
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              });
      KafkaServer.await(
          "the rebalance to begin",
          Duration.ofSeconds(10),
          () -> {
            try {
              HeartbeatResponse hb =
                  a.send(
                      new HeartbeatRequest.Builder(
                          new HeartbeatRequestData()
                              .setGroupId(group)
                              .setGenerationId(g1)
                              .setMemberId(memberA)),
                      (short) 4);
              return hb.error() == Errors.REBALANCE_IN_PROGRESS;
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          });
      // A still holds its partition until the next generation is given out: its commit is taken,
      // as Kafka's coordinator takes it (clients commit what they processed before rejoining).
      assertThat(commitError(commit(a, group, g1, memberA, 3))).isEqualTo(Errors.NONE);
      assertThat(position(group)).isEqualTo(3);
      JoinGroupResponse rejoinedA = a.send(join(group, memberA), (short) 9);
      int g2 = rejoinedA.data().generationId();
      assertThat(g2).isGreaterThan(g1);
      assertThat(joiningB.get(20, java.util.concurrent.TimeUnit.SECONDS).data().generationId())
          .isEqualTo(g2);
      // Joined, not yet assigned: a commit is refused.
      assertThat(commitError(commit(a, group, g2, memberA, 4)))
          .isEqualTo(Errors.REBALANCE_IN_PROGRESS);
      // The old generation cannot commit; nothing moved.
      assertThat(commitError(commit(a, group, g1, memberA, 4)))
          .isEqualTo(Errors.ILLEGAL_GENERATION);
      assertThat(commitError(commit(a, group, g2, "someone-else", 4)))
          .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
      assertThat(position(group)).isEqualTo(3);
    }
  }

  @Test
  void compressedBatchesOfEveryCodecAreStoredAsTheirRecords() throws Exception {
    List<String> codecs = List.of("gzip", "snappy", "lz4", "zstd");
    for (String codec : codecs) {
      Properties p = server.client(KafkaServer.ADMIN);
      p.put("compression.type", codec);
      try (KafkaProducer<String, byte[]> producer =
          new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
        ProducerRecord<String, byte[]> r =
            new ProducerRecord<>(
                "a.zip", codec, ("{\"codec\":\"" + codec + "\"}").getBytes(StandardCharsets.UTF_8));
        r.headers().add("content-type", "application/json".getBytes(StandardCharsets.UTF_8));
        producer.send(r).get();
      }
    }
    KafkaServer.await(
        "the events sequenced",
        Duration.ofSeconds(30),
        () -> {
          try {
            return server.heads("a/zip").get(0) == codecs.size();
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    assertThat(server.events("a/zip", 0))
        .extracting(e -> e.get("key").asText() + "=" + e.get("payload").get("codec").asText())
        .containsExactly("gzip=gzip", "snappy=snappy", "lz4=lz4", "zstd=zstd");
  }

  @Test
  void theLogStartOffsetFollowsRetention() throws Exception {
    try (KafkaProducer<String, byte[]> producer = producer(KafkaServer.ADMIN)) {
      for (int i = 0; i < 10; i++) {
        producer
            .send(
                new ProducerRecord<>("a.retained", "k", ("" + i).getBytes(StandardCharsets.UTF_8)))
            .get();
      }
    }
    KafkaServer.await(
        "ten events sequenced",
        Duration.ofSeconds(30),
        () -> {
          try {
            return server.events("a/retained", 0).size() == 10;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        });
    // Retention takes the first four events (here in SQL, as its loop does once a minute).
    try (java.sql.Connection c = Databases.postgres();
        java.sql.Statement st = c.createStatement()) {
      assertThat(
              st.executeUpdate(
                  "DELETE FROM "
                      + server.schema
                      + ".log l USING "
                      + server.schema
                      + ".topic t WHERE l.topic_id = t.id AND t.name = 'retained' AND l.seq <= 4"))
          .isEqualTo(4);
    }
    TopicPartition tp = new TopicPartition("a.retained", 0);
    Properties p = server.client(KafkaServer.ADMIN);
    p.put("auto.offset.reset", "earliest");
    try (KafkaConsumer<String, byte[]> c =
        new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
      assertThat(c.beginningOffsets(List.of(tp))).containsEntry(tp, 4L);
      assertThat(c.endOffsets(List.of(tp))).containsEntry(tp, 10L);
      c.assign(List.of(tp));
      c.seek(tp, 0); // below the log start: OFFSET_OUT_OF_RANGE, then the reset to the earliest
      List<Long> offsets = new ArrayList<>();
      List<String> values = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (offsets.size() < 6 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
          offsets.add(r.offset());
          values.add(new String(r.value(), StandardCharsets.UTF_8));
        }
      }
      assertThat(offsets).containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
      assertThat(values).containsExactly("4", "5", "6", "7", "8", "9");
    }
  }

  @Test
  void wrongTokensAndTransactionsGetClearErrors() throws Exception {
    Properties wrong = server.client(KafkaServer.ADMIN, "not-a-token-of-this-server");
    try (KafkaConsumer<String, byte[]> c =
        new KafkaConsumer<>(wrong, new StringDeserializer(), new ByteArrayDeserializer())) {
      assertThatThrownBy(() -> c.listTopics(Duration.ofSeconds(20)))
          .isInstanceOf(SaslAuthenticationException.class)
          .hasMessageContaining("not a token this server knows");
    }
    Properties tx = server.client(KafkaServer.ADMIN);
    tx.put("transactional.id", "tx-1");
    tx.put("max.block.ms", "20000");
    try (KafkaProducer<String, byte[]> p =
        new KafkaProducer<>(tx, new StringSerializer(), new ByteArraySerializer())) {
      assertThatThrownBy(p::initTransactions)
          .isInstanceOf(TransactionalIdAuthorizationException.class);
    }
    // A token that may consume but not manage cannot make a group that is no subscription yet.
    try (KafkaConsumer<String, byte[]> c = consumer(KafkaServer.READER_A, "a/not-yet-a-group")) {
      c.subscribe(List.of("a.orders"));
      assertThatThrownBy(() -> c.poll(Duration.ofSeconds(20)))
          .isInstanceOf(GroupAuthorizationException.class);
    }
    assertThat(server.subscriptionExists("a/not-yet-a-group")).as("nothing was created").isFalse();
  }

  @Test
  void malformedAndUnknownRequestsEndOnlyTheirConnection() throws Exception {
    java.util.Random random = new java.util.Random(42);
    for (int i = 0; i < 40; i++) {
      try (KafkaWire w = KafkaWire.raw(server.port)) {
        switch (i % 4) {
          case 0 -> { // random bytes in a frame of the right size
            byte[] junk = new byte[8 + random.nextInt(200)];
            random.nextBytes(junk);
            junk[0] = (byte) 0x7f; // no API key this high
            w.writeFrame(junk, 0, junk.length);
          }
          case 1 ->
              w.writeRaw(ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array()); // too large
          case 2 -> { // a Metadata request before authenticating
            w.writeFrame(new byte[] {0, 3, 0, 1, 0, 0, 0, 7, 0, 0}, 0, 10);
          }
          default -> { // a known header whose body is cut short
            byte[] cut = {0, 1, 0, 12, 0, 0, 0, 9, 0, 4, 't', 'e', 's', 't', 0, 0, 0};
            w.writeFrame(cut, 0, cut.length);
          }
        }
        assertThat(w.closedByServer()).as("case %d closes the connection", i % 4).isTrue();
      }
    }
    // Others are unharmed, and an API the listener does not serve gets an answer saying so.
    try (KafkaWire w = KafkaWire.connect(server.port, KafkaServer.ADMIN, server.adminSecret)) {
      ApiVersionsResponse versions =
          w.send(
              new ApiVersionsRequest.Builder(
                  new ApiVersionsRequestData()
                      .setClientSoftwareName("t")
                      .setClientSoftwareVersion("1"),
                  (short) 3,
                  (short) 3),
              (short) 3);
      assertThat(versions.data().errorCode()).isEqualTo(Errors.NONE.code());
      assertThat(versions.data().apiKeys().find((short) 1).maxVersion()).isEqualTo((short) 12);
      CreateTopicsRequestData create = new CreateTopicsRequestData();
      create
          .topics()
          .add(
              new CreateTopicsRequestData.CreatableTopic()
                  .setName("a.new")
                  .setNumPartitions(1)
                  .setReplicationFactor((short) 1));
      CreateTopicsResponse refused = w.send(new CreateTopicsRequest.Builder(create), (short) 5);
      assertThat(refused.errorCounts()).containsKey(Errors.UNSUPPORTED_VERSION);
    }
  }

  /** What tenant a has: its topics' heads, its subscriptions and their cursors. */
  private static String tenantAState() throws Exception {
    StringBuilder out = new StringBuilder();
    for (String t : List.of("a/orders", "a/group", "a/wire")) {
      out.append(t).append(server.heads(t)).append('\n');
    }
    for (JsonNode s : server.get("/v1/subscriptions?limit=1000").get("subscriptions")) {
      String name = s.get("name").asText();
      out.append(name).append('\n');
      if (name.startsWith("a/") || name.equals("plain-group-of-a")) {
        out.append(
                server.get("/v1/subscriptions/" + KafkaServer.enc(name) + "/lag").get("partitions"))
            .append('\n');
      }
    }
    return out.toString();
  }

  @Test
  void aTenantCanNeitherSeeNorTouchAnothersTopicsAndGroups() throws Exception {
    String before = tenantAState();
    long seed = new java.util.Random().nextLong();
    KafkaAttacks attacks =
        new KafkaAttacks(
            seed,
            "a",
            List.of("a.orders", "a.group", "a.wire"),
            List.of("a/tenant-group", "a/kafka-group", "a/wire-group", "plain-group-of-a"),
            List.of("b.orders"));
    try (KafkaWire b = KafkaWire.connect(server.port, KafkaServer.TENANT_B, server.bSecret)) {
      for (int i = 0; i < 400; i++) {
        try {
          attacks.once(b);
        } catch (AssertionError e) {
          throw new AssertionError("request " + i + " of seed " + seed + ": " + e.getMessage(), e);
        }
      }
    }
    assertThat(attacks.checks()).isGreaterThan(300);
    assertThat(tenantAState()).as("tenant a's topics, subscriptions and cursors").isEqualTo(before);
  }
}
