package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Partitioner;
import io.boxline.server.ExternalClients.Run;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The Kafka listener against Kafka clients that are not Java's: librdkafka through Python's
 * confluent-kafka and through kcat, and kafkajs on Node. Each produces keyed events to a topic of
 * its own, then consumes them in a consumer group of two OS processes, one of which is killed
 * (SIGKILL) while events remain; the other takes its partitions over after the session timeout.
 * What is checked: nothing lost, each member sees each key's values in order, duplicates only of
 * what the killed member printed and had not committed, and the committed offsets, as the admin API
 * shows them (the subscription's cursors), at the heads. One server process for the class; the
 * client programs are in {@code src/test/resources/kafka-clients}. A missing program fails the
 * test, saying how to install it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaClientsIT {
  /** Debian's python3, which python3-confluent-kafka installs into (a pyenv's would not see it). */
  private static final String PYTHON =
      System.getenv().getOrDefault("BOXLINE_PYTHON", "/usr/bin/python3");

  private static final String KAFKAJS_VERSION = "2.2.4";

  private static final String PYTHON_MISSING =
      "Python 3 with confluent-kafka (librdkafka) is needed: `apt-get install python3"
          + " python3-confluent-kafka` (Debian), or `pip install confluent-kafka` and name that"
          + " interpreter in the environment variable BOXLINE_PYTHON";
  private static final String KCAT_MISSING =
      "kcat is needed: `apt-get install kcat` (Debian; kafkacat on older releases)";
  private static final String NODE_MISSING =
      "Node.js with npm is needed for the kafkajs test: `apt-get install nodejs npm` (Debian) or"
          + " https://nodejs.org, with node and npm on the PATH; npm installs kafkajs "
          + KAFKAJS_VERSION
          + " from the registry";

  private static final int PARTITIONS = 3;
  private static final int EVENTS = 300;
  private static final int KEYS = 10;

  /** Records per kcat -P run. */
  private static final int KCAT_BATCH = 30;

  /** The killed member dies once it printed this many records. */
  private static final int KILL_AFTER = 15;

  private static final Pattern RECORD = Pattern.compile("^record (\\d+) (\\d+) (\\S+) (\\S+)$");
  private static final Pattern COMMIT = Pattern.compile("^commit (\\d+) (\\d+)$");
  private static final Pattern DELIVERED = Pattern.compile("^delivered (\\d+) (\\S+) (\\S+)$");

  static KafkaServer server;
  static Path work;
  static CompletableFuture<Run> npm;
  static final List<Client> started = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    // Failsafe names the -all jar, not the classes and class path KafkaServer's ServerProcess
    // starts from (surefire does): the server runs from the jar this build made.
    if (System.getProperty("boxline.server.classes") == null) {
      Path jar = Path.of(System.getProperty("boxline.server.jar", "missing")).toAbsolutePath();
      assertThat(jar).as("run with Maven's verify, which builds the -all jar first").exists();
      Path classpath = Files.createTempFile("kafka-clients-classpath", ".txt");
      Files.writeString(classpath, jar.toString());
      System.setProperty("boxline.server.classes", jar.toString());
      System.setProperty("boxline.server.classpath.file", classpath.toString());
    }
    work = Path.of("target", "kafka-clients-it").toAbsolutePath();
    Path node = Files.createDirectories(work.resolve("node"));
    for (String dir : List.of("py", "kcat", "js", "java")) {
      Path d = work.resolve(dir);
      Files.createDirectories(d);
      Files.deleteIfExists(d.resolve("stop"));
    }
    for (String script : List.of("producer.py", "consumer.py")) {
      copy(script, work.resolve("py"));
    }
    for (String script : List.of("producer.js", "consumer.js")) {
      copy(script, node);
    }
    // kafkajs installs while the server starts and the other clients run.
    Files.writeString(
        node.resolve("package.json"),
        "{\"name\": \"boxline-kafkajs-test\", \"private\": true,"
            + " \"dependencies\": {\"kafkajs\": \""
            + KAFKAJS_VERSION
            + "\"}}\n");
    npm =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                Run version =
                    ExternalClients.run(
                        List.of("node", "--version"), Map.of(), 30, node, NODE_MISSING);
                assertThat(version.status()).as(NODE_MISSING).isZero();
                return ExternalClients.run(
                    List.of("npm", "install", "--no-audit", "--no-fund", "--no-save"),
                    Map.of(
                        "npm_config_update_notifier", "false",
                        "npm_config_fund", "false",
                        "npm_config_audit", "false"),
                    150,
                    node,
                    NODE_MISSING);
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
    server =
        new KafkaServer(
            "  - {name: a/py, partitions: "
                + PARTITIONS
                + "}\n"
                + "  - {name: a/kcat, partitions: "
                + PARTITIONS
                + "}\n"
                + "  - {name: a/java, partitions: "
                + PARTITIONS
                + "}\n"
                + "  - {name: a/js, partitions: "
                + PARTITIONS
                + "}\n");
  }

  @AfterAll
  static void stop() throws Exception {
    for (Client c : started) {
      c.close();
    }
    if (npm != null) {
      npm.handle((r, e) -> null).get(160, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  private static void copy(String script, Path dir) throws Exception {
    java.net.URL url = KafkaClientsIT.class.getResource("/kafka-clients/" + script);
    assertThat(url).as("test resource kafka-clients/%s", script).isNotNull();
    Files.copy(Path.of(url.toURI()), dir.resolve(script), StandardCopyOption.REPLACE_EXISTING);
  }

  private static String secret() {
    return server.secret(KafkaServer.TENANT_A);
  }

  // ---------------------------------------------------------------------------- the clients

  @Test
  @Order(1)
  void confluentKafkaForPythonProducesAndAGroupOfTwoSurvivesAKilledMember() throws Exception {
    Path dir = work.resolve("py");
    Run check =
        ExternalClients.run(
            List.of(PYTHON, "-c", "import confluent_kafka; print(confluent_kafka.libversion()[0])"),
            Map.of(),
            30,
            dir,
            PYTHON_MISSING);
    assertThat(check.status()).as("%s:\n%s", PYTHON_MISSING, check.output()).isZero();
    String stop = dir.resolve("stop").toString();
    groupOfTwo(
        "a/py",
        "a/py-group",
        dir,
        PYTHON_MISSING,
        () ->
            List.of(
                PYTHON,
                "consumer.py",
                server.bootstrap(),
                KafkaServer.TENANT_A,
                secret(),
                "a.py",
                "a/py-group",
                stop,
                "10"),
        () ->
            Client.start(
                "producer.py",
                List.of(
                    PYTHON,
                    "producer.py",
                    server.bootstrap(),
                    KafkaServer.TENANT_A,
                    secret(),
                    "a.py",
                    "" + EVENTS,
                    "" + KEYS,
                    "5"),
                dir,
                PYTHON_MISSING),
        new Stop.File(dir.resolve("stop")),
        false,
        true);
  }

  /**
   * kcat produces with {@code -P}, ten runs of 30 lines one after the other, so that the group
   * consumes while it produces (kcat reads its input in blocks of 128 bytes, so lines fed slowly
   * through a pipe would mostly come out at its end), and consumes with {@code -G}, librdkafka's
   * group consumer, which commits on its own: every 5 s (kcat's {@code -X auto.commit.interval.ms}
   * sets the legacy topic-level property, not the consumer's) and when partitions are revoked in a
   * rebalance. So what the killed member printed after its last commit, up to 5 s of it, comes
   * again; and an offset is stored for commit as a record is handed to kcat, a moment before kcat
   * prints it, so at most once within that moment (no loss was ever seen here; a loss fails the
   * test). Duplicates are bounded more loosely than for the clients that commit after processing:
   * each is a record the killed member printed, printed once more by the survivor, which itself
   * prints no record twice (its commit on revocation, in the rebalance that hands it the killed
   * member's partitions, is taken).
   */
  @Test
  @Order(2)
  void kcatProducesAndAGroupOfTwoSurvivesAKilledMember() throws Exception {
    Path dir = work.resolve("kcat");
    try (var old = Files.newDirectoryStream(dir, "batch-*.txt")) {
      for (Path f : old) {
        Files.delete(f);
      }
    }
    Run version = ExternalClients.run(List.of("kcat", "-V"), Map.of(), 30, dir, KCAT_MISSING);
    assertThat(version.status()).as("%s:\n%s", KCAT_MISSING, version.output()).isZero();
    List<String> sasl =
        List.of(
            "-b",
            server.bootstrap(),
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            "sasl.mechanisms=PLAIN",
            "-X",
            "sasl.username=" + KafkaServer.TENANT_A,
            "-X",
            "sasl.password=" + secret());
    groupOfTwo(
        "a/kcat",
        "a/kcat-group",
        dir,
        KCAT_MISSING,
        () -> {
          List<String> cmd = new ArrayList<>(List.of("kcat"));
          cmd.addAll(sasl);
          cmd.addAll(
              List.of(
                  "-G",
                  "a/kcat-group",
                  "-X",
                  "session.timeout.ms=6000",
                  "-X",
                  "heartbeat.interval.ms=500",
                  "-X",
                  "auto.offset.reset=earliest",
                  "-u",
                  "-f",
                  "record %p %o %k %s\\n",
                  "a.kcat"));
          return cmd;
        },
        () -> {
          // key:value lines, as producer.py makes them: key k<i % KEYS>, values counting up from
          // 0; in batch files of 30, each sent by a kcat -P of its own, one after the other.
          Map<String, Integer> counters = new HashMap<>();
          StringBuilder batch = new StringBuilder();
          for (int i = 0; i < EVENTS; i++) {
            String key = "k" + (i % KEYS);
            int value = counters.getOrDefault(key, 0);
            counters.put(key, value + 1);
            batch.append(key).append(':').append(value).append('\n');
            if ((i + 1) % KCAT_BATCH == 0 || i == EVENTS - 1) {
              Files.writeString(
                  dir.resolve(String.format("batch-%03d.txt", i / KCAT_BATCH)), batch);
              batch.setLength(0);
            }
          }
          List<String> cmd =
              new ArrayList<>(
                  List.of(
                      "sh",
                      "-c",
                      "for f in batch-*.txt; do kcat \"$@\" -l \"$f\" || exit 1; done",
                      "sh"));
          cmd.addAll(sasl);
          cmd.addAll(List.of("-X", "partitioner=murmur2_random", "-P", "-t", "a.kcat", "-K", ":"));
          return Client.start("kcat -P", cmd, dir, KCAT_MISSING);
        },
        new Stop.Signal(),
        true,
        false);
  }

  @Test
  @Order(3)
  void kafkajsProducesAndAGroupOfTwoSurvivesAKilledMember() throws Exception {
    Run install = npm.get(170, TimeUnit.SECONDS);
    assertThat(install.status())
        .as("npm installs kafkajs %s:\n%s", KAFKAJS_VERSION, install.output())
        .isZero();
    Path node = work.resolve("node");
    JsonNode installed =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(node.resolve("node_modules/kafkajs/package.json").toFile());
    assertThat(installed.get("version").asText()).isEqualTo(KAFKAJS_VERSION);
    String stop = work.resolve("js").resolve("stop").toString();
    groupOfTwo(
        "a/js",
        "a/js-group",
        node,
        NODE_MISSING,
        () ->
            List.of(
                "node",
                "consumer.js",
                server.bootstrap(),
                KafkaServer.TENANT_A,
                secret(),
                "a.js",
                "a/js-group",
                stop,
                "10"),
        () ->
            Client.start(
                "producer.js",
                List.of(
                    "node",
                    "producer.js",
                    server.bootstrap(),
                    KafkaServer.TENANT_A,
                    secret(),
                    "a.js",
                    "" + EVENTS,
                    "" + KEYS,
                    "0"),
                node,
                NODE_MISSING),
        new Stop.File(work.resolve("js").resolve("stop")),
        false,
        true);
  }

  /** The Java clients, each member a JVM of its own ({@link KafkaJavaMember}), one SIGKILLed. */
  @Test
  void javaClientsProduceAndAGroupOfTwoSurvivesAKilledMember() throws Exception {
    Path dir = work.resolve("java");
    Files.createDirectories(dir);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("java.class.path");
    String stop = dir.resolve("stop").toString();
    groupOfTwo(
        "a/java",
        "a/java-group",
        dir,
        "a JDK",
        () ->
            List.of(
                java,
                "-Xmx128m",
                "-cp",
                classpath,
                KafkaJavaMember.class.getName(),
                "consume",
                server.bootstrap(),
                KafkaServer.TENANT_A,
                secret(),
                "a.java",
                "a/java-group",
                stop,
                "10"),
        () ->
            Client.start(
                "producer",
                List.of(
                    java,
                    "-Xmx128m",
                    "-cp",
                    classpath,
                    KafkaJavaMember.class.getName(),
                    "produce",
                    server.bootstrap(),
                    KafkaServer.TENANT_A,
                    secret(),
                    "a.java",
                    "" + EVENTS,
                    "" + KEYS,
                    "5"),
                dir,
                "a JDK"),
        new Stop.File(dir.resolve("stop")),
        false,
        true);
  }

  // --------------------------------------------------------------------------- the scenario

  /** How the surviving member is asked to end: a file it looks for, or SIGTERM. */
  private sealed interface Stop {
    record File(Path path) implements Stop {}

    record Signal() implements Stop {}
  }

  @FunctionalInterface
  private interface Starter {
    Client start() throws Exception;
  }

  /** One record a member printed. */
  private record Rec(int partition, long offset, String key, int value) {
    String at() {
      return partition + "/" + offset;
    }
  }

  /**
   * Two members of {@code group} join; the producer starts once both hold partitions; member a is
   * killed once it printed {@link #KILL_AFTER} records; member b takes over; then the checks.
   */
  private void groupOfTwo(
      String topic,
      String group,
      Path dir,
      String missing,
      Supplier<List<String>> member,
      Starter producerStarter,
      Stop stop,
      boolean assignmentsOnStderr,
      boolean printsCommitsAndDeliveries)
      throws Exception {
    Client a = Client.start("member a", member.get(), dir, missing);
    Client b = Client.start("member b", member.get(), dir, missing);
    List<Client> all = new ArrayList<>(List.of(a, b));
    await(
        "both members to join and hold partitions",
        Duration.ofSeconds(60),
        () -> {
          Set<Integer> pa = assignment(a, assignmentsOnStderr);
          Set<Integer> pb = assignment(b, assignmentsOnStderr);
          Set<Integer> both = new TreeSet<>(pa);
          both.addAll(pb);
          return !pa.isEmpty() && !pb.isEmpty() && both.size() == PARTITIONS;
        },
        all);

    Client producer = producerStarter.start();
    all.add(producer);
    await(
        "member a to print " + KILL_AFTER + " records",
        Duration.ofSeconds(60),
        () -> records(a).size() >= KILL_AFTER,
        all);
    Set<Integer> aHeld = assignment(a, assignmentsOnStderr);
    a.kill();
    List<Rec> killedPrinted = records(a);
    Map<Integer, Long> killedCommitted = commits(a);

    assertThat(producer.awaitExit(Duration.ofSeconds(60)))
        .as("the producer exits 0:\n%s", producer.transcript())
        .isZero();
    Map<String, Rec> stored = stored(topic, all);
    if (printsCommitsAndDeliveries) {
      // The producer's own account: each record on the partition Kafka's murmur2 picks, which is
      // where Boxline put it (checked against the stored events above).
      List<String> delivered =
          producer.out.stream().filter(l -> DELIVERED.matcher(l).matches()).toList();
      assertThat(delivered).as(producer.transcript()).hasSize(EVENTS);
      for (String line : delivered) {
        Matcher m = DELIVERED.matcher(line);
        assertThat(m.matches()).isTrue();
        assertThat(Integer.parseInt(m.group(1)))
            .as("the partition the producer names for %s", line)
            .isEqualTo(Partitioner.kafkaCompatible().partition(m.group(2), PARTITIONS));
      }
    }

    await(
        "every event consumed by the group",
        Duration.ofSeconds(60),
        () -> {
          Set<String> seen = new java.util.HashSet<>();
          killedPrinted.forEach(r -> seen.add(r.at()));
          records(b).forEach(r -> seen.add(r.at()));
          return seen.size() == EVENTS;
        },
        all);
    // The commits are the subscription's cursors: all at the heads.
    List<Long> heads = server.heads(topic);
    await(
        "the committed offsets (cursors) to reach the heads " + heads,
        Duration.ofSeconds(30),
        () -> cursors(group).equals(heads),
        all);
    Set<Integer> survivorHolds = assignment(b, assignmentsOnStderr);
    if (stop instanceof Stop.File f) {
      Files.writeString(f.path(), "stop\n");
    } else {
      b.terminate();
    }
    assertThat(b.awaitExit(Duration.ofSeconds(30)))
        .as("the surviving member ends cleanly:\n%s", b.transcript())
        .isZero();
    String context = a.transcript() + "\n" + b.transcript();

    // Every record printed is the stored event at that offset (offset = sequence - 1).
    List<Rec> survivor = records(b);
    for (Rec r : concat(killedPrinted, survivor)) {
      Rec event = stored.get(r.at());
      assertThat(event).as("offset %s names a stored event", r.at()).isNotNull();
      assertThat(r).as("the record at %s", r.at()).isEqualTo(event);
    }
    // Nothing lost.
    Set<String> consumed = new LinkedHashSet<>();
    concat(killedPrinted, survivor).forEach(r -> consumed.add(r.at()));
    assertThat(consumed).as(context).containsExactlyInAnyOrderElementsOf(stored.keySet());
    // Per key, each member saw the values in increasing order (no repeats within a member).
    for (Client c : List.of(a, b)) {
      Map<String, Integer> last = new HashMap<>();
      for (Rec r : records(c)) {
        Integer before = last.put(r.key(), r.value());
        assertThat(before == null || before < r.value())
            .as("%s: %s after value %s of key %s\n%s", c.name, r, before, r.key(), context)
            .isTrue();
      }
    }
    // The killed member died with events left on its partitions; the survivor took them over.
    Set<String> killedSaw = new java.util.HashSet<>();
    killedPrinted.forEach(r -> killedSaw.add(r.at()));
    assertThat(
            survivor.stream()
                .filter(r -> aHeld.contains(r.partition()) && !killedSaw.contains(r.at()))
                .count())
        .as(
            "member b consumed events member a had not reached on %s, its partitions when it was"
                + " killed\n%s",
            aHeld, context)
        .isPositive();
    assertThat(survivorHolds)
        .as("member b's partitions at the end\n%s", context)
        .hasSize(PARTITIONS);
    // Duplicates: only records the killed member printed, each delivered once more to the survivor
    // (so no more than it printed); with commits after processing, only those after the last
    // commit it printed (so no more than it printed after that commit).
    Map<String, Integer> killedCounts = new HashMap<>();
    killedPrinted.forEach(r -> killedCounts.merge(r.at(), 1, Integer::sum));
    Set<String> survivorSeen = new java.util.HashSet<>();
    List<Rec> duplicates = new ArrayList<>();
    for (Rec r : survivor) {
      assertThat(survivorSeen.add(r.at())).as("member b printed %s twice\n%s", r, context).isTrue();
      if (killedCounts.containsKey(r.at())) {
        duplicates.add(r);
      }
    }
    assertThat(killedCounts.values())
        .as("member a printed no record twice\n%s", context)
        .allMatch(n -> n == 1);
    if (printsCommitsAndDeliveries) {
      for (Rec d : duplicates) {
        assertThat(d.offset())
            .as("a duplicate comes after member a's last commit %s\n%s", killedCommitted, context)
            .isGreaterThanOrEqualTo(killedCommitted.getOrDefault(d.partition(), 0L));
      }
    }
    System.out.printf(
        "%s: member a printed %d records (partitions %s) before SIGKILL, member b %d; %d"
            + " duplicates%n",
        topic, killedPrinted.size(), aHeld, survivor.size(), duplicates.size());
  }

  /**
   * The stored events of the topic, by {@code partition/offset}: {@link #EVENTS} of them, each
   * key's on the partition Kafka's murmur2 picks, its values 0, 1, 2, ... in order.
   */
  private static Map<String, Rec> stored(String topic, List<Client> all) throws Exception {
    await(
        "the " + EVENTS + " events stored",
        Duration.ofSeconds(30),
        () -> {
          try {
            return server.heads(topic).stream().mapToLong(Long::longValue).sum() == EVENTS;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        },
        all);
    Map<String, Rec> out = new TreeMap<>();
    Map<String, Integer> next = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      for (JsonNode e : server.events(topic, p)) {
        String key = e.get("key").asText();
        int value =
            Integer.parseInt(
                new String(
                    Base64.getDecoder().decode(e.get("payloadBase64").asText()),
                    StandardCharsets.UTF_8));
        Rec r = new Rec(p, e.get("sequence").asLong() - 1, key, value);
        assertThat(p)
            .as("event %s of key %s on Kafka's partition for it", r, key)
            .isEqualTo(Partitioner.kafkaCompatible().partition(key, PARTITIONS));
        assertThat(value)
            .as("the values of key %s in order", key)
            .isEqualTo(next.getOrDefault(key, 0));
        next.put(key, value + 1);
        out.put(r.at(), r);
      }
    }
    assertThat(out).hasSize(EVENTS);
    assertThat(next).hasSize(KEYS);
    return out;
  }

  /** The subscription's cursor per partition, as the admin API shows them. */
  private static List<Long> cursors(String group) {
    try {
      JsonNode lag = server.get("/v1/subscriptions/" + KafkaServer.enc(group) + "/lag");
      Long[] out = new Long[PARTITIONS];
      for (JsonNode p : lag.get("partitions")) {
        out[p.get("partition").asInt()] = p.get("cursor").asLong();
      }
      return java.util.Arrays.asList(out);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static List<Rec> records(Client c) {
    List<Rec> out = new ArrayList<>();
    for (String line : c.out) {
      Matcher m = RECORD.matcher(line);
      if (m.matches()) {
        out.add(
            new Rec(
                Integer.parseInt(m.group(1)),
                Long.parseLong(m.group(2)),
                m.group(3),
                Integer.parseInt(m.group(4))));
      }
    }
    return out;
  }

  /** The last commit each partition had, as the member printed them (the next offset to read). */
  private static Map<Integer, Long> commits(Client c) {
    Map<Integer, Long> out = new HashMap<>();
    for (String line : c.out) {
      Matcher m = COMMIT.matcher(line);
      if (m.matches()) {
        out.put(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)));
      }
    }
    return out;
  }

  private static final Pattern BRACKETED = Pattern.compile("\\[(\\d+)\\]");

  /**
   * A member's partitions as it last reported them: {@code assigned 0,2} and {@code revoked ...}
   * lines of our programs, or kcat's {@code % Group ... rebalanced (...): assigned: a.kcat [0],
   * a.kcat [2]} on standard error.
   */
  private static Set<Integer> assignment(Client c, boolean stderr) {
    Set<Integer> current = new TreeSet<>();
    for (String line : stderr ? c.err : c.out) {
      if (stderr && line.contains("rebalanced") && line.contains("assigned:")) {
        current.clear();
        Matcher m = BRACKETED.matcher(line.substring(line.indexOf("assigned:")));
        while (m.find()) {
          current.add(Integer.parseInt(m.group(1)));
        }
      } else if (stderr && line.contains("rebalanced") && line.contains("revoked:")) {
        current.clear();
      } else if (!stderr && line.startsWith("assigned")) {
        current.clear();
        for (String p : line.substring("assigned".length()).trim().split(",")) {
          if (!p.isEmpty()) {
            current.add(Integer.parseInt(p));
          }
        }
      } else if (!stderr && line.startsWith("revoked")) {
        current.clear();
      }
    }
    return current;
  }

  private static <T> List<T> concat(List<T> x, List<T> y) {
    List<T> out = new ArrayList<>(x);
    out.addAll(y);
    return out;
  }

  /** Waits (bounded) for a condition; the clients' output and the server's log when it fails. */
  private static void await(String what, Duration timeout, BooleanSupplier done, List<Client> all)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        StringBuilder s = new StringBuilder();
        all.forEach(c -> s.append(c.transcript()).append('\n'));
        List<String> log = server.process.output;
        s.append("--- server log (last lines) ---\n")
            .append(String.join("\n", log.subList(Math.max(0, log.size() - 60), log.size())));
        fail("timed out after " + timeout + " waiting for " + what + "\n" + s);
      }
      Thread.sleep(20);
    }
  }

  // ----------------------------------------------------------------------------- processes

  /** A client program running in the background, its output lines kept as they come. */
  private static final class Client implements AutoCloseable {
    final String name;
    final Process process;
    final List<String> out = new CopyOnWriteArrayList<>();
    final List<String> err = new CopyOnWriteArrayList<>();
    private final List<Thread> readers = new ArrayList<>();

    private Client(String name, Process process) {
      this.name = name;
      this.process = process;
      readers.add(reader(process.getInputStream(), out));
      readers.add(reader(process.getErrorStream(), err));
    }

    static Client start(String name, List<String> command, Path dir, String missing) {
      ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
      Process p;
      try {
        p = pb.start();
      } catch (IOException e) {
        return fail("cannot run " + command.get(0) + ": " + missing + " (" + e.getMessage() + ")");
      }
      Client c = new Client(name, p);
      started.add(c);
      return c;
    }

    private Thread reader(InputStream in, List<String> lines) {
      Thread t =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  // the process ended
                }
              },
              name + " output");
      t.setDaemon(true);
      t.start();
      return t;
    }

    /** SIGKILL, and every line it printed before. */
    void kill() throws InterruptedException {
      process.destroyForcibly();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(name + " killed").isTrue();
      drain();
    }

    /** SIGTERM. */
    void terminate() {
      process.destroy();
    }

    /** The exit status once it ended within the timeout (fails the test when it did not). */
    int awaitExit(Duration timeout) throws InterruptedException {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        fail(name + " did not end within " + timeout + ":\n" + transcript());
      }
      drain();
      return process.exitValue();
    }

    private void drain() throws InterruptedException {
      for (Thread t : readers) {
        t.join(10_000);
      }
    }

    String transcript() {
      return "--- "
          + name
          + (process.isAlive() ? " (running)" : " (exit " + process.exitValue() + ")")
          + ": standard output ---\n"
          + tail(out)
          + "\n--- "
          + name
          + ": standard error ---\n"
          + tail(err);
    }

    private static String tail(List<String> lines) {
      int from = Math.max(0, lines.size() - 80);
      return (from > 0 ? "(" + from + " lines before)\n" : "")
          + String.join("\n", lines.subList(from, lines.size()));
    }

    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
