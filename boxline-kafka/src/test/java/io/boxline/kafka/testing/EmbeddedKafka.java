package io.boxline.kafka.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node Kafka (combined broker and controller, KRaft) running in this JVM on fixed free
 * ports and a temporary log directory, so it can be stopped and started again on the same port and
 * data, like a real broker restart. Default broker durability (no fsync per message; acks=all with
 * one replica means "in the leader's page cache"). Shared with RelayBench through this module's
 * test-jar.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final Path dir;
  private final int brokerPort;
  private final Properties config = new Properties();
  private KafkaRaftServer server;

  private EmbeddedKafka() throws IOException {
    this.dir = Files.createTempDirectory("boxline-kafka-");
    this.brokerPort = freePort();
    int controllerPort = freePort();
    config.put("process.roles", "broker,controller");
    config.put("node.id", "1");
    config.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    config.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    config.put("controller.listener.names", "CONTROLLER");
    config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    config.put("inter.broker.listener.name", "PLAINTEXT");
    config.put("log.dirs", dir.resolve("data").toString());
    config.put("auto.create.topics.enable", "false");
    config.put("offsets.topic.replication.factor", "1");
    config.put("offsets.topic.num.partitions", "1");
    config.put("transaction.state.log.replication.factor", "1");
    config.put("transaction.state.log.min.isr", "1");
    config.put("transaction.state.log.num.partitions", "1");
    config.put("share.coordinator.state.topic.replication.factor", "1");
    config.put("share.coordinator.state.topic.min.isr", "1");
    config.put("group.initial.rebalance.delay.ms", "0");
    config.put("num.network.threads", "2");
    config.put("num.io.threads", "2");
    config.put("log.cleaner.dedupe.buffer.size", "2097152");
    format();
  }

  /** Formats a fresh log directory and starts the node. */
  public static EmbeddedKafka start() throws IOException {
    EmbeddedKafka kafka = new EmbeddedKafka();
    kafka.startup();
    return kafka;
  }

  private void format() throws IOException {
    Path file = dir.resolve("server.properties");
    try (OutputStream out = Files.newOutputStream(file)) {
      config.store(out, "boxline test broker");
    }
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    String clusterId = Uuid.randomUuid().toString();
    int rc =
        StorageTool.execute(new String[] {"format", "-t", clusterId, "-c", file.toString()}, quiet);
    if (rc != 0) {
      throw new IllegalStateException("kafka-storage format failed with exit code " + rc);
    }
  }

  /** Starts (or restarts) the node on the same ports and log directory. */
  public synchronized void startup() {
    if (server != null) {
      return;
    }
    KafkaRaftServer s = new KafkaRaftServer(KafkaConfig.fromProps(config, false), Time.SYSTEM);
    s.startup();
    server = s;
  }

  /** Stops the node (an outage); {@link #startup()} brings it back. */
  public synchronized void shutdown() {
    if (server == null) {
      return;
    }
    server.shutdown();
    server.awaitShutdown();
    server = null;
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + brokerPort;
  }

  /** A topic name nobody used before. */
  public static String uniqueTopic(String hint) {
    return hint + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    shutdown();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
