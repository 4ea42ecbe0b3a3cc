package io.boxline.chaos;

import io.boxline.NamespacePath;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Names and identities shared by the run, its children and the checker. */
final class ChaosNames {
  static final NamespacePath NAMESPACE = NamespacePath.of("chaos");

  /** Sequenced by the sequencer (outbox, then log). */
  static final TopicName ORDERS = TopicName.of("chaos", "orders");

  /** Sequenced in the producer's transaction. */
  static final TopicName ALERTS = TopicName.of("chaos", "alerts");

  static final int ORDERS_PARTITIONS = 8;
  static final int ALERTS_PARTITIONS = 4;

  /** Transactional handler writing effect rows in Boxline's transaction: exactly once. */
  static final String EFFECTS = "effects";

  /** Plain batch handler recording each delivery with its own insert: at least once. */
  static final String DELIVERIES = "deliveries";

  /** Relay to the private NATS JetStream. */
  static final String RELAY = "relay";

  static final String EVENT_TYPE = "chaos.event";

  /** Events of this type fail in the deliveries handler every time: they must end dead-lettered. */
  static final String POISON_TYPE = "chaos.poison";

  static final String POISON_ERROR = "designed poison event";
  static final String TASK_TYPE = "chaos-task";

  private ChaosNames() {}

  /** The id of event {@code index} of an order: derived, so the checker needs no list of ids. */
  static UUID eventId(String orderId, int index) {
    return UUID.nameUUIDFromBytes((orderId + "/" + index).getBytes(StandardCharsets.UTF_8));
  }

  static String idempotencyKey(String orderId, int index) {
    return "idem-" + orderId + "-" + index;
  }

  /** NATS subject of an event: one per topic and partition. */
  static String subject(TopicName topic, int partition) {
    return "chaos." + topic.name() + "." + partition;
  }
}
