package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;

/**
 * Generated Kafka requests of one tenant aimed at another's topics and groups, each checked as it
 * is answered: nothing of the other tenant is named, read, written, joined or committed. Topic and
 * group names are drawn from the victim's real ones, near misses and junk; partitions and offsets
 * at random.
 */
final class KafkaAttacks {
  private final Random random;
  private final String victim; // "a"
  private final List<String> victimTopics;
  private final List<String> victimGroups;
  private final List<String> ownTopics;
  private int checks;

  KafkaAttacks(
      long seed,
      String victim,
      List<String> victimTopics,
      List<String> victimGroups,
      List<String> ownTopics) {
    this.random = new Random(seed);
    this.victim = victim;
    this.victimTopics = victimTopics;
    this.victimGroups = victimGroups;
    this.ownTopics = ownTopics;
  }

  int checks() {
    return checks;
  }

  private <T> T pick(List<T> from) {
    return from.get(random.nextInt(from.size()));
  }

  private String topic() {
    return switch (random.nextInt(5)) {
      case 0, 1 -> pick(victimTopics);
      case 2 -> victim + "." + UUID.randomUUID().toString().substring(0, 6);
      case 3 -> pick(ownTopics);
      default ->
          pick(
              List.of(
                  victim,
                  victim + ".",
                  "." + victim,
                  victim + "..orders",
                  "*",
                  victim + ".orders.x"));
    };
  }

  private String group() {
    return switch (random.nextInt(4)) {
      case 0, 1 -> pick(victimGroups);
      case 2 -> victim + "/" + UUID.randomUUID().toString().substring(0, 6);
      default -> pick(List.of(victim, victim + "/", "*", victim + "/kafka-group/x", ""));
    };
  }

  private boolean victims(String topic) {
    return topic != null && (topic.startsWith(victim + ".") || topic.equals(victim));
  }

  private boolean victimsGroup(String group) {
    return group != null && (group.startsWith(victim + "/") || victimGroups.contains(group));
  }

  /** Sends one generated request on {@code w} and checks its answer. */
  void once(KafkaWire w) throws Exception {
    switch (random.nextInt(11)) {
      case 0 -> {
        List<String> names = new ArrayList<>();
        for (int i = random.nextInt(3); i >= 0; i--) {
          names.add(topic());
        }
        MetadataResponse r =
            w.send(
                new MetadataRequest.Builder(
                    random.nextBoolean()
                        ? new MetadataRequestData().setTopics(null)
                        : MetadataRequest.Builder.forTopicNames(names, false)
                            .build((short) 12)
                            .data()),
                (short) 12);
        r.data()
            .topics()
            .forEach(
                t -> {
                  if (victims(t.name())) {
                    assertThat(t.errorCode()).as("metadata of %s", t.name()).isNotZero();
                    assertThat(t.partitions()).isEmpty();
                  }
                });
      }
      case 1 -> {
        String t = topic();
        int p = random.nextInt(4) - 1;
        FetchResponse r =
            w.send(
                FetchRequest.Builder.forConsumer(
                    (short) 12,
                    0,
                    1,
                    Map.of(
                        new TopicPartition(t, Math.max(0, p)),
                        new FetchRequest.PartitionData(
                            Uuid.ZERO_UUID, random.nextInt(5), -1, 1 << 20, Optional.empty()))),
                (short) 12);
        r.data()
            .responses()
            .forEach(
                tr ->
                    tr.partitions()
                        .forEach(
                            pd -> {
                              if (victims(tr.topic())) {
                                assertThat(pd.errorCode())
                                    .as("fetch of %s", tr.topic())
                                    .isNotZero();
                                assertThat(pd.records() == null ? 0 : pd.records().sizeInBytes())
                                    .isZero();
                              }
                            }));
      }
      case 2 -> {
        String t = topic();
        ListOffsetsResponse r =
            w.send(
                ListOffsetsRequest.Builder.forConsumer(
                        false, org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)
                    .setTargetTimes(
                        List.of(
                            new ListOffsetsRequestData.ListOffsetsTopic()
                                .setName(t)
                                .setPartitions(
                                    List.of(
                                        new ListOffsetsRequestData.ListOffsetsPartition()
                                            .setPartitionIndex(random.nextInt(3))
                                            .setTimestamp(pick(List.of(-1L, -2L, 0L, -3L))))))),
                (short) 9);
        r.data()
            .topics()
            .forEach(
                tr ->
                    tr.partitions()
                        .forEach(
                            pr -> {
                              if (victims(tr.name())) {
                                assertThat(pr.errorCode())
                                    .as("offsets of %s", tr.name())
                                    .isNotZero();
                                assertThat(pr.offset()).isEqualTo(-1);
                              }
                            }));
      }
      case 3 -> {
        String t = topic();
        ProduceRequestData.TopicProduceDataCollection data =
            new ProduceRequestData.TopicProduceDataCollection();
        data.add(
            new ProduceRequestData.TopicProduceData()
                .setName(t)
                .setPartitionData(
                    List.of(
                        new ProduceRequestData.PartitionProduceData()
                            .setIndex(random.nextInt(3))
                            .setRecords(
                                MemoryRecords.withRecords(
                                    Compression.NONE,
                                    new SimpleRecord(
                                        "k".getBytes(StandardCharsets.UTF_8),
                                        "attack".getBytes(StandardCharsets.UTF_8)))))));
        ProduceResponse r =
            w.send(
                new ProduceRequest.Builder(
                    (short) 3,
                    (short) 12,
                    new ProduceRequestData()
                        .setAcks((short) -1)
                        .setTimeoutMs(5000)
                        .setTopicData(data)),
                (short) 9);
        r.data()
            .responses()
            .forEach(
                tr ->
                    tr.partitionResponses()
                        .forEach(
                            pr -> {
                              if (victims(tr.name())) {
                                assertThat(pr.errorCode())
                                    .as("produce to %s", tr.name())
                                    .isNotZero();
                              }
                            }));
      }
      case 4 -> {
        String g = group();
        OffsetCommitResponse r =
            w.send(
                OffsetCommitRequest.Builder.forTopicNames(
                    new OffsetCommitRequestData()
                        .setGroupId(g)
                        .setGenerationIdOrMemberEpoch(random.nextInt(3) - 1)
                        .setMemberId(random.nextBoolean() ? "" : "m-" + random.nextInt(3))
                        .setTopics(
                            List.of(
                                new OffsetCommitRequestData.OffsetCommitRequestTopic()
                                    .setName(topic())
                                    .setPartitions(
                                        List.of(
                                            new OffsetCommitRequestData
                                                    .OffsetCommitRequestPartition()
                                                .setPartitionIndex(random.nextInt(3))
                                                .setCommittedOffset(random.nextInt(4))))))),
                (short) 9);
        if (victimsGroup(g)) {
          r.data()
              .topics()
              .forEach(
                  t ->
                      t.partitions()
                          .forEach(
                              p -> assertThat(p.errorCode()).as("commit to %s", g).isNotZero()));
        }
      }
      case 5 -> {
        String g = group();
        OffsetFetchResponse r =
            w.send(
                OffsetFetchRequest.Builder.forTopicNames(
                    new OffsetFetchRequestData()
                        .setGroups(
                            List.of(
                                new OffsetFetchRequestData.OffsetFetchRequestGroup()
                                    .setGroupId(g)
                                    .setTopics(
                                        random.nextBoolean()
                                            ? null
                                            : List.of(
                                                new OffsetFetchRequestData
                                                        .OffsetFetchRequestTopics()
                                                    .setName(topic())
                                                    .setPartitionIndexes(List.of(0, 1, 2)))))),
                    false),
                (short) 9);
        if (victimsGroup(g)) {
          assertThat(
                  r.data().errorCode() != 0
                      || r.data().groups().stream().allMatch(rg -> rg.errorCode() != 0))
              .as("offsets of %s refused", g)
              .isTrue();
          r.data()
              .groups()
              .forEach(
                  rg ->
                      rg.topics()
                          .forEach(
                              t ->
                                  t.partitions()
                                      .forEach(
                                          p -> assertThat(p.committedOffset()).isEqualTo(-1))));
        }
      }
      case 6 -> {
        String g = group();
        if (!victimsGroup(g)) {
          return; // joining a group of its own may wait for a rebalance: not the point here
        }
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
            new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(
            new JoinGroupRequestData.JoinGroupRequestProtocol()
                .setName("range")
                .setMetadata(new byte[0]));
        JoinGroupResponse r =
            w.send(
                new JoinGroupRequest.Builder(
                    new JoinGroupRequestData()
                        .setGroupId(g)
                        .setMemberId(random.nextBoolean() ? "" : "m-1")
                        .setSessionTimeoutMs(10_000)
                        .setRebalanceTimeoutMs(10_000)
                        .setProtocolType("consumer")
                        .setProtocols(protocols)),
                random.nextBoolean() ? (short) 3 : (short) 9);
        assertThat(r.error())
            .as("join of %s", g)
            .isNotEqualTo(Errors.NONE)
            .isNotEqualTo(Errors.MEMBER_ID_REQUIRED);
      }
      case 7 -> {
        String g = group();
        DescribeGroupsResponse r =
            w.send(
                new DescribeGroupsRequest.Builder(
                    new DescribeGroupsRequestData().setGroups(List.of(g))),
                (short) 5);
        r.data()
            .groups()
            .forEach(
                d -> {
                  if (victimsGroup(d.groupId())) {
                    assertThat(d.errorCode()).as("describe of %s", g).isNotZero();
                    assertThat(d.members()).isEmpty();
                  }
                });
      }
      case 8 -> {
        ListGroupsResponse r =
            w.send(new ListGroupsRequest.Builder(new ListGroupsRequestData()), (short) 4);
        r.data()
            .groups()
            .forEach(
                l -> assertThat(victimsGroup(l.groupId())).as("listed %s", l.groupId()).isFalse());
      }
      case 9 -> {
        String g = group();
        HeartbeatResponse r =
            w.send(
                new HeartbeatRequest.Builder(
                    new HeartbeatRequestData()
                        .setGroupId(g)
                        .setGenerationId(random.nextInt(4))
                        .setMemberId("m-" + random.nextInt(2))),
                (short) 4);
        if (victimsGroup(g)) {
          assertThat(r.error()).isNotEqualTo(Errors.NONE);
        }
      }
      default -> {
        String g = group();
        if (random.nextBoolean()) {
          SyncGroupResponse r =
              w.send(
                  new SyncGroupRequest.Builder(
                      new SyncGroupRequestData()
                          .setGroupId(g)
                          .setGenerationId(random.nextInt(4))
                          .setMemberId("m-1")
                          .setAssignments(List.of())),
                  (short) 5);
          if (victimsGroup(g)) {
            assertThat(r.error()).isNotEqualTo(Errors.NONE);
          }
        } else {
          LeaveGroupResponse r =
              w.send(
                  new LeaveGroupRequest.Builder(
                      g, List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId("m-1"))),
                  (short) 5);
          if (victimsGroup(g)) {
            assertThat(r.data().members()).allSatisfy(m -> assertThat(m.errorCode()).isNotZero());
            assertThat(r.error()).isNotEqualTo(Errors.NONE);
          }
        }
      }
    }
    checks++;
  }
}
