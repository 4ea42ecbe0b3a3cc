package io.boxline.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.sun.net.httpserver.HttpServer;
import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.kafka.KafkaSink;
import io.boxline.kafka.testing.EmbeddedKafka;
import io.boxline.nats.NatsSink;
import io.boxline.rabbitmq.RabbitMqSink;
import io.boxline.relay.Sink;
import io.boxline.webhook.WebhookSink;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * The destinations {@link RelayBench} relays to. Each trial gets a destination of its own (a Kafka
 * topic, a RabbitMQ exchange and queue, a JetStream stream, an HTTP path), removed afterwards; the
 * broker counts what it stored, as a check next to the relay's confirmations.
 */
final class RelayTargets {
  private RelayTargets() {}

  /** One kind of destination. */
  interface Target extends AutoCloseable {
    /** Short name for tables: webhook, kafka, rabbitmq, nats, memory. */
    String name();

    /** What it is and how it is set up, for the report. */
    String describe();

    /** Creates the destination of trial {@code trial} and a sink to it. */
    Sink open(String trial, Boxline boxline, int partitions) throws Exception;

    /** Messages the destination of {@code trial} holds (or received), -1 if unknown. */
    long stored(String trial) throws Exception;

    /** Removes the destination of {@code trial}. */
    void remove(String trial) throws Exception;

    @Override
    default void close() {}
  }

  static Target create(String name) throws Exception {
    return switch (name) {
      case "memory" -> new Memory();
      case "webhook" -> new Webhook();
      case "kafka" -> new Kafka();
      case "rabbitmq" -> new Rabbit();
      case "nats" -> new Jet();
      default ->
          throw new IllegalArgumentException(
              "unknown sink " + name + "; use memory, webhook, kafka, rabbitmq, nats or all");
    };
  }

  /** A destination in this JVM that counts what it received per trial. */
  abstract static class Counting implements Target {
    final Map<String, LongAdder> received = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public long stored(String trial) {
      return received.get(trial).sum();
    }

    @Override
    public void remove(String trial) {
      received.remove(trial);
    }
  }

  /** No broker: the sink confirms at once. Boxline's own ceiling for a relay. */
  static final class Memory extends Counting {

    @Override
    public String name() {
      return "memory";
    }

    @Override
    public String describe() {
      return "in-memory sink that confirms every batch at once (no broker; Boxline's own ceiling)";
    }

    @Override
    public Sink open(String trial, Boxline boxline, int partitions) {
      LongAdder n = received.computeIfAbsent(trial, t -> new LongAdder());
      return new Sink() {
        @Override
        public void send(List<Event> events) {
          n.add(events.size());
        }

        @Override
        public String name() {
          return "memory";
        }

        @Override
        public void close() {}
      };
    }
  }

  /** A com.sun.net.httpserver endpoint in this JVM answering 200 to every POST. */
  static final class Webhook extends Counting {
    private final HttpServer server;
    private final ExecutorService pool = Executors.newFixedThreadPool(4);

    Webhook() throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
      server.setExecutor(pool);
      server.createContext(
          "/",
          exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
              in.readAllBytes();
            }
            String trial = exchange.getRequestURI().getPath().substring(1);
            LongAdder n = received.get(trial);
            if (n != null) {
              n.increment();
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
          });
      server.start();
    }

    @Override
    public String name() {
      return "webhook";
    }

    @Override
    public String describe() {
      return "WebhookSink (per-event POST, binary CloudEvents, HTTP/1.1) to a com.sun.net.httpserver"
          + " endpoint in the bench JVM on 127.0.0.1 (4 handler threads) answering 200 with no body";
    }

    @Override
    public Sink open(String trial, Boxline boxline, int partitions) {
      received.put(trial, new LongAdder());
      return WebhookSink.builder()
          .url("http://127.0.0.1:" + server.getAddress().getPort() + "/" + trial)
          .build();
    }

    @Override
    public void close() {
      server.stop(0);
      pool.shutdownNow();
    }
  }

  /** An in-process single-node KRaft broker; a topic per trial with the Boxline partition count. */
  static final class Kafka implements Target {
    private final EmbeddedKafka kafka;
    private final Admin admin;

    Kafka() throws IOException {
      kafka = EmbeddedKafka.start();
      Properties p = new Properties();
      p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      admin = Admin.create(p);
    }

    @Override
    public String name() {
      return "kafka";
    }

    @Override
    public String describe() {
      return "KafkaSink (idempotent producer, acks=all, linger.ms=5, binary CloudEvents) to Kafka"
          + " 4.3.1 in KRaft mode running inside the bench JVM (kafka_2.13, one node, one"
          + " replica, default flush settings), a topic per trial with as many partitions as"
          + " the Boxline topic";
    }

    @Override
    public Sink open(String trial, Boxline boxline, int partitions) throws Exception {
      admin.createTopics(List.of(new NewTopic(trial, partitions, (short) 1))).all().get();
      return KafkaSink.builder()
          .bootstrapServers(kafka.bootstrapServers())
          .topic(trial)
          .boxline(boxline)
          .build();
    }

    @Override
    public long stored(String trial) throws Exception {
      int partitions =
          admin.describeTopics(List.of(trial)).allTopicNames().get().get(trial).partitions().size();
      Map<TopicPartition, OffsetSpec> q = new HashMap<>();
      for (int i = 0; i < partitions; i++) {
        q.put(new TopicPartition(trial, i), OffsetSpec.latest());
      }
      long sum = 0;
      for (var r : admin.listOffsets(q).all().get().values()) {
        sum += r.offset();
      }
      return sum;
    }

    @Override
    public void remove(String trial) throws Exception {
      admin.deleteTopics(List.of(trial)).all().get();
    }

    @Override
    public void close() {
      admin.close();
      kafka.close();
    }
  }

  /** The machine's RabbitMQ (127.0.0.1:5672, guest/guest, vhost /); exchange + queue per trial. */
  static final class Rabbit implements Target {
    private final ConnectionFactory factory = new ConnectionFactory();
    private final com.rabbitmq.client.Connection connection;

    Rabbit() throws Exception {
      factory.setUri("amqp://guest:guest@127.0.0.1:5672/%2F");
      connection = factory.newConnection("boxline-relay-bench-admin");
    }

    @Override
    public String name() {
      return "rabbitmq";
    }

    @Override
    public String describe() {
      return "RabbitMqSink (publisher confirms, persistent, mandatory, binary CloudEvents headers)"
          + " to the machine's RabbitMQ on 127.0.0.1:5672, vhost /, a durable fanout exchange"
          + " and a durable classic queue per trial (deleted afterwards)";
    }

    @Override
    public Sink open(String trial, Boxline boxline, int partitions) throws Exception {
      try (Channel ch = connection.createChannel()) {
        ch.exchangeDeclare(trial, "fanout", true);
        ch.queueDeclare(trial, true, false, false, null);
        ch.queueBind(trial, trial, "");
      }
      return RabbitMqSink.builder().connectionFactory(factory).exchange(e -> trial).build();
    }

    @Override
    public long stored(String trial) throws Exception {
      try (Channel ch = connection.createChannel()) {
        return ch.queueDeclarePassive(trial).getMessageCount();
      }
    }

    @Override
    public void remove(String trial) throws Exception {
      try (Channel ch = connection.createChannel()) {
        ch.queueDelete(trial);
        ch.exchangeDelete(trial);
      }
    }

    @Override
    public void close() {
      closeQuietly(connection);
    }
  }

  /** The machine's NATS with JetStream (127.0.0.1:4222); a file-backed stream per trial. */
  static final class Jet implements Target {
    static final String URL = "nats://127.0.0.1:4222";
    private final Connection connection;
    private final JetStreamManagement jsm;

    Jet() throws Exception {
      connection = Nats.connect(URL);
      jsm = connection.jetStreamManagement();
    }

    @Override
    public String name() {
      return "nats";
    }

    @Override
    public String describe() {
      return "NatsSink (JetStream publish with Nats-Msg-Id, waits for the acks, binary CloudEvents"
          + " headers) to the machine's nats-server on 127.0.0.1:4222, a file-storage stream per"
          + " trial (subjects <trial>.<partition>; deleted afterwards)";
    }

    @Override
    public Sink open(String trial, Boxline boxline, int partitions) throws Exception {
      jsm.addStream(
          StreamConfiguration.builder()
              .name(trial)
              .subjects(trial + ".>")
              .storageType(StorageType.File)
              .build());
      return NatsSink.builder()
          .servers(URL)
          .subject(e -> trial + "." + e.partition())
          .expectedStream(trial)
          .build();
    }

    @Override
    public long stored(String trial) throws Exception {
      return jsm.getStreamInfo(trial).getStreamState().getMsgCount();
    }

    @Override
    public void remove(String trial) throws Exception {
      jsm.deleteStream(trial);
    }

    @Override
    public void close() {
      closeQuietly(connection);
    }
  }

  /** Closes a broker connection at the end, best effort (an interrupt is kept). */
  static void closeQuietly(AutoCloseable connection) {
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      // best effort
    }
  }

  /** A destination name nobody used before, valid as Kafka topic, AMQP name and stream name. */
  static String trialName(String sink, String what) {
    return "boxline-bench-"
        + sink
        + "-"
        + what
        + "-"
        + UUID.randomUUID().toString().substring(0, 8);
  }
}
