package io.boxline.internal;

import io.boxline.Admin;
import io.boxline.BusySubscriptionException;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.FailureCounts;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.Names;
import io.boxline.NamespacePath;
import io.boxline.NotFoundException;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicState;
import io.boxline.ValidationException;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.MemberStatus;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Store;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * {@link Admin} over the store and the coordination store: creating, inspecting and deleting
 * namespaces, topics and subscriptions, reading the log, and the groups' state.
 */
final class DefaultAdmin implements Admin {
  private static final System.Logger LOG =
      // Under the engine's name, where operators already look for lifecycle lines.
      System.getLogger(DefaultBoxline.class.getName());

  private final Store store;
  private final TopicCache topics;
  private final CoordinationStore coordination;

  DefaultAdmin(Store store, TopicCache topics, CoordinationStore coordination) {
    this.store = store;
    this.topics = topics;
    this.coordination = coordination;
  }

  private Optional<SubscriptionInfo> findSubscription(String name) {
    return store.findSubscription(Names.requireSubscriptionName(name));
  }

  @Override
  public void createNamespace(NamespacePath namespace) {
    store.createNamespace(Objects.requireNonNull(namespace, "namespace"));
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(sequencing, "sequencing");
    if (partitions < 1 || partitions > 65_536) {
      throw new ValidationException(
          "topic '" + topic + "' needs 1 to 65536 partitions, got " + partitions);
    }
    TopicInfo t = store.createTopic(topic, partitions, sequencing);
    topics.put(t);
    return t;
  }

  @Override
  public Optional<TopicInfo> topic(TopicName topic) {
    return store.findTopic(topic);
  }

  @Override
  public List<TopicInfo> topics() {
    return store.topics();
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    return store.createSubscription(Objects.requireNonNull(spec, "spec"));
  }

  @Override
  public Optional<SubscriptionInfo> subscription(String name) {
    return findSubscription(name);
  }

  @Override
  public List<PartitionLag> lag(String subscription) {
    SubscriptionInfo s =
        findSubscription(subscription)
            .orElseThrow(
                () -> new NotFoundException("subscription '" + subscription + "' does not exist"));
    return store.lagWithAge(s.id());
  }

  @Override
  public List<PartitionLag> rewind(String subscription, StartPosition to) {
    Objects.requireNonNull(to, "to");
    SubscriptionInfo s = existing(subscription);
    // A running consumer would carry on from the position it holds in memory.
    List<String> live = coordination.liveMembers(s.name());
    if (!live.isEmpty()) {
      throw new BusySubscriptionException(s.name(), live, "rewind");
    }
    store.rewindCursors(s.id(), to);
    LOG.log(Level.INFO, "subscription {0} rewound to {1}", s.name(), to);
    return store.lagWithAge(s.id());
  }

  @Override
  public List<PartitionLag> seek(
      String subscription, Map<io.boxline.TopicPartition, Long> positions) {
    Objects.requireNonNull(positions, "positions");
    SubscriptionInfo s = existing(subscription);
    Map<io.boxline.spi.PartitionKey, Long> moves = new java.util.LinkedHashMap<>();
    Map<TopicName, TopicState> states = new java.util.HashMap<>();
    for (Map.Entry<io.boxline.TopicPartition, Long> e : positions.entrySet()) {
      io.boxline.TopicPartition tp = e.getKey();
      if (!s.topics().contains(tp.topic())) {
        throw new ValidationException(
            "subscription '" + s.name() + "' does not read topic " + tp.topic());
      }
      TopicState state = states.computeIfAbsent(tp.topic(), this::topicState);
      if (tp.partition() < 0 || tp.partition() >= state.heads().size()) {
        throw new ValidationException(
            "topic "
                + tp.topic()
                + " has no partition "
                + tp.partition()
                + " (it has "
                + state.heads().size()
                + ")");
      }
      long head = state.heads().get(tp.partition());
      long to = e.getValue();
      if (to < 0 || to > head) {
        throw new ValidationException(
            "position "
                + to
                + " of "
                + tp.topic()
                + " partition "
                + tp.partition()
                + " is out of range: 0 to "
                + head
                + " (the partition's last sequence)");
      }
      moves.put(io.boxline.spi.PartitionKey.of(state.topic().id(), tp.partition()), to);
    }
    List<String> live = coordination.liveMembers(s.name());
    if (!live.isEmpty()) {
      throw new BusySubscriptionException(s.name(), live, "seek");
    }
    if (!moves.isEmpty()) {
      store.seekCursors(s.id(), moves);
    }
    return store.lagWithAge(s.id());
  }

  @Override
  public Map<String, List<PartitionLag>> lagBySubscription() {
    return store.lagBySubscription();
  }

  @Override
  public OutboxBacklog outboxBacklog() {
    return store.outboxBacklog();
  }

  @Override
  public void setRetention(TopicName topic, RetentionPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    store.setRetention(topics.get(topic).id(), policy);
  }

  @Override
  public GroupPolicy groupPolicy(String subscription) {
    return coordination.policy(existing(subscription).name());
  }

  @Override
  public void setDefaultGroupPolicy(GroupPolicy policy) {
    coordination.setPolicy(
        java.util.Optional.empty(), java.util.Optional.of(Objects.requireNonNull(policy)));
  }

  @Override
  public void setGroupPolicy(String subscription, GroupPolicy policy) {
    coordination.setPolicy(
        java.util.Optional.of(existing(subscription).name()),
        java.util.Optional.ofNullable(policy));
  }

  @Override
  public GroupState group(String subscription) {
    SubscriptionInfo s = existing(subscription);
    GroupView view = coordination.view(s.name());
    Map<PartitionKey, Lease> leases = new HashMap<>();
    Map<String, Integer> held = new HashMap<>();
    for (Lease l : view.leases()) {
      leases.put(PartitionKey.of(l.topicId(), l.partition()), l);
      held.merge(l.owner(), 1, Integer::sum);
    }
    List<GroupState.Member> members = new ArrayList<>();
    for (Member m : view.members()) {
      List<GroupState.InFlight> inFlight = new ArrayList<>();
      for (MemberStatus.Running r : m.status().running()) {
        topics
            .find(r.topicId())
            .ifPresent(
                t ->
                    inFlight.add(
                        new GroupState.InFlight(
                            t.name(),
                            r.partition(),
                            r.fromSequence(),
                            r.toSequence(),
                            r.events(),
                            r.startedAt())));
      }
      members.add(
          new GroupState.Member(
              m.id(),
              m.weight(),
              m.lastCheckIn(),
              m.deadline(),
              held.getOrDefault(m.id(), 0),
              m.status().host(),
              m.status().process(),
              inFlight));
    }
    members.sort(java.util.Comparator.comparing(GroupState.Member::id));
    List<GroupState.Partition> partitions = new ArrayList<>();
    for (PartitionLag lag : store.lagWithAge(s.id())) {
      Lease l = leases.get(PartitionKey.of(topics.get(lag.topic()).id(), lag.partition()));
      partitions.add(
          l == null
              ? new GroupState.Partition(lag, null, 0, false, null)
              : new GroupState.Partition(lag, l.owner(), l.epoch(), l.releasing(), l.since()));
    }
    partitions.sort(
        java.util.Comparator.comparing((GroupState.Partition p) -> p.lag().topic().toString())
            .thenComparingInt(p -> p.lag().partition()));
    return new GroupState(s.name(), coordination.policy(s.name()), members, partitions, view.now());
  }

  @Override
  public List<NamespacePath> namespaces() {
    return store.namespaces();
  }

  @Override
  public List<SubscriptionInfo> subscriptions() {
    return store.subscriptions();
  }

  @Override
  public List<Event> events(EventQuery query) {
    Objects.requireNonNull(query, "query");
    TopicInfo t = topics.get(query.topic());
    if (query.partition() >= t.partitions()) {
      throw new ValidationException(
          "topic '"
              + t.name()
              + "' has partitions 0 to "
              + (t.partitions() - 1)
              + ", not "
              + query.partition());
    }
    return store
        .readWhere(
            t.id(),
            query.partition(),
            query.afterSequence(),
            query.key(),
            query.eventId(),
            query.limit())
        .stream()
        .map(r -> r.toEvent(t.name(), query.partition()))
        .toList();
  }

  @Override
  public Optional<Event> event(TopicName topic, int partition, long sequence) {
    if (sequence < 1) {
      return Optional.empty();
    }
    List<Event> one = events(EventQuery.of(topic, partition).after(sequence - 1).limit(1));
    return one.isEmpty() || one.get(0).sequence() != sequence
        ? Optional.empty()
        : Optional.of(one.get(0));
  }

  @Override
  public List<FailureCounts> failures() {
    return store.failureCounts();
  }

  @Override
  public long blockedTasks() {
    return store.failureCounts().stream()
        .filter(f -> f.subscription().equals(io.boxline.Tasks.SUBSCRIPTION))
        .mapToLong(FailureCounts::deadLetters)
        .sum();
  }

  @Override
  public FailureCounts failures(String subscription) {
    String name = existing(subscription).name();
    return store.failureCounts().stream()
        .filter(f -> f.subscription().equals(name))
        .findFirst()
        .orElse(FailureCounts.none(name));
  }

  @Override
  public List<io.boxline.RetryingEvent> retrying(
      String subscription, io.boxline.EventPosition after, int limit) {
    if (limit < 1 || limit > 10_000) {
      throw new ValidationException("limit must be between 1 and 10000, got " + limit);
    }
    SubscriptionInfo s = existing(subscription);
    return store.retrying(s.id(), s.name(), after, limit);
  }

  @Override
  public io.boxline.TopicState topicState(TopicName topic) {
    TopicInfo t =
        store
            .findTopic(Objects.requireNonNull(topic, "topic"))
            .orElseThrow(() -> new NotFoundException("topic '" + topic + "' does not exist"));
    List<PartitionKey> keys = new ArrayList<>(t.partitions());
    for (int p = 0; p < t.partitions(); p++) {
      keys.add(PartitionKey.of(t.id(), p));
    }
    long[] heads = new long[t.partitions()];
    for (io.boxline.spi.PartitionHead h : store.heads(keys)) {
      heads[h.partition()] = h.lastSequence();
    }
    List<Long> list = new ArrayList<>(heads.length);
    for (long h : heads) {
      list.add(h);
    }
    return new io.boxline.TopicState(t, store.retention(t.id()), list);
  }

  @Override
  public Map<String, Long> inboxSizes() {
    return store.inboxSizes();
  }

  @Override
  public long inboxSize(String subscription) {
    return store.inboxSize(existing(subscription).id());
  }

  @Override
  public boolean deleteSubscription(String subscription, boolean force) {
    Optional<SubscriptionInfo> found = findSubscription(subscription);
    if (found.isEmpty()) {
      return false;
    }
    SubscriptionInfo s = found.get();
    List<String> live = coordination.liveMembers(s.name());
    if (!live.isEmpty() && !force) {
      throw new BusySubscriptionException(s.name(), live, "delete");
    }
    List<PartitionKey> partitions = partitionsOf(s.topics());
    // Coordination kept outside the database (etcd) does not go with the database rows, and a crash
    // may come between the two. So it is cleared first: a crash before the database delete leaves
    // the subscription in place for a second delete to finish. After the delete it is cleared
    // again, for leases a live member took in between (forced delete).
    clearCoordination(s.name(), partitions);
    boolean deleted = store.deleteSubscription(s);
    clearCoordination(s.name(), partitions);
    LOG.log(
        Level.INFO,
        "subscription {0} deleted{1}",
        s.name(),
        live.isEmpty() ? "" : " (forced, while " + live + " were live)");
    return deleted;
  }

  @Override
  public boolean deleteTopic(TopicName topic, boolean force) {
    Optional<TopicInfo> found = store.findTopic(Objects.requireNonNull(topic, "topic"));
    if (found.isEmpty()) {
      return false;
    }
    TopicInfo t = found.get();
    List<String> readers =
        store.subscriptions().stream()
            .filter(s -> s.topics().contains(t.name()))
            .map(SubscriptionInfo::name)
            .toList();
    if (!readers.isEmpty() && !force) {
      throw new ValidationException(
          "topic '"
              + t.name()
              + "' is read by subscriptions "
              + readers
              + "; delete them first, or delete with force to take the topic away from them");
    }
    // As for subscriptions: the readers' leases outside the database are freed before the delete
    // (a crash in between leaves the topic for a second delete) and again after it.
    List<PartitionKey> partitions = partitionsOf(t);
    for (String reader : readers) {
      coordination.forceRelease(reader, partitions);
    }
    boolean deleted = store.deleteTopic(t.id());
    topics.forget(t);
    for (String reader : readers) {
      coordination.forceRelease(reader, partitions);
    }
    LOG.log(
        Level.INFO,
        "topic {0} deleted{1}",
        t.name(),
        readers.isEmpty() ? "" : " (forced, read by " + readers + ")");
    return deleted;
  }

  @Override
  public boolean deleteNamespace(NamespacePath namespace) {
    boolean deleted = store.deleteNamespace(Objects.requireNonNull(namespace, "namespace"));
    if (deleted) {
      LOG.log(Level.INFO, "namespace {0} deleted", namespace);
    }
    return deleted;
  }

  @Override
  public SubscriptionInfo renameSubscription(String from, String to) {
    Names.requireSubscriptionName(to);
    SubscriptionInfo s = existing(from);
    if (s.name().equals(to)) {
      return s;
    }
    if (store.findSubscription(to).isPresent()) {
      throw new ValidationException(
          "subscription '" + to + "' exists already; pick another name or delete that one first");
    }
    List<String> live = coordination.liveMembers(s.name());
    if (!live.isEmpty()) {
      throw new BusySubscriptionException(s.name(), live, "rename");
    }
    // An override is whatever differs from what the new name gets by default.
    GroupPolicy policy = coordination.policy(s.name());
    boolean override = !policy.equals(coordination.policy(to));
    clearCoordination(s.name(), partitionsOf(s.topics()));
    SubscriptionInfo renamed = store.renameSubscription(s, to);
    if (override) {
      coordination.setPolicy(Optional.of(to), Optional.of(policy));
    }
    LOG.log(Level.INFO, "subscription {0} renamed to {1}", s.name(), to);
    return renamed;
  }

  private void clearCoordination(String group, List<PartitionKey> partitions) {
    coordination.forceRelease(group, partitions);
    coordination.setPolicy(Optional.of(group), Optional.empty());
  }

  private List<PartitionKey> partitionsOf(List<TopicName> names) {
    List<PartitionKey> out = new ArrayList<>();
    for (TopicName n : names) {
      store.findTopic(n).ifPresent(t -> out.addAll(partitionsOf(t)));
    }
    return out;
  }

  private List<PartitionKey> partitionsOf(TopicInfo t) {
    List<PartitionKey> out = new ArrayList<>(t.partitions());
    for (int p = 0; p < t.partitions(); p++) {
      out.add(PartitionKey.of(t.id(), p));
    }
    return out;
  }

  private SubscriptionInfo existing(String subscription) {
    return findSubscription(subscription)
        .orElseThrow(
            () -> new NotFoundException("subscription '" + subscription + "' does not exist"));
  }
}
