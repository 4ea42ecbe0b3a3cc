package io.boxline;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Namespaces, topics and subscriptions. Every call is idempotent where it can be. */
public interface Admin {
  /** Creates the namespace and its missing ancestors; does nothing when it exists. */
  void createNamespace(NamespacePath namespace);

  /**
   * Creates a topic with {@code partitions} partitions (1 to 65,536) in an existing namespace.
   * Creating a topic that exists with the same partition count returns it; a different count is an
   * error (partition counts do not change, because that would move keys).
   */
  default TopicInfo createTopic(TopicName topic, int partitions) {
    return createTopic(topic, partitions, Sequencing.SEQUENCER);
  }

  /**
   * Creates a topic whose events are numbered as {@code sequencing} says (see {@link Sequencing});
   * the choice is fixed for the topic's life. Creating a topic that exists with the same partition
   * count and sequencing returns it; anything different is an error.
   */
  TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing);

  Optional<TopicInfo> topic(TopicName topic);

  List<TopicInfo> topics();

  /**
   * Creates a subscription; creating one that exists with the same topics returns it unchanged (its
   * cursors are kept), different topics are an error.
   */
  SubscriptionInfo createSubscription(SubscriptionSpec spec);

  Optional<SubscriptionInfo> subscription(String name);

  /**
   * Moves every cursor of a subscription to {@code to}, back or forward: {@link
   * StartPosition#earliest()} delivers everything still in the log again, {@link
   * StartPosition#at(java.time.Instant)} the events created from then on, {@link
   * StartPosition#latest()} skips the backlog. Positions are computed as for a new subscription.
   * Retries, waiting events and dead letters of the subscription after the new positions are
   * dropped, since they will be delivered again; those before stay. A consumer with an inbox skips
   * events it recorded.
   *
   * <p>The subscription must have no live consumers (as with Kafka's offset reset): close them
   * first, rewind, start them again. Returns the new positions.
   *
   * @throws BusySubscriptionException when a consumer of the subscription is live
   * @throws NotFoundException when the subscription does not exist
   */
  List<PartitionLag> rewind(String subscription, StartPosition to);

  /**
   * Position, backlog and (where the store reports it) age of the oldest unhandled event of every
   * partition of a subscription.
   */
  List<PartitionLag> lag(String subscription);

  /**
   * {@link #lag(String)} of every subscription, by name, in one statement: what a metrics collector
   * reads. Throws {@link UnsupportedOperationException} when the store cannot (PostgreSQL can).
   */
  Map<String, List<PartitionLag>> lagBySubscription();

  /**
   * Events published but not yet sequenced. Throws {@link UnsupportedOperationException} when the
   * store cannot tell (PostgreSQL can).
   */
  OutboxBacklog outboxBacklog();

  /** Sets how long a topic keeps its events (default: forever). */
  void setRetention(TopicName topic, RetentionPolicy policy);

  /** The policy consumers of this subscription follow (its override, else the cluster default). */
  GroupPolicy groupPolicy(String subscription);

  /** Sets the cluster-wide default policy; consumers pick it up at their next check-in. */
  void setDefaultGroupPolicy(GroupPolicy policy);

  /** Overrides the policy for one subscription; {@code null} removes the override. */
  void setGroupPolicy(String subscription, GroupPolicy policy);
}
