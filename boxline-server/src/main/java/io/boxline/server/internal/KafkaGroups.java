package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.BusySubscriptionException;
import io.boxline.NotFoundException;
import io.boxline.PartitionLag;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.ValidationException;
import io.boxline.server.internal.Auth.Action;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * Kafka's classic group protocol over Boxline subscriptions: a group id is a subscription's name,
 * and a committed offset is the subscription's cursor (offset = the sequence of the last event
 * handled), written by {@link io.boxline.Admin#seek} and so visible in the admin API, the console
 * and the CLI. The membership (members, generation, leader, assignments) is kept by the server
 * instance that coordinates the group ({@link KafkaCluster}); the others answer NOT_COORDINATOR; a
 * commit is taken only from a member of the current generation, under the group's lock, so a member
 * that lost its partitions in a rebalance cannot move a cursor. A subscription is consumed either
 * by Kafka clients or by Boxline consumers at one time: a join or commit while a Boxline consumer
 * of it is live is refused ({@code INCONSISTENT_GROUP_PROTOCOL}).
 */
final class KafkaGroups {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.kafka");

  /** Kafka's group.min.session.timeout.ms default. */
  static final int MIN_SESSION_MILLIS = 6_000;

  private final Boxline boxline;
  private final ScheduledExecutorService timers;
  private final int maxSessionMillis;
  private final Map<String, Group> groups = new ConcurrentHashMap<>();

  /**
   * The positions this instance last wrote for each group: clients commit every few seconds whether
   * they moved or not (auto-commit), and an unchanged position is not written again.
   */
  private final Map<String, Map<TopicPartition, Long>> written = new ConcurrentHashMap<>();

  private final ScheduledFuture<?> expiry;

  enum State {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable");

    final String kafka;

    State(String kafka) {
      this.kafka = kafka;
    }
  }

  private static final class Member {
    final String id;
    String clientId;
    String host;
    String instanceId;
    int sessionMillis;
    int rebalanceMillis;
    List<JoinGroupRequestData.JoinGroupRequestProtocol> protocols = List.of();
    byte[] assignment = new byte[0];
    long lastSeen = System.nanoTime();
    CompletableFuture<ApiMessage> join;
    short joinVersion;
    CompletableFuture<ApiMessage> sync;

    Member(String id) {
      this.id = id;
    }

    byte[] metadata(String protocol) {
      for (var p : protocols) {
        if (p.name().equals(protocol)) {
          return p.metadata();
        }
      }
      return new byte[0];
    }
  }

  private static final class Group {
    final String id;
    State state = State.EMPTY;
    int generation;
    String protocolType;
    String protocol;
    String leader;
    final Map<String, Member> members = new LinkedHashMap<>();

    /**
     * Callers found to may use the group while it had members: their heartbeats and commits need no
     * lookup. Forgotten when the group empties.
     */
    final Set<Auth.Caller> allowed = ConcurrentHashMap.newKeySet();

    ScheduledFuture<?> rebalanceTimer;

    Group(String id) {
      this.id = id;
    }
  }

  private final io.boxline.spi.Store store;
  private final KafkaCatalog catalog;
  private final KafkaCluster cluster;

  KafkaGroups(
      Boxline boxline,
      io.boxline.spi.Store store,
      KafkaCatalog catalog,
      KafkaCluster cluster,
      ScheduledExecutorService timers,
      Duration sessionMax) {
    this.boxline = boxline;
    this.store = store;
    this.catalog = catalog;
    this.cluster = cluster;
    this.timers = timers;
    this.maxSessionMillis = (int) Math.min(Integer.MAX_VALUE, sessionMax.toMillis());
    this.expiry = timers.scheduleWithFixedDelay(this::expire, 500, 500, TimeUnit.MILLISECONDS);
  }

  void close() {
    expiry.cancel(false);
  }

  /** Members in all groups of this instance, for the metrics. */
  int members() {
    return groups.values().stream()
        .mapToInt(
            g -> {
              synchronized (g) {
                return g.members.size();
              }
            })
        .sum();
  }

  CompletableFuture<ApiMessage> handle(KafkaConnection c, ApiKeys key, AbstractRequest request) {
    c.caller.require(Action.CONSUME);
    short v = request.version();
    return switch (key) {
      case JOIN_GROUP -> join(c, (JoinGroupRequestData) request.data(), v);
      case SYNC_GROUP -> sync(c, (SyncGroupRequestData) request.data());
      case HEARTBEAT -> KafkaApis.done(heartbeat(c, (HeartbeatRequestData) request.data()));
      case LEAVE_GROUP -> KafkaApis.done(leave(c, (LeaveGroupRequestData) request.data(), v));
      case OFFSET_COMMIT -> KafkaApis.done(commit(c, (OffsetCommitRequestData) request.data()));
      case OFFSET_FETCH -> KafkaApis.done(offsets(c, (OffsetFetchRequestData) request.data(), v));
      case DESCRIBE_GROUPS ->
          KafkaApis.done(describe(c, (DescribeGroupsRequestData) request.data()));
      case LIST_GROUPS -> KafkaApis.done(list(c, (ListGroupsRequestData) request.data()));
      default ->
          KafkaApis.done(
              request
                  .getErrorResponse(0, Errors.UNSUPPORTED_VERSION.exception(key + " is not served"))
                  .data());
    };
  }

  // ------------------------------------------------------------------------------ membership

  /**
   * Whether the caller may see and use the group: its name is in the caller's namespaces, and the
   * subscription of that name, where there is one, reads only topics the caller may see (a plain
   * name is anyone's, its topics are not). The same answer whether it exists or not.
   */
  private boolean mayUse(KafkaConnection c, String groupId) {
    try {
      if (groupId == null || !c.caller.coversSubscriptionName(groupId)) {
        return false;
      }
      Group g = groups.get(groupId);
      if (g != null && g.allowed.contains(c.caller)) {
        return true;
      }
      Optional<SubscriptionInfo> s = catalog.subscription(groupId);
      boolean may = s.isEmpty() || c.caller.covers(s.get());
      if (may && s.isPresent() && g != null) {
        g.allowed.add(c.caller);
      }
      return may;
    } catch (ValidationException e) {
      return false; // not a name a subscription can have
    }
  }

  private static JoinGroupResponseData joinError(Errors e, String memberId) {
    return new JoinGroupResponseData()
        .setErrorCode(e.code())
        .setGenerationId(-1)
        .setMemberId(memberId == null ? "" : memberId)
        .setLeader("")
        .setProtocolName("");
  }

  private CompletableFuture<ApiMessage> join(KafkaConnection c, JoinGroupRequestData r, short v) {
    String groupId = r.groupId();
    if (groupId == null || groupId.isEmpty()) {
      return KafkaApis.done(joinError(Errors.INVALID_GROUP_ID, r.memberId()));
    }
    if (!mayUse(c, groupId)) {
      return KafkaApis.done(joinError(Errors.GROUP_AUTHORIZATION_FAILED, r.memberId()));
    }
    if (!cluster.coordinates(groupId)) {
      return KafkaApis.done(joinError(Errors.NOT_COORDINATOR, r.memberId()));
    }
    if (r.sessionTimeoutMs() < MIN_SESSION_MILLIS || r.sessionTimeoutMs() > maxSessionMillis) {
      return KafkaApis.done(joinError(Errors.INVALID_SESSION_TIMEOUT, r.memberId()));
    }
    Errors refused = subscriptionFor(c, groupId, r);
    if (refused != Errors.NONE) {
      return KafkaApis.done(joinError(refused, r.memberId()));
    }
    if (r.memberId().isEmpty() && v >= 4) {
      // As Kafka does: the member learns its id first and joins with it.
      return KafkaApis.done(joinError(Errors.MEMBER_ID_REQUIRED, newMemberId(c)));
    }
    String memberId = r.memberId().isEmpty() ? newMemberId(c) : r.memberId();
    Group g = groups.computeIfAbsent(groupId, Group::new);
    synchronized (g) {
      if (!g.members.isEmpty() && !r.protocolType().equals(g.protocolType)) {
        return KafkaApis.done(joinError(Errors.INCONSISTENT_GROUP_PROTOCOL, memberId));
      }
      List<JoinGroupRequestData.JoinGroupRequestProtocol> protocols =
          new ArrayList<>(r.protocols());
      if (protocols.isEmpty() || (!g.members.isEmpty() && common(g, protocols) == null)) {
        return KafkaApis.done(joinError(Errors.INCONSISTENT_GROUP_PROTOCOL, memberId));
      }
      Member m = g.members.computeIfAbsent(memberId, Member::new);
      if (m.join != null) {
        m.join.complete(joinError(Errors.UNKNOWN_MEMBER_ID, memberId));
      }
      g.protocolType = r.protocolType();
      m.clientId = c.clientId;
      m.host = "/" + c.peer().replaceAll(":\\d+$", "");
      m.instanceId = r.groupInstanceId();
      m.sessionMillis = r.sessionTimeoutMs();
      m.rebalanceMillis = v == 0 ? r.sessionTimeoutMs() : r.rebalanceTimeoutMs();
      m.protocols = protocols;
      m.lastSeen = System.nanoTime();
      m.joinVersion = v;
      m.join = new CompletableFuture<>();
      CompletableFuture<ApiMessage> answer = m.join;
      if (g.state != State.PREPARING_REBALANCE) {
        prepareRebalance(g);
      }
      maybeCompleteJoin(g);
      return answer;
    }
  }

  private static String newMemberId(KafkaConnection c) {
    String client = c.clientId == null || c.clientId.isEmpty() ? "member" : c.clientId;
    return client + "-" + UUID.randomUUID();
  }

  /**
   * The subscription the group is: found, or created from the topics the members subscribe to when
   * the token may manage; refused while Boxline consumers read it or when it does not read a topic
   * the members want.
   */
  private Errors subscriptionFor(KafkaConnection c, String groupId, JoinGroupRequestData r) {
    Set<TopicName> wanted = new LinkedHashSet<>();
    for (var p : r.protocols()) {
      if (!"consumer".equals(r.protocolType())) {
        break;
      }
      try {
        for (String t :
            ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(p.metadata())).topics()) {
          wanted.add(KafkaNames.topic(t));
        }
      } catch (RuntimeException e) {
        LOG.log(
            Level.INFO,
            "group " + groupId + ": a member's subscription does not parse: " + e.getMessage());
        return Errors.INCONSISTENT_GROUP_PROTOCOL;
      }
    }
    Optional<SubscriptionInfo> s = boxline.admin().subscription(groupId);
    if (s.isEmpty()) {
      if (!c.caller.may(Action.MANAGE) || wanted.isEmpty()) {
        LOG.log(
            Level.INFO,
            "group "
                + groupId
                + " is no subscription, and the token of "
                + c.caller.name
                + " may not create one");
        return Errors.GROUP_AUTHORIZATION_FAILED;
      }
      for (TopicName t : wanted) {
        if (!c.caller.covers(t) || catalog.topic(t).isEmpty()) {
          return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
      }
      try {
        s =
            Optional.of(
                boxline
                    .admin()
                    .createSubscription(
                        SubscriptionSpec.of(groupId, wanted.toArray(TopicName[]::new))
                            .startAt(StartPosition.earliest())));
        LOG.log(
            Level.INFO,
            "subscription " + groupId + " created for a Kafka consumer group, reading " + wanted);
      } catch (RuntimeException e) {
        catalog.forgetSubscription(groupId);
        s = catalog.subscription(groupId); // another member created it meanwhile
        if (s.isEmpty()) {
          throw e;
        }
      }
    }
    if (!s.get().topics().containsAll(wanted)) {
      LOG.log(
          Level.INFO,
          "group "
              + groupId
              + ": its members want "
              + wanted
              + ", but subscription "
              + groupId
              + " reads "
              + s.get().topics());
      return Errors.INCONSISTENT_GROUP_PROTOCOL;
    }
    if (!boxline.admin().group(groupId).members().isEmpty()) {
      LOG.log(
          Level.INFO,
          "group "
              + groupId
              + ": Boxline consumers of the subscription are live; Kafka clients may join when they have left");
      return Errors.INCONSISTENT_GROUP_PROTOCOL;
    }
    return Errors.NONE;
  }

  /** A protocol every member (and these) supports, in the leader's order of preference. */
  private static String common(Group g, List<JoinGroupRequestData.JoinGroupRequestProtocol> extra) {
    List<List<String>> all = new ArrayList<>();
    for (Member m : g.members.values()) {
      all.add(
          m.protocols.stream().map(JoinGroupRequestData.JoinGroupRequestProtocol::name).toList());
    }
    if (extra != null) {
      all.add(extra.stream().map(JoinGroupRequestData.JoinGroupRequestProtocol::name).toList());
    }
    if (all.isEmpty()) {
      return null;
    }
    for (String candidate : all.get(0)) {
      if (all.stream().allMatch(l -> l.contains(candidate))) {
        return candidate;
      }
    }
    return null;
  }

  private void prepareRebalance(Group g) {
    g.state = State.PREPARING_REBALANCE;
    for (Member m : g.members.values()) {
      if (m.sync != null) {
        m.sync.complete(syncError(Errors.REBALANCE_IN_PROGRESS));
        m.sync = null;
      }
    }
    int timeout = g.members.values().stream().mapToInt(m -> m.rebalanceMillis).max().orElse(0);
    if (g.rebalanceTimer != null) {
      g.rebalanceTimer.cancel(false);
    }
    g.rebalanceTimer =
        timers.schedule(
            () -> {
              synchronized (g) {
                if (g.state == State.PREPARING_REBALANCE) {
                  completeJoin(g);
                }
              }
            },
            Math.max(1, timeout),
            TimeUnit.MILLISECONDS);
  }

  private void maybeCompleteJoin(Group g) {
    if (g.state == State.PREPARING_REBALANCE
        && g.members.values().stream().allMatch(m -> m.join != null)) {
      completeJoin(g);
    }
  }

  /** Ends a rebalance: members that did not join again are out; the others get the generation. */
  private void completeJoin(Group g) {
    if (g.rebalanceTimer != null) {
      g.rebalanceTimer.cancel(false);
      g.rebalanceTimer = null;
    }
    g.members.values().removeIf(m -> m.join == null);
    g.generation++;
    if (g.members.isEmpty()) {
      g.allowed.clear();
      g.state = State.EMPTY;
      g.leader = null;
      g.protocol = null;
      return;
    }
    g.protocol = common(g, null);
    if (g.leader == null || !g.members.containsKey(g.leader)) {
      g.leader = g.members.keySet().iterator().next();
    }
    g.state = State.COMPLETING_REBALANCE;
    LOG.log(
        Level.DEBUG,
        "group "
            + g.id
            + " generation "
            + g.generation
            + ": "
            + g.members.keySet()
            + ", leader "
            + g.leader);
    for (Member m : g.members.values()) {
      List<JoinGroupResponseData.JoinGroupResponseMember> members = new ArrayList<>();
      if (m.id.equals(g.leader)) {
        for (Member other : g.members.values()) {
          members.add(
              new JoinGroupResponseData.JoinGroupResponseMember()
                  .setMemberId(other.id)
                  .setGroupInstanceId(other.instanceId)
                  .setMetadata(other.metadata(g.protocol)));
        }
      }
      m.lastSeen = System.nanoTime();
      CompletableFuture<ApiMessage> join = m.join;
      m.join = null;
      join.complete(
          new JoinGroupResponseData()
              .setGenerationId(g.generation)
              .setProtocolType(g.protocolType)
              .setProtocolName(g.protocol)
              .setLeader(g.leader)
              .setMemberId(m.id)
              .setMembers(members));
    }
  }

  private static SyncGroupResponseData syncError(Errors e) {
    return new SyncGroupResponseData().setErrorCode(e.code()).setAssignment(new byte[0]);
  }

  private CompletableFuture<ApiMessage> sync(KafkaConnection c, SyncGroupRequestData r) {
    if (!mayUse(c, r.groupId())) {
      return KafkaApis.done(syncError(Errors.GROUP_AUTHORIZATION_FAILED));
    }
    if (!cluster.coordinates(r.groupId())) {
      return KafkaApis.done(syncError(Errors.NOT_COORDINATOR));
    }
    Group g = groups.get(r.groupId());
    if (g == null) {
      return KafkaApis.done(syncError(Errors.UNKNOWN_MEMBER_ID));
    }
    synchronized (g) {
      Member m = g.members.get(r.memberId());
      if (m == null) {
        return KafkaApis.done(syncError(Errors.UNKNOWN_MEMBER_ID));
      }
      if (r.generationId() != g.generation) {
        return KafkaApis.done(syncError(Errors.ILLEGAL_GENERATION));
      }
      if ((r.protocolType() != null && !r.protocolType().equals(g.protocolType))
          || (r.protocolName() != null && !r.protocolName().equals(g.protocol))) {
        return KafkaApis.done(syncError(Errors.INCONSISTENT_GROUP_PROTOCOL));
      }
      m.lastSeen = System.nanoTime();
      switch (g.state) {
        case PREPARING_REBALANCE, EMPTY -> {
          return KafkaApis.done(syncError(Errors.REBALANCE_IN_PROGRESS));
        }
        case STABLE -> {
          return KafkaApis.done(synced(g, m));
        }
        default -> {
          m.sync = new CompletableFuture<>();
          CompletableFuture<ApiMessage> answer = m.sync;
          if (m.id.equals(g.leader)) {
            Map<String, byte[]> given = new java.util.HashMap<>();
            r.assignments().forEach(a -> given.put(a.memberId(), a.assignment()));
            for (Member each : g.members.values()) {
              each.assignment = given.getOrDefault(each.id, new byte[0]);
            }
            g.state = State.STABLE;
            for (Member each : g.members.values()) {
              if (each.sync != null) {
                each.sync.complete(synced(g, each));
                each.sync = null;
              }
            }
          }
          return answer;
        }
      }
    }
  }

  private static SyncGroupResponseData synced(Group g, Member m) {
    return new SyncGroupResponseData()
        .setProtocolType(g.protocolType)
        .setProtocolName(g.protocol)
        .setAssignment(m.assignment);
  }

  private HeartbeatResponseData heartbeat(KafkaConnection c, HeartbeatRequestData r) {
    return new HeartbeatResponseData()
        .setErrorCode(check(c, r.groupId(), r.memberId(), r.generationId(), true).code());
  }

  /** Whether a member of this generation may act now; refreshes its session when it is known. */
  private Errors check(
      KafkaConnection c, String groupId, String memberId, int generation, boolean heartbeat) {
    if (!mayUse(c, groupId)) {
      return Errors.GROUP_AUTHORIZATION_FAILED;
    }
    if (!cluster.coordinates(groupId)) {
      return Errors.NOT_COORDINATOR;
    }
    Group g = groups.get(groupId);
    if (g == null) {
      return Errors.UNKNOWN_MEMBER_ID;
    }
    synchronized (g) {
      Member m = g.members.get(memberId);
      if (m == null) {
        return Errors.UNKNOWN_MEMBER_ID;
      }
      m.lastSeen = System.nanoTime();
      if (generation != g.generation) {
        return Errors.ILLEGAL_GENERATION;
      }
      // As Kafka's coordinator: a heartbeat in a rebalance that began says to join again; a commit
      // then is taken, for the members keep their partitions until the next generation is given
      // them (clients commit what they processed before rejoining: librdkafka when partitions are
      // revoked, Java's consumer in onJoinPrepare); a commit between the join and the assignment
      // is refused.
      if (heartbeat
          ? g.state == State.PREPARING_REBALANCE
          : g.state == State.COMPLETING_REBALANCE) {
        return Errors.REBALANCE_IN_PROGRESS;
      }
      return Errors.NONE;
    }
  }

  private LeaveGroupResponseData leave(KafkaConnection c, LeaveGroupRequestData r, short v) {
    if (!mayUse(c, r.groupId())) {
      return new LeaveGroupResponseData().setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code());
    }
    if (!cluster.coordinates(r.groupId())) {
      return new LeaveGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code());
    }
    List<String> ids = new ArrayList<>();
    if (v < 3) {
      ids.add(r.memberId());
    } else {
      r.members().forEach(m -> ids.add(m.memberId()));
    }
    Group g = groups.get(r.groupId());
    List<LeaveGroupResponseData.MemberResponse> out = new ArrayList<>();
    Errors single = Errors.NONE;
    if (g == null) {
      single = Errors.UNKNOWN_MEMBER_ID;
      ids.forEach(
          id ->
              out.add(
                  new LeaveGroupResponseData.MemberResponse()
                      .setMemberId(id)
                      .setErrorCode(Errors.UNKNOWN_MEMBER_ID.code())));
    } else {
      synchronized (g) {
        boolean changed = false;
        for (String id : ids) {
          Member m = g.members.remove(id);
          Errors e = m == null ? Errors.UNKNOWN_MEMBER_ID : Errors.NONE;
          if (m != null) {
            changed = true;
            gone(m);
          } else {
            single = e;
          }
          out.add(
              new LeaveGroupResponseData.MemberResponse().setMemberId(id).setErrorCode(e.code()));
        }
        if (changed) {
          afterRemoval(g);
        }
      }
    }
    LeaveGroupResponseData answer = new LeaveGroupResponseData();
    return v < 3 ? answer.setErrorCode(single.code()) : answer.setMembers(out);
  }

  /**
   * Another instance coordinates the group now (or this one cannot tell): its members learn so at
   * their next request and join there.
   */
  private void dismiss(Group g) {
    synchronized (g) {
      if (g.rebalanceTimer != null) {
        g.rebalanceTimer.cancel(false);
      }
      for (Member m : g.members.values()) {
        if (m.join != null) {
          m.join.complete(joinError(Errors.NOT_COORDINATOR, m.id));
        }
        if (m.sync != null) {
          m.sync.complete(syncError(Errors.NOT_COORDINATOR));
        }
      }
      if (!g.members.isEmpty()) {
        LOG.log(
            Level.INFO,
            "group "
                + g.id
                + ": not coordinated here any more; its "
                + g.members.size()
                + " member(s) join again at its coordinator");
      }
      g.members.clear();
      groups.remove(g.id, g);
    }
  }

  private static void gone(Member m) {
    if (m.join != null) {
      m.join.complete(joinError(Errors.UNKNOWN_MEMBER_ID, m.id));
    }
    if (m.sync != null) {
      m.sync.complete(syncError(Errors.UNKNOWN_MEMBER_ID));
    }
  }

  private void afterRemoval(Group g) {
    if (g.members.isEmpty()) {
      g.allowed.clear();
      if (g.rebalanceTimer != null) {
        g.rebalanceTimer.cancel(false);
      }
      g.state = State.EMPTY;
      g.generation++;
      g.leader = null;
    } else if (g.state == State.PREPARING_REBALANCE) {
      maybeCompleteJoin(g);
    } else {
      prepareRebalance(g);
    }
  }

  /** Members that neither heartbeat nor wait in a join within their session timeout are out. */
  private void expire() {
    try {
      long now = System.nanoTime();
      // Positions written while coordinating may be stale once another instance has coordinated.
      written.keySet().removeIf(id -> !cluster.holds(id));
      for (Group g : groups.values()) {
        if (!cluster.holds(g.id)) {
          dismiss(g);
          continue;
        }
        synchronized (g) {
          List<Member> dead = new ArrayList<>();
          for (Member m : g.members.values()) {
            if (m.join == null && now - m.lastSeen > m.sessionMillis * 1_000_000L) {
              dead.add(m);
            }
          }
          if (!dead.isEmpty()) {
            dead.forEach(
                m -> {
                  g.members.remove(m.id);
                  gone(m);
                });
            LOG.log(
                Level.INFO,
                "group "
                    + g.id
                    + ": "
                    + dead.size()
                    + " member(s) missed their session timeout and left");
            afterRemoval(g);
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "expiring Kafka group members failed; trying again", e);
    }
  }

  // --------------------------------------------------------------------------------- offsets

  private OffsetCommitResponseData commit(KafkaConnection c, OffsetCommitRequestData r) {
    Errors error = Errors.NONE;
    if (!mayUse(c, r.groupId())) {
      error = Errors.GROUP_AUTHORIZATION_FAILED;
    } else if (!cluster.coordinates(r.groupId())) {
      error = Errors.NOT_COORDINATOR;
    }
    Group g = groups.get(r.groupId());
    Object lock = g == null ? new Object() : g;
    synchronized (lock) {
      if (error == Errors.NONE) {
        if (r.generationIdOrMemberEpoch() >= 0 || !r.memberId().isEmpty()) {
          error =
              g == null
                  ? Errors.UNKNOWN_MEMBER_ID
                  : check(c, r.groupId(), r.memberId(), r.generationIdOrMemberEpoch(), false);
        } else if (g != null && !g.members.isEmpty()) {
          error = Errors.UNKNOWN_MEMBER_ID; // a commit from outside a group that has members
        }
      }
      Map<TopicPartition, Long> positions = new LinkedHashMap<>();
      Map<String, Map<Integer, Errors>> errors = new LinkedHashMap<>();
      for (var t : r.topics()) {
        Map<Integer, Errors> te = errors.computeIfAbsent(t.name(), k -> new LinkedHashMap<>());
        TopicName topic = null;
        try {
          topic = KafkaNames.topic(t.name());
        } catch (ValidationException e) {
          // every partition of it fails below
        }
        for (var p : t.partitions()) {
          if (error != Errors.NONE) {
            te.put(p.partitionIndex(), error);
          } else if (topic == null || !c.caller.covers(topic)) {
            te.put(p.partitionIndex(), Errors.UNKNOWN_TOPIC_OR_PARTITION);
          } else {
            positions.put(new TopicPartition(topic, p.partitionIndex()), p.committedOffset());
            te.put(p.partitionIndex(), Errors.NONE);
          }
        }
      }
      Map<TopicPartition, Long> known =
          written.computeIfAbsent(r.groupId(), k -> new ConcurrentHashMap<>());
      Map<TopicPartition, Long> moves = new LinkedHashMap<>(positions);
      moves.entrySet().removeIf(e -> e.getValue().equals(known.get(e.getKey())));
      if (!moves.isEmpty()) {
        Errors failed = Errors.NONE;
        try {
          if (g != null && !g.members.isEmpty()) {
            seek(r.groupId(), moves); // a member of the current generation, checked above
          } else {
            boxline.admin().seek(r.groupId(), moves);
          }
          known.putAll(moves);
        } catch (BusySubscriptionException e) {
          LOG.log(Level.INFO, "group " + r.groupId() + ": commit refused: " + e.getMessage());
          failed = Errors.INCONSISTENT_GROUP_PROTOCOL;
        } catch (NotFoundException e) {
          failed = Errors.GROUP_ID_NOT_FOUND;
        } catch (ValidationException e) {
          LOG.log(Level.INFO, "group " + r.groupId() + ": commit refused: " + e.getMessage());
          failed = Errors.OFFSET_OUT_OF_RANGE;
        }
        if (failed != Errors.NONE) {
          known.clear();
          for (TopicPartition tp : moves.keySet()) {
            errors.get(KafkaNames.kafkaName(tp.topic()).orElse("")).put(tp.partition(), failed);
          }
        }
      }
      List<OffsetCommitResponseData.OffsetCommitResponseTopic> out = new ArrayList<>();
      errors.forEach(
          (name, parts) -> {
            List<OffsetCommitResponseData.OffsetCommitResponsePartition> ps = new ArrayList<>();
            parts.forEach(
                (p, e) ->
                    ps.add(
                        new OffsetCommitResponseData.OffsetCommitResponsePartition()
                            .setPartitionIndex(p)
                            .setErrorCode(e.code())));
            out.add(
                new OffsetCommitResponseData.OffsetCommitResponseTopic()
                    .setName(name)
                    .setPartitions(ps));
          });
      return new OffsetCommitResponseData().setTopics(out);
    }
  }

  /**
   * Moves the cursors a member of the current generation commits: checked against the subscription
   * and the heads kept here (read again before a refusal), one transaction. The check that no
   * Boxline consumer reads the subscription was made when the members joined.
   */
  private void seek(String groupId, Map<TopicPartition, Long> moves) {
    SubscriptionInfo s =
        catalog
            .subscription(groupId)
            .orElseThrow(
                () -> new NotFoundException("subscription '" + groupId + "' does not exist"));
    Map<io.boxline.spi.PartitionKey, Long> keys = new LinkedHashMap<>();
    for (Map.Entry<TopicPartition, Long> e : moves.entrySet()) {
      TopicName topic = e.getKey().topic();
      int p = e.getKey().partition();
      if (!s.topics().contains(topic)) {
        throw new ValidationException(
            "subscription '" + groupId + "' does not read topic " + topic);
      }
      io.boxline.TopicInfo info =
          catalog.topic(topic).orElseThrow(() -> new NotFoundException("no topic " + topic));
      List<Long> heads = catalog.heads(topic);
      if (p < 0 || p >= heads.size()) {
        throw new ValidationException("topic " + topic + " has no partition " + p);
      }
      long to = e.getValue();
      if (to > heads.get(p)) {
        heads = catalog.freshHeads(topic);
      }
      if (to < 0 || to > heads.get(p)) {
        throw new ValidationException(
            "offset "
                + to
                + " of "
                + topic
                + " partition "
                + p
                + " is past its end, "
                + heads.get(p));
      }
      keys.put(io.boxline.spi.PartitionKey.of(info.id(), p), to);
    }
    store.seekCursors(s.id(), keys);
  }

  /** The committed offset of each partition of a group's subscription, by Kafka topic name. */
  private Map<String, Map<Integer, Long>> committed(String groupId) {
    Map<String, Map<Integer, Long>> out = new LinkedHashMap<>();
    List<PartitionLag> lag;
    try {
      lag = boxline.admin().lag(groupId);
    } catch (NotFoundException e) {
      return out;
    }
    for (PartitionLag l : lag) {
      KafkaNames.kafkaName(l.topic())
          .ifPresent(
              n ->
                  out.computeIfAbsent(n, k -> new LinkedHashMap<>())
                      .put(l.partition(), l.position()));
    }
    return out;
  }

  private OffsetFetchResponseData offsets(KafkaConnection c, OffsetFetchRequestData r, short v) {
    if (v < 8) {
      OffsetFetchResponseData out = new OffsetFetchResponseData();
      if (!mayUse(c, r.groupId())) {
        return out.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code());
      }
      Map<String, Map<Integer, Long>> committed = committed(r.groupId());
      List<OffsetFetchResponseData.OffsetFetchResponseTopic> topics = new ArrayList<>();
      Map<String, List<Integer>> wanted = new LinkedHashMap<>();
      if (r.topics() == null) {
        committed.forEach((n, ps) -> wanted.put(n, new ArrayList<>(ps.keySet())));
      } else {
        r.topics().forEach(t -> wanted.put(t.name(), t.partitionIndexes()));
      }
      wanted.forEach(
          (name, parts) -> {
            List<OffsetFetchResponseData.OffsetFetchResponsePartition> ps = new ArrayList<>();
            for (int p : parts) {
              long o = committed.getOrDefault(name, Map.of()).getOrDefault(p, -1L);
              ps.add(
                  new OffsetFetchResponseData.OffsetFetchResponsePartition()
                      .setPartitionIndex(p)
                      .setCommittedOffset(o)
                      .setCommittedLeaderEpoch(-1)
                      .setMetadata(""));
            }
            topics.add(
                new OffsetFetchResponseData.OffsetFetchResponseTopic()
                    .setName(name)
                    .setPartitions(ps));
          });
      return out.setTopics(topics);
    }
    List<OffsetFetchResponseData.OffsetFetchResponseGroup> groupsOut = new ArrayList<>();
    for (var rg : r.groups()) {
      OffsetFetchResponseData.OffsetFetchResponseGroup og =
          new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(rg.groupId());
      if (!mayUse(c, rg.groupId())) {
        groupsOut.add(og.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()));
        continue;
      }
      Map<String, Map<Integer, Long>> committed = committed(rg.groupId());
      Map<String, List<Integer>> wanted = new LinkedHashMap<>();
      if (rg.topics() == null) {
        committed.forEach((n, ps) -> wanted.put(n, new ArrayList<>(ps.keySet())));
      } else {
        rg.topics().forEach(t -> wanted.put(t.name(), t.partitionIndexes()));
      }
      List<OffsetFetchResponseData.OffsetFetchResponseTopics> topics = new ArrayList<>();
      wanted.forEach(
          (name, parts) -> {
            List<OffsetFetchResponseData.OffsetFetchResponsePartitions> ps = new ArrayList<>();
            for (int p : parts) {
              long o = committed.getOrDefault(name, Map.of()).getOrDefault(p, -1L);
              ps.add(
                  new OffsetFetchResponseData.OffsetFetchResponsePartitions()
                      .setPartitionIndex(p)
                      .setCommittedOffset(o)
                      .setCommittedLeaderEpoch(-1)
                      .setMetadata(""));
            }
            topics.add(
                new OffsetFetchResponseData.OffsetFetchResponseTopics()
                    .setName(name)
                    .setPartitions(ps));
          });
      groupsOut.add(og.setTopics(topics));
    }
    return new OffsetFetchResponseData().setGroups(groupsOut);
  }

  // ---------------------------------------------------------------------------- describe, list

  private DescribeGroupsResponseData describe(KafkaConnection c, DescribeGroupsRequestData r) {
    List<DescribeGroupsResponseData.DescribedGroup> out = new ArrayList<>();
    for (String id : r.groups()) {
      DescribeGroupsResponseData.DescribedGroup d =
          new DescribeGroupsResponseData.DescribedGroup()
              .setGroupId(id)
              .setProtocolType("")
              .setProtocolData("");
      if (!mayUse(c, id)) {
        out.add(d.setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()).setGroupState(""));
        continue;
      }
      if (!cluster.coordinates(id)) {
        out.add(d.setErrorCode(Errors.NOT_COORDINATOR.code()).setGroupState(""));
        continue;
      }
      Group g = groups.get(id);
      if (g == null) {
        boolean exists = catalog.subscription(id).isPresent();
        out.add(
            d.setGroupState(exists ? State.EMPTY.kafka : "Dead")
                .setProtocolType(exists ? "consumer" : ""));
        continue;
      }
      synchronized (g) {
        List<DescribeGroupsResponseData.DescribedGroupMember> members = new ArrayList<>();
        for (Member m : g.members.values()) {
          members.add(
              new DescribeGroupsResponseData.DescribedGroupMember()
                  .setMemberId(m.id)
                  .setGroupInstanceId(m.instanceId)
                  .setClientId(m.clientId == null ? "" : m.clientId)
                  .setClientHost(m.host)
                  .setMemberMetadata(g.protocol == null ? new byte[0] : m.metadata(g.protocol))
                  .setMemberAssignment(g.state == State.STABLE ? m.assignment : new byte[0]));
        }
        out.add(
            d.setGroupState(g.state.kafka)
                .setProtocolType(g.protocolType == null ? "consumer" : g.protocolType)
                .setProtocolData(g.protocol == null ? "" : g.protocol)
                .setMembers(members));
      }
    }
    return new DescribeGroupsResponseData().setGroups(out);
  }

  /** Every subscription the caller may see, as a group in its state here (Empty when none). */
  private ListGroupsResponseData list(KafkaConnection c, ListGroupsRequestData r) {
    List<ListGroupsResponseData.ListedGroup> out = new ArrayList<>();
    for (SubscriptionInfo s : boxline.admin().subscriptions()) {
      if (!c.caller.covers(s) || !cluster.lists(s.name())) {
        continue;
      }
      Group g = groups.get(s.name());
      String state;
      if (g == null) {
        state = State.EMPTY.kafka;
      } else {
        synchronized (g) {
          state = g.state.kafka;
        }
      }
      if (r.statesFilter() != null
          && !r.statesFilter().isEmpty()
          && !r.statesFilter().contains(state)) {
        continue;
      }
      out.add(
          new ListGroupsResponseData.ListedGroup()
              .setGroupId(s.name())
              .setProtocolType("consumer")
              .setGroupState(state));
    }
    return new ListGroupsResponseData().setGroups(out);
  }
}
