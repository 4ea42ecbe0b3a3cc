package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicState;
import io.boxline.ValidationException;
import io.boxline.server.internal.Auth.Action;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Answers Kafka requests from Boxline: which APIs and versions the listener speaks, topics and
 * their partitions (Metadata), offsets (ListOffsets), producer ids, SASL/PLAIN, and hands Produce,
 * Fetch and the group APIs to {@link KafkaProduce}, {@link KafkaFetch} and {@link KafkaGroups}. The
 * mapping: a Kafka offset is a Boxline sequence less one, the high watermark the partition's head,
 * the log-start offset the first sequence retention kept less one.
 */
final class KafkaApis {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.kafka");

  static final String CLUSTER_ID = "boxline";

  /**
   * The newest version of each API served: those after it name topics by id (Produce 13, Fetch 13,
   * OffsetCommit 10, OffsetFetch 10), which Boxline's topics do not carry.
   */
  private static final Map<ApiKeys, Short> MAX = new EnumMap<>(ApiKeys.class);

  static {
    MAX.put(ApiKeys.PRODUCE, (short) 12);
    MAX.put(ApiKeys.FETCH, (short) 12);
    MAX.put(ApiKeys.LIST_OFFSETS, (short) 9);
    MAX.put(ApiKeys.METADATA, (short) 12);
    MAX.put(ApiKeys.OFFSET_COMMIT, (short) 9);
    MAX.put(ApiKeys.OFFSET_FETCH, (short) 9);
    MAX.put(ApiKeys.FIND_COORDINATOR, (short) 6);
    MAX.put(ApiKeys.JOIN_GROUP, (short) 9);
    MAX.put(ApiKeys.HEARTBEAT, (short) 4);
    MAX.put(ApiKeys.LEAVE_GROUP, (short) 5);
    MAX.put(ApiKeys.SYNC_GROUP, (short) 5);
    MAX.put(ApiKeys.DESCRIBE_GROUPS, (short) 5);
    MAX.put(ApiKeys.LIST_GROUPS, (short) 4);
    MAX.put(ApiKeys.SASL_HANDSHAKE, (short) 1);
    MAX.put(ApiKeys.API_VERSIONS, (short) 4);
    MAX.put(ApiKeys.INIT_PRODUCER_ID, (short) 5);
    MAX.put(ApiKeys.SASL_AUTHENTICATE, (short) 2);
  }

  /** The oldest version served, where it is newer than the protocol's oldest. */
  private static short min(ApiKeys key) {
    return key == ApiKeys.SASL_HANDSHAKE ? 1 : key.oldestVersion();
  }

  static boolean supports(ApiKeys key, short version) {
    Short max = MAX.get(key);
    return max != null && version >= min(key) && version <= Math.min(max, key.latestVersion());
  }

  /**
   * What ApiVersions answers: every API served, with its versions; SaslHandshake as Kafka's brokers
   * advertise it, 0 to 1, though only 1 is served. librdkafka (and so kcat and confluent-kafka)
   * authenticates with SASL only when the advertised SaslHandshake versions include 0, then uses
   * version 1 and SaslAuthenticate, as every client that knows SaslAuthenticate does; a client that
   * sends version 0 gets UNSUPPORTED_VERSION.
   */
  static ApiVersionsResponseData apiVersions() {
    ApiVersionsResponseData.ApiVersionCollection keys =
        new ApiVersionsResponseData.ApiVersionCollection();
    MAX.forEach(
        (key, max) ->
            keys.add(
                new ApiVersionsResponseData.ApiVersion()
                    .setApiKey(key.id)
                    .setMinVersion(key == ApiKeys.SASL_HANDSHAKE ? key.oldestVersion() : min(key))
                    .setMaxVersion((short) Math.min(max, key.latestVersion()))));
    return new ApiVersionsResponseData().setApiKeys(keys);
  }

  /** A request that does not parse: the connection closes. */
  static final class Malformed extends RuntimeException {
    Malformed(String message) {
      super(message);
    }
  }

  private final Boxline boxline;
  private final KafkaGroups groups;
  private final KafkaFetch fetch;
  private final KafkaProduce produce;
  private final KafkaCluster cluster;
  private final KafkaCatalog catalog;
  private final SecureRandom random = new SecureRandom();

  KafkaApis(
      Boxline boxline,
      io.boxline.spi.CursorStore store,
      KafkaCatalog catalog,
      KafkaGroups groups,
      KafkaCluster cluster,
      GroupCommit commits,
      java.util.concurrent.Executor executor) {
    this.boxline = boxline;
    this.groups = groups;
    this.cluster = cluster;
    this.catalog = catalog;
    this.fetch = new KafkaFetch(boxline, store, catalog, this, executor);
    this.produce = new KafkaProduce(commits, this);
  }

  int groupMembers() {
    return groups.members();
  }

  void close() {
    fetch.wakeAll();
    groups.close();
  }

  /** The answer to one request; null inside for none (a produce with acks=0). */
  CompletableFuture<ApiMessage> handle(KafkaConnection c, RequestHeader header, ByteBuffer body) {
    ApiKeys key = header.apiKey();
    short version = header.apiVersion();
    AbstractRequest request;
    try {
      request = AbstractRequest.parseRequest(key, version, new ByteBufferAccessor(body)).request;
    } catch (RuntimeException e) {
      throw new Malformed(String.valueOf(e.getMessage()));
    }
    if (!supports(key, version)) {
      return done(
          request
              .getErrorResponse(
                  0,
                  Errors.UNSUPPORTED_VERSION.exception(
                      "Boxline's Kafka listener does not serve "
                          + key
                          + " v"
                          + version
                          + (MAX.containsKey(key) ? "" : " (nor any version of it)")))
              .data());
    }
    try {
      CompletableFuture<ApiMessage> answer =
          switch (key) {
            case API_VERSIONS -> done(apiVersions());
            case SASL_HANDSHAKE -> done(handshake(c, (SaslHandshakeRequestData) request.data()));
            case SASL_AUTHENTICATE ->
                done(authenticate(c, (SaslAuthenticateRequestData) request.data()));
            case METADATA -> done(metadata(c, (MetadataRequestData) request.data(), version));
            case FIND_COORDINATOR ->
                done(findCoordinator(c, (FindCoordinatorRequestData) request.data(), version));
            case INIT_PRODUCER_ID ->
                done(initProducerId((InitProducerIdRequestData) request.data()));
            case LIST_OFFSETS -> done(listOffsets(c, (ListOffsetsRequestData) request.data()));
            case PRODUCE -> produce.handle(c, request);
            case FETCH -> fetch.handle(c, request);
            default -> groups.handle(c, key, request);
          };
      return answer.exceptionally(e -> failed(request, e));
    } catch (RuntimeException e) {
      return done(failed(request, e));
    }
  }

  private static ApiMessage failed(AbstractRequest request, Throwable e) {
    Throwable cause =
        e instanceof java.util.concurrent.CompletionException && e.getCause() != null
            ? e.getCause()
            : e;
    if (cause instanceof org.apache.kafka.common.errors.ApiException k) {
      return request.getErrorResponse(0, k).data();
    }
    if (cause instanceof ApiException refused && (refused.status == 401 || refused.status == 403)) {
      Errors denied =
          switch (request.apiKey()) {
            case JOIN_GROUP,
                SYNC_GROUP,
                HEARTBEAT,
                LEAVE_GROUP,
                OFFSET_COMMIT,
                OFFSET_FETCH,
                DESCRIBE_GROUPS,
                LIST_GROUPS ->
                Errors.GROUP_AUTHORIZATION_FAILED;
            default -> Errors.TOPIC_AUTHORIZATION_FAILED;
          };
      return request.getErrorResponse(0, denied.exception(refused.getMessage())).data();
    }
    if (cause instanceof ValidationException invalid) {
      return request
          .getErrorResponse(0, Errors.INVALID_REQUEST.exception(invalid.getMessage()))
          .data();
    }
    LOG.log(Level.WARNING, "a Kafka " + request.apiKey() + " request failed", cause);
    return request
        .getErrorResponse(
            0, Errors.UNKNOWN_SERVER_ERROR.exception(String.valueOf(cause.getMessage())))
        .data();
  }

  static CompletableFuture<ApiMessage> done(ApiMessage m) {
    return CompletableFuture.completedFuture(m);
  }

  // ----------------------------------------------------------------------------------- SASL

  private static SaslHandshakeResponseData handshake(
      KafkaConnection c, SaslHandshakeRequestData r) {
    SaslHandshakeResponseData out = new SaslHandshakeResponseData().setMechanisms(List.of("PLAIN"));
    if (!"PLAIN".equals(r.mechanism())) {
      return out.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code());
    }
    c.handshaken = true;
    return out;
  }

  private static SaslAuthenticateResponseData authenticate(
      KafkaConnection c, SaslAuthenticateRequestData r) {
    if (!c.handshaken) {
      return new SaslAuthenticateResponseData()
          .setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
          .setErrorMessage("send a SaslHandshake for PLAIN first");
    }
    // PLAIN: [authorization id] NUL user NUL password (RFC 4616).
    String[] parts = new String(r.authBytes(), StandardCharsets.UTF_8).split("\u0000", -1);
    String problem =
        parts.length != 3
            ? "the PLAIN message must be [authzid] NUL user NUL password"
            : c.authenticate(parts[1], parts[2]);
    if (problem != null) {
      LOG.log(Level.INFO, "a Kafka client at " + c.peer() + " failed to authenticate: " + problem);
      return new SaslAuthenticateResponseData()
          .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
          .setErrorMessage("authentication failed: " + problem);
    }
    return new SaslAuthenticateResponseData().setAuthBytes(new byte[0]);
  }

  // ------------------------------------------------------------------------------- metadata

  /** The Boxline topic of a Kafka name the caller may see, or the Kafka error to answer. */
  sealed interface Resolved permits Found, Refused {}

  record Found(TopicInfo topic) implements Resolved {}

  record Refused(Errors error, String message) implements Resolved {}

  Resolved resolve(Auth.Caller caller, String kafkaName) {
    TopicName name;
    try {
      name = KafkaNames.topic(kafkaName);
    } catch (ValidationException e) {
      return new Refused(Errors.INVALID_TOPIC_EXCEPTION, e.getMessage());
    }
    if (!caller.covers(name)) {
      // As for a topic that does not exist to this tenant: nothing tells it apart.
      return new Refused(Errors.TOPIC_AUTHORIZATION_FAILED, "not authorized for " + kafkaName);
    }
    Optional<TopicInfo> t = catalog.topic(name);
    return t.<Resolved>map(Found::new)
        .orElseGet(
            () ->
                new Refused(
                    Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    "Boxline has no topic " + name + "; create it with the admin API or the CLI"));
  }

  private MetadataResponseData metadata(KafkaConnection c, MetadataRequestData r, short version) {
    MetadataResponseData.MetadataResponseBrokerCollection brokers =
        new MetadataResponseData.MetadataResponseBrokerCollection();
    for (KafkaCluster.Node n : cluster.nodes()) {
      brokers.add(
          new MetadataResponseData.MetadataResponseBroker()
              .setNodeId(n.id())
              .setHost(n.host())
              .setPort(n.port()));
    }
    int self = cluster.nodeId();
    MetadataResponseData.MetadataResponseTopicCollection topics =
        new MetadataResponseData.MetadataResponseTopicCollection();
    if (r.topics() == null || (version == 0 && r.topics().isEmpty())) {
      for (TopicInfo t : boxline.admin().topics()) {
        Optional<String> kafkaName = KafkaNames.kafkaName(t.name());
        if (kafkaName.isPresent() && c.caller.covers(t.name())) {
          topics.add(topic(kafkaName.get(), t, self));
        }
      }
    } else {
      for (MetadataRequestData.MetadataRequestTopic rt : r.topics()) {
        Resolved found =
            rt.name() == null
                ? new Refused(Errors.UNKNOWN_TOPIC_ID, null)
                : resolve(c.caller, rt.name());
        if (found instanceof Found f) {
          topics.add(topic(rt.name(), f.topic(), self));
        } else {
          topics.add(
              new MetadataResponseData.MetadataResponseTopic()
                  .setName(rt.name())
                  .setErrorCode(((Refused) found).error().code()));
        }
      }
    }
    return new MetadataResponseData()
        .setBrokers(brokers)
        .setClusterId(CLUSTER_ID)
        .setControllerId(self)
        .setTopics(topics);
  }

  /**
   * A topic's partitions, all led by the instance asked: every instance reads and writes every
   * partition in the one database.
   */
  private static MetadataResponseData.MetadataResponseTopic topic(
      String kafkaName, TopicInfo t, int leader) {
    List<MetadataResponseData.MetadataResponsePartition> partitions = new ArrayList<>();
    for (int p = 0; p < t.partitions(); p++) {
      partitions.add(
          new MetadataResponseData.MetadataResponsePartition()
              .setPartitionIndex(p)
              .setLeaderId(leader)
              .setReplicaNodes(List.of(leader))
              .setIsrNodes(List.of(leader)));
    }
    return new MetadataResponseData.MetadataResponseTopic()
        .setName(kafkaName)
        .setTopicId(Uuid.ZERO_UUID)
        .setPartitions(partitions);
  }

  /** The instance that coordinates each group asked for (see {@link KafkaCluster}). */
  private FindCoordinatorResponseData findCoordinator(
      KafkaConnection c, FindCoordinatorRequestData r, short version) {
    boolean transactions = r.keyType() == 1;
    List<String> keys = version < 4 ? List.of(r.key()) : r.coordinatorKeys();
    List<FindCoordinatorResponseData.Coordinator> out = new ArrayList<>();
    for (String key : keys) {
      FindCoordinatorResponseData.Coordinator co =
          new FindCoordinatorResponseData.Coordinator()
              .setKey(key)
              .setNodeId(-1)
              .setHost("")
              .setPort(-1);
      Optional<KafkaCluster.Node> at = transactions ? Optional.empty() : cluster.coordinator(key);
      if (transactions) {
        co.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())
            .setErrorMessage(
                "Boxline does not offer Kafka transactions: the events of one Produce request"
                    + " commit in one database transaction; use an idempotent producer without"
                    + " transactional.id");
      } else if (at.isEmpty()) {
        co.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code())
            .setErrorMessage("the group's coordinating instance is starting; ask again");
      } else {
        co.setNodeId(at.get().id()).setHost(at.get().host()).setPort(at.get().port());
      }
      out.add(co);
    }
    if (version >= 4) {
      return new FindCoordinatorResponseData().setCoordinators(out);
    }
    FindCoordinatorResponseData.Coordinator one = out.get(0);
    return new FindCoordinatorResponseData()
        .setErrorCode(one.errorCode())
        .setErrorMessage(one.errorMessage())
        .setNodeId(one.nodeId())
        .setHost(one.host())
        .setPort(one.port());
  }

  /**
   * An idempotent producer's id: random, so that instances and restarts never hand out the same
   * one; its sequence numbers become idempotency keys ({@link KafkaProduce}).
   */
  private InitProducerIdResponseData initProducerId(InitProducerIdRequestData r) {
    if (r.transactionalId() != null) {
      return new InitProducerIdResponseData()
          .setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())
          .setProducerId(-1)
          .setProducerEpoch((short) -1);
    }
    return new InitProducerIdResponseData()
        .setProducerId(random.nextLong() & Long.MAX_VALUE)
        .setProducerEpoch((short) 0);
  }

  // -------------------------------------------------------------------------------- offsets

  /** The first offset retention kept (the first sequence less one), or the head when empty. */
  long logStartOffset(TopicName topic, int partition, long head) {
    List<Event> first = boxline.admin().events(EventQuery.of(topic, partition).limit(1));
    return first.isEmpty() ? head : first.get(0).sequence() - 1;
  }

  private ListOffsetsResponseData listOffsets(KafkaConnection c, ListOffsetsRequestData r) {
    c.caller.require(Action.CONSUME);
    List<ListOffsetsResponseData.ListOffsetsTopicResponse> topics = new ArrayList<>();
    for (ListOffsetsRequestData.ListOffsetsTopic rt : r.topics()) {
      List<ListOffsetsResponseData.ListOffsetsPartitionResponse> partitions = new ArrayList<>();
      Resolved found = resolve(c.caller, rt.name());
      TopicState state =
          found instanceof Found f ? boxline.admin().topicState(f.topic().name()) : null;
      for (ListOffsetsRequestData.ListOffsetsPartition rp : rt.partitions()) {
        ListOffsetsResponseData.ListOffsetsPartitionResponse out =
            new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                .setPartitionIndex(rp.partitionIndex())
                .setTimestamp(-1)
                .setOffset(-1);
        if (state == null) {
          out.setErrorCode(((Refused) found).error().code());
        } else if (rp.partitionIndex() < 0 || rp.partitionIndex() >= state.heads().size()) {
          out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        } else {
          offset(state, rp.partitionIndex(), rp.timestamp(), out);
        }
        partitions.add(out);
      }
      topics.add(
          new ListOffsetsResponseData.ListOffsetsTopicResponse()
              .setName(rt.name())
              .setPartitions(partitions));
    }
    return new ListOffsetsResponseData().setTopics(topics);
  }

  private void offset(
      TopicState state,
      int partition,
      long timestamp,
      ListOffsetsResponseData.ListOffsetsPartitionResponse out) {
    TopicName topic = state.topic().name();
    long head = state.heads().get(partition);
    if (timestamp == -1 /* latest */ || timestamp == -4 /* latest tiered */ || timestamp == -5) {
      out.setOffset(head);
    } else if (timestamp == -2 /* earliest */ || timestamp == -6) {
      out.setOffset(logStartOffset(topic, partition, head));
    } else if (timestamp == -3 /* max timestamp */) {
      Optional<Event> last =
          head == 0 ? Optional.empty() : boxline.admin().event(topic, partition, head);
      last.ifPresent(e -> out.setOffset(head - 1).setTimestamp(e.createdAt().toEpochMilli()));
    } else if (timestamp >= 0) {
      long before =
          TimeSeek.before(boxline.admin(), topic, partition, Instant.ofEpochMilli(timestamp));
      List<Event> first =
          boxline.admin().events(EventQuery.of(topic, partition).after(before).limit(1));
      if (!first.isEmpty()) {
        out.setOffset(first.get(0).sequence() - 1)
            .setTimestamp(first.get(0).createdAt().toEpochMilli());
      }
    } else {
      out.setErrorCode(Errors.INVALID_REQUEST.code());
    }
  }
}
