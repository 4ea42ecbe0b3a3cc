package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.TopicName;
import io.boxline.ValidationException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KafkaNamesTest {
  @Test
  void aTopicAndItsKafkaNameMapBothWays() {
    assertThat(KafkaNames.kafkaName(TopicName.parse("acme/billing/orders")))
        .contains("acme.billing.orders");
    assertThat(KafkaNames.topic("acme.billing.orders"))
        .isEqualTo(TopicName.parse("acme/billing/orders"));
    assertThat(KafkaNames.topic("a.b")).isEqualTo(TopicName.parse("a/b"));
  }

  @Test
  void namesWithDotsOrTooLongHaveNoKafkaName() {
    assertThat(KafkaNames.kafkaName(TopicName.parse("acme/orders.v2"))).isEmpty();
    assertThat(KafkaNames.kafkaName(TopicName.parse("acme.eu/orders"))).isEmpty();
    String long120 = "x".repeat(120);
    assertThat(KafkaNames.kafkaName(TopicName.of(long120, long120))).isPresent();
    assertThat(KafkaNames.kafkaName(TopicName.of(long120 + "/" + long120, "t".repeat(7))))
        .isPresent();
    assertThat(KafkaNames.kafkaName(TopicName.of(long120 + "/" + long120, "t".repeat(8))))
        .isEmpty();
  }

  @Test
  void aKafkaNameThatIsNoBoxlineTopicIsRefusedSayingHowToWriteOne() {
    for (String bad :
        new String[] {"orders", ".orders", "acme.", "acme..orders", "acme.ord ers", ""}) {
      assertThatThrownBy(() -> KafkaNames.topic(bad))
          .as(bad)
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining(bad.isEmpty() ? "required" : "names no Boxline topic");
    }
  }

  /**
   * Every generated topic whose parts have no dot round-trips; the Kafka name is legal for Kafka.
   */
  @Test
  void generatedNamesRoundTrip() {
    Random random = new Random(7);
    String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
    for (int i = 0; i < 2_000; i++) {
      int depth = 1 + random.nextInt(4);
      StringBuilder path = new StringBuilder();
      for (int d = 0; d < depth; d++) {
        path.append(d == 0 ? "" : "/").append(part(random, alphabet));
      }
      TopicName t = TopicName.of(path.toString(), part(random, alphabet));
      String kafka = KafkaNames.kafkaName(t).orElseThrow();
      assertThat(kafka).matches("[a-zA-Z0-9._-]{1,249}");
      assertThat(KafkaNames.topic(kafka)).isEqualTo(t);
    }
  }

  private static String part(Random random, String alphabet) {
    StringBuilder b = new StringBuilder();
    b.append(alphabet.charAt(random.nextInt(62))); // names start with a letter or digit
    for (int i = random.nextInt(12); i > 0; i--) {
      b.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return b.toString();
  }
}
