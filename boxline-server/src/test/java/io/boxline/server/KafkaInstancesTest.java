package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Two server instances on one database are one Kafka cluster: both are brokers in metadata, one of
 * them coordinates a group whose members came in through either, and when it is SIGKILLed the other
 * takes the group over and its members go on where they committed.
 */
class KafkaInstancesTest {
  private static final String TOPIC = "a.multi";
  private static final String GROUP = "a/multi-group";
  private static final int PARTITIONS = 3;
  private static final int EVENTS = 150;

  /** One consumer of the group on a thread of its own, bootstrapped at one instance. */
  private static final class Member implements AutoCloseable {
    final Set<String> consumed = ConcurrentHashMap.newKeySet();
    final List<String> errors = new CopyOnWriteArrayList<>();
    volatile Set<Integer> assignment = Set.of();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Member(String name, Properties p) {
      p.put("group.id", GROUP);
      p.put("enable.auto.commit", "false");
      p.put("auto.offset.reset", "earliest");
      p.put("session.timeout.ms", "6000");
      p.put("heartbeat.interval.ms", "500");
      p.put("client.id", name);
      thread =
          new Thread(
              () -> {
                try (KafkaConsumer<String, String> c =
                    new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                  c.subscribe(
                      List.of(TOPIC),
                      new ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                          assignment = Set.of();
                        }

                        @Override
                        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                          assignment =
                              c.assignment().stream()
                                  .map(TopicPartition::partition)
                                  .collect(Collectors.toSet());
                        }
                      });
                  while (!stop.get()) {
                    var records = c.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> r : records) {
                      consumed.add(r.partition() + "/" + r.offset());
                    }
                    if (!records.isEmpty()) {
                      try {
                        c.commitSync(Duration.ofSeconds(5));
                      } catch (RuntimeException e) {
                        errors.add(e.toString()); // a rebalance or the coordinator moving
                      }
                    }
                  }
                } catch (RuntimeException e) {
                  errors.add("ended: " + e);
                }
              },
              "test-member-" + name);
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(20_000);
    }
  }

  private static void produce(KafkaServer at, int from, int to) throws Exception {
    Properties p = at.client(KafkaServer.TENANT_A);
    p.put("acks", "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = from; i < to; i++) {
        producer.send(new ProducerRecord<>(TOPIC, "k" + (i % 10), "" + i));
      }
      producer.flush();
    }
  }

  private static Set<String> union(Member x, Member y) {
    Set<String> all = new HashSet<>(x.consumed);
    all.addAll(y.consumed);
    return all;
  }

  @Test
  void twoInstancesServeOneGroupAndTheSurvivorTakesItOverWhenTheCoordinatorIsKilled()
      throws Exception {
    String topics = "  - {name: a/multi, partitions: " + PARTITIONS + "}\n";
    try (KafkaServer first = new KafkaServer(topics, "{port: 0, nodeTimeout: 3s}");
        KafkaServer second = first.another()) {
      Properties adminProps = first.client(KafkaServer.ADMIN);
      adminProps.put("bootstrap.servers", first.bootstrap() + "," + second.bootstrap());
      try (Admin admin = Admin.create(adminProps)) {
        // Both instances are brokers, with node ids of their own.
        List<Node> nodes = new ArrayList<>();
        KafkaServer.await(
            "both instances in the cluster's metadata",
            Duration.ofSeconds(30),
            () -> {
              try {
                nodes.clear();
                nodes.addAll(admin.describeCluster().nodes().get());
                return nodes.size() == 2;
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            });
        assertThat(nodes.stream().map(Node::port).collect(Collectors.toSet()))
            .containsExactlyInAnyOrder(first.port, second.port);
        assertThat(nodes.stream().map(Node::id).distinct()).hasSize(2);

        try (Member one = new Member("one", first.client(KafkaServer.TENANT_A));
            Member two = new Member("two", second.client(KafkaServer.TENANT_A))) {
          // One group, though its members came in through different instances: the partitions
          // are split between them, not each given all of them by a coordinator of its own.
          KafkaServer.await(
              "the members, one through each instance, to share the partitions",
              Duration.ofSeconds(60),
              () -> {
                Set<Integer> a = one.assignment;
                Set<Integer> b = two.assignment;
                Set<Integer> both = new TreeSet<>(a);
                both.addAll(b);
                return !a.isEmpty()
                    && !b.isEmpty()
                    && both.size() == PARTITIONS
                    && a.size() + b.size() == PARTITIONS;
              });
          ConsumerGroupDescription group =
              admin.describeConsumerGroups(List.of(GROUP)).all().get().get(GROUP);
          assertThat(group.members()).hasSize(2);
          int coordinatorPort = group.coordinator().port();
          KafkaServer coordinator = coordinatorPort == first.port ? first : second;
          KafkaServer survivor = coordinator == first ? second : first;

          produce(first, 0, EVENTS / 2);
          KafkaServer.await(
              "the first half consumed",
              Duration.ofSeconds(60),
              () -> union(one, two).size() == EVENTS / 2);

          coordinator.process.kill9();

          produce(survivor, EVENTS / 2, EVENTS);
          KafkaServer.await(
              "every event consumed after the coordinator was killed: "
                  + union(one, two).size()
                  + " of "
                  + EVENTS
                  + "; errors "
                  + one.errors
                  + " "
                  + two.errors,
              Duration.ofSeconds(90),
              () -> union(one, two).size() == EVENTS);
          Set<String> stored = new HashSet<>();
          for (int p = 0; p < PARTITIONS; p++) {
            for (JsonNode e : survivor.events("a/multi", p)) {
              stored.add(p + "/" + (e.get("sequence").asLong() - 1));
            }
          }
          assertThat(union(one, two)).as("nothing lost").isEqualTo(stored);

          // The survivor coordinates the group now, with both members, and the commits reached
          // the heads (the subscription's cursors).
          KafkaServer.await(
              "the survivor to coordinate the group with both members",
              Duration.ofSeconds(60),
              () -> {
                try {
                  ConsumerGroupDescription d =
                      admin.describeConsumerGroups(List.of(GROUP)).all().get().get(GROUP);
                  return d.coordinator().port() == survivor.port && d.members().size() == 2;
                } catch (Exception e) {
                  return false;
                }
              });
          List<Long> heads = survivor.heads("a/multi");
          KafkaServer.await(
              "the cursors at the heads " + heads,
              Duration.ofSeconds(30),
              () -> {
                try {
                  JsonNode lag =
                      survivor.get("/v1/subscriptions/" + KafkaServer.enc(GROUP) + "/lag");
                  Long[] cursors = new Long[PARTITIONS];
                  for (JsonNode p : lag.get("partitions")) {
                    cursors[p.get("partition").asInt()] = p.get("cursor").asLong();
                  }
                  return List.of(cursors).equals(heads);
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              });
          assertThat(admin.describeCluster().nodes().get())
              .as("the killed instance left the metadata")
              .extracting(Node::port)
              .containsExactly(survivor.port);
          System.out.printf(
              "two instances: %d events consumed; member errors during the takeover: %s %s%n",
              EVENTS, one.errors, two.errors);
        }
      }
    }
  }
}
