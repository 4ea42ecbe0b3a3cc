package io.boxline.server.internal;

import io.boxline.NamespacePath;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import java.util.Optional;

/**
 * Topic names between Boxline and Kafka. A Boxline topic {@code acme/billing/orders} is the Kafka
 * topic {@code acme.billing.orders}: the namespace's segments and the topic's name joined by dots.
 * The mapping is one-to-one over names without dots; a Boxline topic whose namespace segments or
 * name hold a dot, or whose Kafka name would pass Kafka's 249 characters, has no Kafka name and is
 * not shown to Kafka clients. A Kafka name reads back by its last dot: before it the namespace,
 * after it the topic.
 */
final class KafkaNames {
  /** Kafka's longest topic name. */
  static final int MAX_LENGTH = 249;

  private KafkaNames() {}

  /** The Kafka name of a Boxline topic, or empty when it has none. */
  static Optional<String> kafkaName(TopicName topic) {
    for (String segment : topic.namespace().segments()) {
      if (segment.indexOf('.') >= 0) {
        return Optional.empty();
      }
    }
    if (topic.name().indexOf('.') >= 0) {
      return Optional.empty();
    }
    String name = String.join(".", topic.namespace().segments()) + "." + topic.name();
    return name.length() > MAX_LENGTH ? Optional.empty() : Optional.of(name);
  }

  /**
   * The Boxline topic of a Kafka name; a {@link ValidationException} that says why when the name
   * cannot be one (no dot, an empty part, a character Boxline names do not take).
   */
  static TopicName topic(String kafkaName) {
    if (kafkaName == null || kafkaName.isEmpty()) {
      throw new ValidationException("a topic name is required");
    }
    int dot = kafkaName.lastIndexOf('.');
    if (dot <= 0 || dot == kafkaName.length() - 1) {
      throw new ValidationException(
          "Kafka topic '"
              + kafkaName
              + "' names no Boxline topic: write <namespace>.<topic> (acme.orders for the Boxline"
              + " topic acme/orders)");
    }
    try {
      return TopicName.of(
          NamespacePath.of(kafkaName.substring(0, dot).replace('.', '/')),
          kafkaName.substring(dot + 1));
    } catch (ValidationException e) {
      throw new ValidationException(
          "Kafka topic '" + kafkaName + "' names no Boxline topic: " + e.getMessage());
    }
  }
}
