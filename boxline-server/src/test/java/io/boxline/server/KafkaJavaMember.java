package io.boxline.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java clients as programs of their own, for {@link KafkaClientsIT}, which kills them with
 * SIGKILL: {@code consume BOOTSTRAP USER PASSWORD TOPIC GROUP STOP_FILE PAUSE_MS} prints {@code
 * assigned P,P}, {@code revoked ...}, {@code record P O KEY VALUE} and, after a synchronous commit
 * of the offset past each record, {@code commit P O}, until STOP_FILE exists; {@code produce
 * BOOTSTRAP USER PASSWORD TOPIC COUNT KEYS PAUSE_MS} sends record i with key k(i % KEYS) and the
 * key's counter as value and prints {@code delivered P KEY VALUE} per acknowledgement.
 */
public final class KafkaJavaMember {
  private KafkaJavaMember() {}

  private static synchronized void out(String line) {
    System.out.println(line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    Properties p = KafkaServer.client(args[1], args[2], args[3]);
    String topic = args[4];
    if (args[0].equals("produce")) {
      int count = Integer.parseInt(args[5]);
      int keys = Integer.parseInt(args[6]);
      int pause = Integer.parseInt(args[7]);
      p.put("acks", "all");
      p.put("linger.ms", "5");
      Map<String, Integer> counters = new HashMap<>();
      try (KafkaProducer<String, String> producer =
          new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < count; i++) {
          String key = "k" + (i % keys);
          String v = "" + (counters.merge(key, 1, Integer::sum) - 1);
          producer.send(
              new ProducerRecord<>(topic, key, v),
              (m, e) -> {
                if (e != null) {
                  out("failed " + key + " " + e);
                } else {
                  out("delivered " + m.partition() + " " + key + " " + v);
                }
              });
          if (pause > 0) {
            Thread.sleep(pause);
          }
        }
        producer.flush();
      }
      return;
    }
    String group = args[5];
    Path stop = Path.of(args[6]);
    int pause = Integer.parseInt(args[7]);
    p.put("group.id", group);
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("session.timeout.ms", "6000");
    p.put("heartbeat.interval.ms", "500");
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(
          List.of(topic),
          new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
              out("revoked " + ids(partitions));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
              out("assigned " + ids(consumer.assignment()));
            }
          });
      while (!Files.exists(stop)) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
          out("record " + r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
          if (pause > 0) {
            Thread.sleep(pause);
          }
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          try {
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1)));
            out("commit " + r.partition() + " " + (r.offset() + 1));
          } catch (RuntimeException e) {
            System.err.println("commit failed " + r.partition() + ": " + e);
          }
        }
      }
    }
  }

  private static String ids(Collection<TopicPartition> partitions) {
    return partitions.stream()
        .map(tp -> String.valueOf(tp.partition()))
        .sorted()
        .collect(Collectors.joining(","));
  }
}
