package io.boxline;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Namespaces, topics and subscriptions: creating, inspecting and deleting them, and reading what
 * they hold. Every call is idempotent where it can be; every destructive call is one transaction,
 * so a crash leaves it done or not done, never half done.
 */
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
   * The topic with its retention and each partition's last sequence.
   *
   * @throws NotFoundException when the topic does not exist
   */
  TopicState topicState(TopicName topic);

  /**
   * Creates a subscription; creating one that exists with the same topics returns it unchanged (its
   * cursors are kept), different topics are an error.
   */
  SubscriptionInfo createSubscription(SubscriptionSpec spec);

  Optional<SubscriptionInfo> subscription(String name);

  /**
   * The subscription's consumer group: its live members, who holds which partition under which
   * epoch, and each partition's lag (see {@link GroupState}).
   *
   * @throws NotFoundException when the subscription does not exist
   */
  GroupState group(String subscription);

  /** Every namespace, by path. */
  List<NamespacePath> namespaces();

  /** Every subscription with its topics, by name. */
  List<SubscriptionInfo> subscriptions();

  /**
   * Events of one partition of a topic, in sequence order, without a subscription and without
   * moving any cursor (see {@link EventQuery} for paging and the key and id filters).
   *
   * @throws NotFoundException when the topic does not exist
   * @throws ValidationException when the partition is not one of the topic's
   */
  List<Event> events(EventQuery query);

  /** The event at this position, if the log holds it (retention may have removed it). */
  Optional<Event> event(TopicName topic, int partition, long sequence);

  /**
   * What every subscription with set-aside events has: retries scheduled, events waiting behind
   * their key, dead letters.
   */
  List<FailureCounts> failures();

  /**
   * Up to {@code limit} (1 to 10,000) of the subscription's events waiting for a retry or behind an
   * earlier event of their key, in log order (topic, partition, sequence), with their attempts,
   * next attempt and last error. The first page; {@link #retrying(String, EventPosition, int)}
   * gives the next ones.
   */
  default List<RetryingEvent> retrying(String subscription, int limit) {
    return retrying(subscription, null, limit);
  }

  /**
   * {@link #retrying(String, int)} past {@code after} (the position of the previous page's last
   * entry; null for the first page).
   */
  List<RetryingEvent> retrying(String subscription, EventPosition after, int limit);

  /**
   * How many tasks are blocked (failed past their retry policy, or of a type no worker handles
   * under {@link UnknownTaskPolicy#BLOCK}): the dead letters of {@link Tasks#SUBSCRIPTION}, 0 when
   * tasks were never used. {@link Tasks#blocked()} lists them; {@link Tasks#unblock} lets one run
   * again.
   */
  long blockedTasks();

  /** {@link #failures()} of one subscription (all zero when it has nothing set aside). */
  FailureCounts failures(String subscription);

  /** How many message keys the subscription's inbox holds. */
  long inboxSize(String subscription);

  /** {@link #inboxSize} of every subscription whose inbox holds keys, by name, in one query. */
  Map<String, Long> inboxSizes();

  /**
   * Deletes a subscription with everything it owns: its cursors, retries, dead letters, inbox, and
   * its group's leases, members and policy override. Retention no longer waits for it. Returns
   * false when it did not exist.
   *
   * @param force delete it even while consumers are live (they lose their partitions and stop
   *     handling them at their next commit)
   * @throws BusySubscriptionException when consumers are live and {@code force} is false
   */
  boolean deleteSubscription(String subscription, boolean force);

  /**
   * Gives a subscription a new name and keeps everything it has: cursors, retries, dead letters,
   * inbox and its group policy override. This is how a subscription with a plain name moves into a
   * namespace ({@code audit} to {@code acme/audit}), where the server's tokens limited to that
   * namespace can use it. Its consumers must be stopped first, since they name the subscription;
   * they start again under the new name. Renaming to the current name changes nothing.
   *
   * @return the subscription under its new name
   * @throws NotFoundException when {@code from} does not exist
   * @throws ValidationException when {@code to} is not a valid subscription name or is taken
   * @throws BusySubscriptionException when consumers of it are live
   */
  SubscriptionInfo renameSubscription(String from, String to);

  /**
   * Deletes a topic with everything on it: its partitions, events, outbox rows not yet sequenced,
   * idempotency keys, and the cursors, retries and dead letters of every subscription on it (those
   * subscriptions keep their other topics). Returns false when it did not exist. Processes that
   * still publish to it see their events set aside by the sequencer (see {@code outbox_rejected}).
   *
   * @param force delete it even while subscriptions read it
   * @throws ValidationException when subscriptions read it and {@code force} is false (the message
   *     names them)
   */
  boolean deleteTopic(TopicName topic, boolean force);

  /**
   * Deletes a namespace that holds no topics and no namespaces. Returns false when it did not
   * exist.
   *
   * @throws ValidationException when it is not empty
   */
  boolean deleteNamespace(NamespacePath namespace);

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
   * Moves some cursors of a subscription to given positions, back or forward (what a Kafka client's
   * offset commit does): each position is the sequence of the last event handled (0: none), at most
   * the partition's head. Retries, waiting events and dead letters after a new position are
   * dropped, as {@link #rewind} does. Like {@link #rewind}, it refuses while a Boxline consumer of
   * the subscription is live. Returns the positions of every partition of the subscription.
   *
   * @throws BusySubscriptionException when a consumer of the subscription is live
   * @throws NotFoundException when the subscription does not exist
   * @throws ValidationException when a partition is not the subscription's or a position is out of
   *     range
   */
  default List<PartitionLag> seek(String subscription, Map<TopicPartition, Long> positions) {
    throw new UnsupportedOperationException(
        "this Admin cannot move single cursors; use the Admin of a Boxline instance");
  }

  /**
   * Position, backlog and (where the store reports it) age of the oldest unhandled event of every
   * partition of a subscription.
   */
  List<PartitionLag> lag(String subscription);

  /**
   * {@link #lag(String)} of every subscription, by name, in one statement: what a metrics collector
   * reads.
   */
  Map<String, List<PartitionLag>> lagBySubscription();

  /** Events published but not yet sequenced, and when the oldest was written. */
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
