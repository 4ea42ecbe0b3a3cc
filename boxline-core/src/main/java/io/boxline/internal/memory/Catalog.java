package io.boxline.internal.memory;

import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Namespaces, topics (with their retention) and subscriptions of the in-memory store, as the SQL
 * dialects keep them: ids count up from 1, names are case-sensitive, lists come sorted by namespace
 * path and name. Not thread-safe: the store calls it under its lock.
 */
final class Catalog {
  /** Topics in the order the SQL dialects list them: by namespace path, then name. */
  static final Comparator<TopicName> TOPIC_ORDER =
      Comparator.comparing((TopicName t) -> t.namespace().toString())
          .thenComparing(TopicName::name);

  private final Map<String, Instant> namespaces = new HashMap<>();
  private final Map<Long, TopicInfo> topicsById = new TreeMap<>();
  private final Map<TopicName, TopicInfo> topicsByName = new HashMap<>();
  private final Map<Long, RetentionPolicy> retention = new HashMap<>();
  private final Map<String, SubscriptionInfo> subscriptionsByName = new HashMap<>();
  private final Map<Long, SubscriptionInfo> subscriptionsById = new TreeMap<>();
  private long nextTopicId = 1;
  private long nextSubscriptionId = 1;

  void createNamespace(NamespacePath namespace, Instant now) {
    for (NamespacePath n = namespace; n != null; n = n.parent()) {
      namespaces.putIfAbsent(n.toString(), now);
    }
  }

  /**
   * Creates the topic, or checks that the existing one has the same settings; returns it, and
   * whether it is new (then its partitions must be created).
   */
  TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing, Instant now) {
    io.boxline.spi.CatalogStore.requirePartitions(topic, partitions);
    if (!namespaces.containsKey(topic.namespace().toString())) {
      throw new NotFoundException(
          "namespace '"
              + topic.namespace()
              + "' does not exist; create it with admin().createNamespace(NamespacePath.of(\""
              + topic.namespace()
              + "\"))");
    }
    TopicInfo t = topicsByName.get(topic);
    if (t == null) {
      t = new TopicInfo(topic, nextTopicId++, partitions, now, sequencing);
      topicsByName.put(topic, t);
      topicsById.put(t.id(), t);
      return t;
    }
    return io.boxline.spi.CatalogStore.requireSameTopic(t, partitions, sequencing);
  }

  boolean hasTopic(long topicId) {
    return topicsById.containsKey(topicId);
  }

  Optional<TopicInfo> topic(TopicName name) {
    return Optional.ofNullable(topicsByName.get(name));
  }

  Optional<TopicInfo> topic(long id) {
    return Optional.ofNullable(topicsById.get(id));
  }

  /** The topic of an id the store handed out (a cursor's, a parked event's). */
  TopicInfo topicOf(long id) {
    TopicInfo t = topicsById.get(id);
    if (t == null) {
      throw new IllegalStateException("no topic with id " + id);
    }
    return t;
  }

  List<TopicInfo> topics() {
    List<TopicInfo> out = new ArrayList<>(topicsById.values());
    out.sort(Comparator.comparing(TopicInfo::name, TOPIC_ORDER));
    return out;
  }

  /** Topics with a retention that deletes anything (an age or a size bound). */
  Map<Long, RetentionPolicy> retentions() {
    return retention;
  }

  void setRetention(long topicId, RetentionPolicy policy) {
    if (!topicsById.containsKey(topicId)) {
      return; // as an UPDATE of no row
    }
    if (policy.maxAge() == null && policy.maxEventsPerPartition() == 0) {
      retention.remove(topicId);
    } else {
      retention.put(topicId, policy);
    }
  }

  /**
   * Creates the subscription, or checks that the existing one has the same topics. Returns null for
   * an existing one after the check (the caller returns {@link #subscription(String)}), else the
   * new subscription (whose cursors the caller creates).
   */
  SubscriptionInfo createSubscription(SubscriptionSpec spec, Instant now) {
    List<TopicName> topics = new ArrayList<>();
    for (TopicName t : spec.topics()) {
      if (!topicsByName.containsKey(t)) {
        throw new NotFoundException(
            "subscription '"
                + spec.name()
                + "' names topic '"
                + t
                + "', which does not exist; create the topic first");
      }
      topics.add(t);
    }
    SubscriptionInfo existing = subscriptionsByName.get(spec.name());
    if (existing != null) {
      io.boxline.spi.CatalogStore.requireSameTopics(existing, spec);
      return null;
    }
    topics.sort(TOPIC_ORDER);
    SubscriptionInfo s =
        new SubscriptionInfo(
            spec.name(), nextSubscriptionId++, List.copyOf(topics), now, spec.start(), now);
    subscriptionsByName.put(s.name(), s);
    subscriptionsById.put(s.id(), s);
    return s;
  }

  Optional<SubscriptionInfo> subscription(String name) {
    return Optional.ofNullable(subscriptionsByName.get(name));
  }

  Optional<SubscriptionInfo> subscription(long id) {
    return Optional.ofNullable(subscriptionsById.get(id));
  }

  /** Stamps the subscriptions as having a live consumer at {@code now}. */
  void markActive(java.util.Collection<Long> ids, Instant now) {
    for (long id : ids) {
      SubscriptionInfo s = subscriptionsById.get(id);
      if (s != null) {
        SubscriptionInfo stamped =
            new SubscriptionInfo(s.name(), s.id(), s.topics(), s.createdAt(), s.start(), now);
        subscriptionsById.put(id, stamped);
        subscriptionsByName.put(s.name(), stamped);
      }
    }
  }

  /** Whether the subscription last had a live consumer before {@code cutoff}. */
  boolean abandoned(long id, Instant cutoff) {
    SubscriptionInfo s = subscriptionsById.get(id);
    return s != null && s.lastActive().isBefore(cutoff);
  }

  /** Every subscription, by name. */
  List<SubscriptionInfo> subscriptions() {
    List<SubscriptionInfo> out = new ArrayList<>(subscriptionsById.values());
    out.sort(Comparator.comparing(SubscriptionInfo::name));
    return out;
  }

  /** Every namespace, by path. */
  List<NamespacePath> namespaces() {
    return namespaces.keySet().stream().sorted().map(NamespacePath::of).toList();
  }

  /** Gives the subscription a new name; refuses a taken one. */
  SubscriptionInfo renameSubscription(long id, String to) {
    SubscriptionInfo s = subscriptionsById.get(id);
    if (s == null) {
      throw new io.boxline.NotFoundException("subscription " + id + " does not exist");
    }
    if (subscriptionsByName.containsKey(to)) {
      throw new io.boxline.ValidationException("subscription '" + to + "' exists already");
    }
    SubscriptionInfo renamed =
        new SubscriptionInfo(to, s.id(), s.topics(), s.createdAt(), s.start(), s.lastActive());
    subscriptionsByName.remove(s.name());
    subscriptionsByName.put(to, renamed);
    subscriptionsById.put(id, renamed);
    return renamed;
  }

  /** Forgets the subscription; false when there was none. */
  boolean deleteSubscription(long id) {
    SubscriptionInfo s = subscriptionsById.remove(id);
    if (s == null) {
      return false;
    }
    subscriptionsByName.remove(s.name());
    return true;
  }

  /** Forgets the topic, also in the subscriptions that read it; false when there was none. */
  boolean deleteTopic(long topicId) {
    TopicInfo t = topicsById.remove(topicId);
    if (t == null) {
      return false;
    }
    topicsByName.remove(t.name());
    retention.remove(topicId);
    for (SubscriptionInfo s : List.copyOf(subscriptionsById.values())) {
      if (s.topics().contains(t.name())) {
        List<TopicName> rest = new ArrayList<>(s.topics());
        rest.remove(t.name());
        SubscriptionInfo changed =
            new SubscriptionInfo(
                s.name(), s.id(), List.copyOf(rest), s.createdAt(), s.start(), s.lastActive());
        subscriptionsById.put(s.id(), changed);
        subscriptionsByName.put(s.name(), changed);
      }
    }
    return true;
  }

  /** Forgets an empty namespace; false when there was none. */
  boolean deleteNamespace(NamespacePath namespace) {
    String path = namespace.toString();
    if (!namespaces.containsKey(path)) {
      return false;
    }
    long children =
        namespaces.keySet().stream()
            .filter(n -> namespace.equals(NamespacePath.of(n).parent()))
            .count();
    long topics =
        topicsByName.keySet().stream().filter(t -> t.namespace().equals(namespace)).count();
    if (children > 0 || topics > 0) {
      throw io.boxline.spi.CatalogStore.namespaceNotEmpty(namespace, topics, children);
    }
    namespaces.remove(path);
    return true;
  }
}
