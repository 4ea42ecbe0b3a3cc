package io.boxline.spi;

import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.util.List;
import java.util.Optional;

/**
 * The store's role as a catalog: namespaces, topics and subscriptions, and what is configured on
 * them. Creating is idempotent: creating what exists with the same settings returns it; with other
 * settings it fails with a {@link io.boxline.ValidationException} that names the difference.
 */
public interface CatalogStore {

  /** Creates the namespace and every missing parent. */
  void createNamespace(NamespacePath namespace);

  /** Creates a topic with {@code partitions} partitions and the given sequencing. */
  TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing);

  /** {@link #createTopic(TopicName, int, Sequencing)} with {@link Sequencing#SEQUENCER}. */
  default TopicInfo createTopic(TopicName topic, int partitions) {
    return createTopic(topic, partitions, Sequencing.SEQUENCER);
  }

  Optional<TopicInfo> findTopic(TopicName topic);

  Optional<TopicInfo> findTopic(long topicId);

  List<TopicInfo> topics();

  /** Creates the subscription and its cursors at the spec's start position. */
  SubscriptionInfo createSubscription(SubscriptionSpec spec);

  Optional<SubscriptionInfo> findSubscription(String name);

  /**
   * Moves every cursor of the subscription to {@code to} (computed as when a subscription is
   * created there) and drops its parked events after the new positions, in one transaction; returns
   * the number of cursors. The caller makes sure no consumer runs.
   */
  int rewindCursors(long subscriptionId, StartPosition to);

  /**
   * Moves the subscription's cursors of these partitions to these positions, back or forward, and
   * drops its parked events after the new positions, in one transaction. Returns how many cursors
   * moved (a partition the subscription does not read is left out).
   */
  int seekCursors(long subscriptionId, java.util.Map<PartitionKey, Long> positions);

  /** Every namespace, by path. */
  List<NamespacePath> namespaces();

  /** Every subscription, by name. */
  List<SubscriptionInfo> subscriptions();

  /**
   * Deletes the subscription and everything it owns, in one transaction: its cursors, parked events
   * (retries, dead letters), inbox, and its group's leases, members and policy override. Returns
   * false when it did not exist. The caller decides whether live consumers may lose it.
   */
  boolean deleteSubscription(SubscriptionInfo subscription);

  /**
   * Gives the subscription the name {@code to} in one transaction, dropping its old group's leases
   * and members; its cursors, parked events and inbox stay. Returns it as stored now. The caller
   * checks that no consumer runs and that the name {@code to} is free ({@link
   * io.boxline.ValidationException} from {@code Admin}); a store refuses a taken name by its unique
   * key, with a {@link io.boxline.StoreException}.
   */
  SubscriptionInfo renameSubscription(SubscriptionInfo subscription, String to);

  /**
   * Deletes the topic and everything on it, in one transaction: its partitions, log, outbox rows
   * not yet sequenced (and set-aside ones), idempotency keys, and every subscription's cursors,
   * parked events and leases on it (the subscriptions stay, reading their other topics). Returns
   * false when it did not exist. The caller decides whether subscriptions may lose it.
   */
  boolean deleteTopic(long topicId);

  /**
   * Deletes a namespace that holds no topics and no namespaces. Returns false when it did not
   * exist.
   *
   * @throws io.boxline.ValidationException when it is not empty (the message says what is in it)
   */
  boolean deleteNamespace(NamespacePath namespace);

  /** The partition count every store accepts for a new topic: 1 to 65,536. */
  static void requirePartitions(TopicName topic, int partitions) {
    if (partitions < 1 || partitions > 65_536) {
      throw new io.boxline.ValidationException(
          "a topic has 1 to 65536 partitions, not " + partitions + " (topic '" + topic + "')");
    }
  }

  /**
   * Checks that a topic found under the name being created has the settings asked for; returns it.
   */
  static TopicInfo requireSameTopic(
      TopicInfo existing, int partitions, io.boxline.Sequencing sequencing) {
    if (existing.partitions() != partitions) {
      throw new io.boxline.ValidationException(
          "topic '"
              + existing.name()
              + "' already exists with "
              + existing.partitions()
              + " partitions, not "
              + partitions
              + "; partition counts never change because that would move keys");
    }
    if (existing.sequencing() != sequencing) {
      throw new io.boxline.ValidationException(
          "topic '"
              + existing.name()
              + "' already exists with sequencing "
              + existing.sequencing()
              + ", not "
              + sequencing
              + "; a topic's sequencing never changes (create another topic)");
    }
    return existing;
  }

  /**
   * Checks that a subscription found under the name being created reads the topics asked for;
   * returns it.
   */
  static SubscriptionInfo requireSameTopics(SubscriptionInfo existing, SubscriptionSpec spec) {
    if (!new java.util.HashSet<>(existing.topics())
        .equals(new java.util.HashSet<>(spec.topics()))) {
      throw new io.boxline.ValidationException(
          "subscription '"
              + spec.name()
              + "' already exists with topics "
              + existing.topics()
              + ", not "
              + spec.topics()
              + "; use another name");
    }
    return existing;
  }

  /**
   * The refusal {@link #deleteNamespace} throws, the same from every store: what is in the
   * namespace, and the fix.
   */
  static io.boxline.ValidationException namespaceNotEmpty(
      NamespacePath namespace, long topics, long namespaces) {
    return new io.boxline.ValidationException(
        "namespace '"
            + namespace
            + "' is not empty ("
            + topics
            + " topics, "
            + namespaces
            + " namespaces in it); delete them first");
  }

  /** The topic's retention ({@link RetentionPolicy#forever()} until one is set). */
  RetentionPolicy retention(long topicId);

  /** Sets the topic's retention (what {@link RetentionStore#purge} deletes). */
  void setRetention(long topicId, RetentionPolicy policy);
}
